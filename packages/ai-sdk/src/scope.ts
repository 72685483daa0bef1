/**
 * The scope of what the adapter does for a call: the agent, the end user the agent serves in that call, and the
 * conversation (session), checked by the memory's adapter kit, as every adapter checks it.
 */
export {
  checkOptionKeys as checkKeys,
  checkScope,
  type EngramScope,
  invalidInput,
  memoryScope,
} from '@engram/memory/adapter-kit';
