/**
 * What framework adapters build on: the context blocks to put before a model call, the model-facing memory
 * tools (the retrieval package's, plus `memory_update` and `memory_forget` over the facade), and a session's
 * logged messages.
 */
import type { ToolCallResult } from '@engram/retrieval';
import { buildInjection, MEMORY_TOOL_DEFINITIONS } from '@engram/retrieval';
import type { Engine } from './engine.js';
import { engramErrorCode, invalidInput } from './errors.js';
import type { LoggedMessage, MemoryContext, ToolSpec } from './types.js';

/** The facade's own tools: corrections by id. */
export const FACADE_TOOL_DEFINITIONS: readonly ToolSpec[] = [
  {
    name: 'memory_update',
    description:
      'Correct a remembered memory by id (the id memory_search or memory_remember gave). The old text is kept in its history; search returns the new one.',
    inputSchema: {
      type: 'object',
      properties: {
        id: { type: 'string', minLength: 1, maxLength: 200, description: 'The memory to correct.' },
        content: { type: 'string', minLength: 1, maxLength: 8000, description: 'The corrected text.' },
      },
      required: ['id', 'content'],
      additionalProperties: false,
    },
  },
  {
    name: 'memory_forget',
    description: 'Forget a memory by id: it and its earlier versions are deleted.',
    inputSchema: {
      type: 'object',
      properties: {
        id: { type: 'string', minLength: 1, maxLength: 200, description: 'The memory to forget.' },
      },
      required: ['id'],
      additionalProperties: false,
    },
  },
];

/** Every tool a model is offered: the retrieval tools, then the facade's corrections. */
export const ALL_TOOL_DEFINITIONS: readonly ToolSpec[] = [
  ...MEMORY_TOOL_DEFINITIONS,
  ...FACADE_TOOL_DEFINITIONS.filter((d) => !MEMORY_TOOL_DEFINITIONS.some((m) => m.name === d.name)),
];

/** The corrections a facade tool call makes. */
export interface Corrections {
  update(id: string, content: string, agentId: string): Promise<{ readonly id: string }>;
  forget(id: string, agentId: string): Promise<boolean>;
}

function stringField(args: unknown, name: string, max: number): string | null {
  if (typeof args !== 'object' || args === null) return null;
  const value = (args as Record<string, unknown>)[name];
  return typeof value === 'string' && value.trim() !== '' && value.length <= max ? value : null;
}

/** Runs one model tool call; bad arguments and failures are `ok: false` with a short text (no content). */
export async function callTool(
  engine: Engine,
  corrections: Corrections,
  name: string,
  args: unknown,
  agentId: string,
  signal: AbortSignal | undefined,
): Promise<ToolCallResult> {
  if (name !== 'memory_update' && name !== 'memory_forget') {
    return engine.tools.execute(name, args, { agentId, ...(signal === undefined ? {} : { signal }) });
  }
  const id = stringField(args, 'id', 200);
  if (id === null)
    return { ok: false, text: `Invalid arguments for ${name}: "id" must be a non-empty string.` };
  try {
    if (name === 'memory_forget') {
      return (await corrections.forget(id, agentId))
        ? { ok: true, text: `Forgot memory ${id}.` }
        : { ok: false, text: `memory_forget: no memory ${id}.` };
    }
    const content = stringField(args, 'content', 8000);
    if (content === null) {
      return {
        ok: false,
        text: 'Invalid arguments for memory_update: "content" must be a non-empty string.',
      };
    }
    const updated = await corrections.update(id, content, agentId);
    return { ok: true, text: `Updated memory ${id}; the current version is ${updated.id}.` };
  } catch (error) {
    const code = engramErrorCode(error);
    return { ok: false, text: `${name} failed${code === undefined ? '' : ` (${code})`}.` };
  }
}

/** The core block (the agent's facts, byte-identical while they are unchanged) and the recall block for `query`. */
export async function buildContext(
  engine: Engine,
  agentId: string,
  query: string | null,
  options: { readonly budgetTokens?: number; readonly recallLimit?: number; readonly signal?: AbortSignal },
): Promise<MemoryContext> {
  const injection = await buildInjection({
    store: engine.store,
    retriever: engine.retriever,
    agentId,
    ...(query === null ? {} : { query }),
    ...(options.budgetTokens === undefined ? {} : { budgetTokens: options.budgetTokens }),
    ...(options.recallLimit === undefined ? {} : { recallLimit: options.recallLimit }),
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  });
  return { core: injection.core, recall: injection.recall, tokens: injection.tokens };
}

/** The session's logged messages in order (the last `limit` of them). */
export async function sessionMessages(
  engine: Engine,
  agentId: string,
  sessionId: string,
  limit: number,
): Promise<readonly LoggedMessage[]> {
  if (!Number.isInteger(limit) || limit < 1 || limit > 10_000) {
    throw invalidInput('limit must be an integer from 1 to 10000');
  }
  const session = (await engine.store.listSessions(agentId)).find((s) => s.sessionId === sessionId);
  if (session === undefined) return [];
  const events = await engine.store.readEvents(
    agentId,
    sessionId,
    Math.max(1, session.lastSeq - limit + 1),
    session.lastSeq,
  );
  return events
    .filter((e) => e.type === 'message')
    .map((e) => ({
      seq: e.seq,
      role: e.role as LoggedMessage['role'],
      content: e.content,
      createdAt: e.createdAt,
    }));
}
