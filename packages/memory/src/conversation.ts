/**
 * What framework adapters build on: the context blocks to put before a model call, the model-facing memory
 * tools, and a session's logged messages.
 */
import { buildInjection } from '@engram/retrieval';
import { MEMORY_TOOL_DEFINITIONS, type ToolCallResult } from '@engram/tools';
import type { Engine } from './engine.js';
import { latestEvents, loggedEntry, sinceClear } from './entries.js';
import { invalidInput } from './errors.js';
import type { LoggedMessage, MemoryContext, ToolSpec } from './types.js';

/** Every tool a model is offered (search, remember, get, update, forget, the skills), as the retrieval package defines them. */
export const ALL_TOOL_DEFINITIONS: readonly ToolSpec[] = MEMORY_TOOL_DEFINITIONS;

/** Runs one model tool call; bad arguments and failures are `ok: false` with a short text (no content). */
export function callTool(
  engine: Engine,
  name: string,
  args: unknown,
  agentId: string,
  userId: string | null,
  sessionId: string | undefined,
  signal: AbortSignal | undefined,
): Promise<ToolCallResult> {
  return engine.tools.execute(name, args, {
    agentId,
    ...(userId === null ? {} : { userId }),
    ...(sessionId === undefined ? {} : { sessionId }),
    ...(signal === undefined ? {} : { signal }),
  });
}

/** The core block (the agent's facts, byte-identical while they are unchanged) and the recall block for `query`. */
export async function buildContext(
  engine: Engine,
  agentId: string,
  userId: string | null,
  query: string | null,
  options: {
    readonly budgetTokens?: number;
    readonly recallLimit?: number;
    readonly sessionId?: string;
    readonly recentMessages?: number;
    readonly signal?: AbortSignal;
  },
): Promise<MemoryContext> {
  const recent = options.recentMessages ?? DEFAULT_RECENT_MESSAGES;
  if (!Number.isInteger(recent) || recent < 0 || recent > 10_000) {
    throw invalidInput('recentMessages must be an integer from 0 to 10000');
  }
  let held: { sessionId: string; fromSeq: number } | undefined;
  if (options.sessionId !== undefined && recent > 0) {
    const session = (await engine.store.listSessions(agentId)).find((s) => s.sessionId === options.sessionId);
    if (session !== undefined) held = { sessionId: session.sessionId, fromSeq: session.lastSeq - recent + 1 };
  }
  const injection = await buildInjection({
    ...(held === undefined ? {} : { inPrompt: held }),
    store: engine.store,
    retriever: engine.retriever,
    agentId,
    ...(userId === null ? {} : { forUser: userId }),
    ...(query === null ? {} : { query }),
    ...(options.budgetTokens === undefined ? {} : { budgetTokens: options.budgetTokens }),
    ...(options.recallLimit === undefined ? {} : { recallLimit: options.recallLimit }),
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  });
  return { core: injection.core, recall: injection.recall, tokens: injection.tokens };
}

/** The entries of the current session a framework is taken to resend with each call (`recentMessages`). */
export const DEFAULT_RECENT_MESSAGES = 20;

/** The session's logged entries in order (of its last `limit` events), from after its last clear. */
export async function sessionMessages(
  engine: Engine,
  agentId: string,
  userId: string | null,
  sessionId: string,
  limit: number,
): Promise<readonly LoggedMessage[]> {
  if (!Number.isInteger(limit) || limit < 1 || limit > 10_000) {
    throw invalidInput('limit must be an integer from 1 to 10000');
  }
  const session = (await engine.store.listSessions(agentId)).find((s) => s.sessionId === sessionId);
  if (session === undefined) return [];
  // A user's view of the session: the agent's entries and that user's, never another user's.
  const events = await latestEvents(
    engine.store,
    agentId,
    sessionId,
    session.lastSeq,
    limit,
    (e) => userId === null || e.userId === null || e.userId === userId,
  );
  return sinceClear(events, userId).map(loggedEntry);
}
