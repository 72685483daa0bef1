import { engramErrorCode } from '@engram/contracts/errors';
import { correctMemory } from '../corrections.js';
import {
  attachable,
  embedBounded,
  type ToolCallResult,
  ToolFailure,
  type ToolHandlerFunction,
  userScope,
} from './handlers.js';
import { clip } from './render.js';

function failure(tool: 'memory_update' | 'memory_forget', error: unknown): ToolFailure {
  const code = engramErrorCode(error);
  return new ToolFailure(
    `${tool} failed: memory store error${code === undefined ? '' : ` (${clip(code, 64)})`}.`,
  );
}

/** `memory_update`: the corrected text supersedes the memory; the old version stays in its history. */
export const update: ToolHandlerFunction<'memory_update'> = async (
  deps,
  args,
  ctx,
): Promise<ToolCallResult> => {
  const { store } = deps;
  // The new version is embedded before the answer, as a remembered fact is: a search by meaning finds it at once.
  const [vector] = (await embedBounded(deps, [args.content.trim()], ctx.signal)) ?? [];
  let result: Awaited<ReturnType<typeof correctMemory>>;
  try {
    result = await correctMemory(store, ctx.agentId, args.id, args.content, {
      ...userScope(ctx),
      actor: 'agent',
      ...(args.reason === undefined ? {} : { reason: args.reason }),
      ...(vector !== undefined && attachable(deps, vector) ? { vector } : {}),
    });
  } catch (error) {
    if (engramErrorCode(error) === 'ENGRAM_RETRIEVAL_INVALID_INPUT') {
      return { ok: false, text: 'Invalid arguments for memory_update: "id" or "content" is invalid.' };
    }
    if (engramErrorCode(error) === 'ENGRAM_STORE_INVALID_INPUT') {
      return { ok: false, text: 'Invalid arguments for memory_update: "content" is not storable.' };
    }
    if (engramErrorCode(error) === 'ENGRAM_STORE_REVISION_CONFLICT') {
      return {
        ok: false,
        text: 'memory_update failed: the memory changed concurrently; search and try again.',
      };
    }
    throw failure('memory_update', error);
  }
  if (result === null) {
    return { ok: false, text: 'memory_update: no current memory with that id (search for its current id).' };
  }
  return {
    ok: true,
    text: `Updated: ${result.replacement.kind} ${result.replacement.id} is current; ${result.superseded.id} is superseded and kept in its history.`,
    data: { id: result.replacement.id, action: 'updated' },
  };
};

/** `memory_forget`: forgets the memory and the versions it replaced, with a tombstone. */
export const forget: ToolHandlerFunction<'memory_forget'> = async (
  { store },
  args,
  ctx,
): Promise<ToolCallResult> => {
  try {
    const { forgotten, mode } = await store.forgetMemory(ctx.agentId, args.id, {
      ...userScope(ctx),
      actor: 'agent',
      ...(args.reason === undefined ? {} : { reason: args.reason }),
    });
    const earlier = forgotten.length - 1;
    const versions = earlier > 0 ? ` and ${earlier} earlier version${earlier === 1 ? '' : 's'}` : '';
    const what =
      mode === 'erase'
        ? 'Its content is erased; a tombstone records when and why.'
        : 'It is no longer searched; the store keeps its content (forget setting: keep).';
    return { ok: true, text: `Forgot memory ${args.id}${versions}. ${what}` };
  } catch (error) {
    if (engramErrorCode(error) === 'ENGRAM_STORE_NOT_FOUND') {
      return { ok: false, text: 'memory_forget: no memory with that id.' };
    }
    if (engramErrorCode(error) === 'ENGRAM_STORE_INVALID_INPUT') {
      return { ok: false, text: 'Invalid arguments for memory_forget: "id" or "reason" is not storable.' };
    }
    throw failure('memory_forget', error);
  }
};
