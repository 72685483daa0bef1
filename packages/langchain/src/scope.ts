/**
 * The scope the retriever, the history and the tools act in (the agent, the end user the agent serves, and for
 * the history the conversation), checked by the memory's adapter kit, as every adapter checks it.
 */
import { checkScope as checkNamedScope, type EngramScope } from '@engram/memory/adapter-kit';

export {
  checkOptionKeys as checkOptions,
  type EngramScope,
  invalidInput,
  memoryScope,
  SCOPE_KEYS,
} from '@engram/memory/adapter-kit';

/** The scope an options object names; its keys were checked with `checkOptions` first. */
export function checkScope(value: unknown, name: string): EngramScope {
  return checkNamedScope(value, name, null);
}
