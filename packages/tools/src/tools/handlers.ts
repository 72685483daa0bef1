import { contentHash, MAX_TAGS, parseArchivePointer, type Timers, withDeadline } from '@engram/contracts';
import { engramErrorCode } from '@engram/contracts/errors';
import { parseMemoryWindow, type QueryEmbedder, type Retriever } from '@engram/retrieval';
import {
  type ContradictionReason,
  canMergeFacts,
  contradiction,
  cosineSimilarity,
  type FactMergeBlock,
  tokenJaccard,
} from '../fact-merge.js';
import type { ToolStore } from '../ports.js';
import { forget, update } from './corrections.js';
import { clip, renderEvents, renderSearch, renderSkills, renderWindow, searchHits } from './render.js';
import type { MemoryToolName, ToolArgs, ToolCallOf } from './schema.js';

/** Most events one `memory_get` pointer may span. */
export const MAX_POINTER_EVENTS = 200;
/** Tag prefix `memory_remember` stores a topic under. */
export const TOPIC_TAG_PREFIX = 'topic:';

/**
 * Who calls a tool: the agent, and the user it acts for. With `userId`, every read sees the agent's own
 * memories and that user's, never another user's; every memory written carries that user; another user's
 * memory is not found; the agent's shared skills can be listed but not written or deleted. Nothing in a tool
 * call's arguments changes this scope.
 */
export interface ToolCallContext {
  readonly agentId: string;
  readonly userId?: string;
  /** The conversation the call is part of: a fact `memory_remember` stores records it as its session. */
  readonly sessionId?: string;
  readonly signal?: AbortSignal;
}

/** The store's user scope of a call (`{}` for the whole agent). */
export function userScope(ctx: ToolCallContext): { readonly forUser?: string } {
  return ctx.userId === undefined ? {} : { forUser: ctx.userId };
}

/** The retrieval filter of a call's user scope. */
function userFilter(ctx: ToolCallContext): { readonly filter?: { readonly forUser: string } } {
  return ctx.userId === undefined ? {} : { filter: { forUser: ctx.userId } };
}

/** Whether a row belongs to exactly the call's user (the agent's own rows to a call without one). */
export function sameUser(row: { readonly userId: string | null }, ctx: ToolCallContext): boolean {
  return row.userId === (ctx.userId ?? null);
}

/**
 * Text for the model; `ok: false` for bad arguments or a failure, with a short typed explanation. `data` is the
 * same answer as fields, for clients that read them (an MCP server's `structuredContent`): `memory_search`
 * gives its results, `memory_remember` what it did, the skill tools the skills they touched.
 */
export interface ToolCallResult {
  readonly ok: boolean;
  readonly text: string;
  readonly data?: ToolResultData;
}

/** One `memory_search` result as fields: the shown text is the matching window, cut to the answer's room. */
export interface ToolSearchHit {
  readonly id: string;
  readonly kind: string;
  readonly createdAt: string;
  readonly score: number;
  readonly content: string;
  /** The pointer to read more with `memory_get`, when there is more. */
  readonly pointer?: string;
}

/** The fields of a successful answer (one shape per tool; see {@link ToolCallResult}). */
export type ToolResultData =
  | { readonly results: readonly ToolSearchHit[]; readonly lexicalOnly: boolean }
  | { readonly id: string; readonly action: 'remembered' | 'merged' | 'duplicate' | 'updated' }
  | { readonly skills: readonly { readonly name: string; readonly description: string }[] }
  | { readonly skill: string; readonly action: 'created' | 'replaced' | 'deleted' };

/** The resolved numeric settings of the tool handler. */
export interface ToolSettings {
  readonly mergeSimilarity: number;
  readonly mergeJaccard: number;
  readonly factImportance: number;
  readonly embeddingDeadlineMs: number;
}

/** What every handler may use: fixed for the tool handler's lifetime. */
export interface ToolDeps {
  readonly store: ToolStore;
  readonly retriever: Pick<Retriever, 'search' | 'decision'>;
  readonly embedder: QueryEmbedder | undefined;
  readonly settings: ToolSettings;
  readonly timers: Timers;
}

/** The handler of one tool: validated arguments in, text for the model out. */
export type ToolHandlerFunction<K extends MemoryToolName> = (
  deps: ToolDeps,
  args: ToolArgs[K],
  ctx: ToolCallContext,
) => Promise<ToolCallResult>;

/** A failure a handler reports to the model as `ok: false` with this text. */
export class ToolFailure {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
}

/** Causes that make a call fail (as opposed to degrading it). */
const FAILURE_CAUSES: ReadonlySet<string> = new Set([
  'storeUnusable',
  'storeTimeout',
  'storeError',
  'unknown',
]);

function storeFailure(tool: MemoryToolName, error: unknown): ToolFailure {
  const code = engramErrorCode(error);
  return new ToolFailure(
    `${tool} failed: memory store error${code === undefined ? '' : ` (${clip(code, 64)})`}.`,
  );
}

/** Runs one store call; a rejection becomes a {@link ToolFailure} naming the tool and the store's code. */
async function fromStore<T>(tool: MemoryToolName, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw storeFailure(tool, error);
  }
}

function topicTag(topic: string): string | null {
  const slug = topic
    .normalize('NFKC')
    .toLowerCase()
    .trim()
    .replace(/\s+/gu, '-')
    .replace(/[^\p{L}\p{N}._-]/gu, '')
    .slice(0, 64);
  return slug === '' ? null : `${TOPIC_TAG_PREFIX}${slug}`;
}

/** Whether a vector the tool computed may be stored with the row: the store's profile is the embedder's. */
export function attachable(deps: ToolDeps, vector: Float32Array): boolean {
  const profile = deps.store.embeddingProfile;
  const own = deps.embedder?.profile;
  return (
    cosineSimilarity(vector, vector) !== 0 &&
    profile !== null &&
    own !== undefined &&
    profile.id === own.id &&
    profile.dimensions === own.dimensions &&
    vector.length === profile.dimensions
  );
}

/** Embeds texts under the deadline; null on any failure (the caller falls back to Jaccard). */
export async function embedBounded(
  deps: ToolDeps,
  texts: readonly string[],
  signal: AbortSignal | undefined,
): Promise<Float32Array[] | null> {
  const { embedder } = deps;
  if (embedder === undefined) return null;
  const outcome = await withDeadline((deadlineSignal) => embedder.embed(texts, { signal: deadlineSignal }), {
    ms: deps.settings.embeddingDeadlineMs,
    timers: deps.timers,
    signals: [signal],
  });
  if (outcome.status !== 'fulfilled') return null;
  const vectors = outcome.value;
  return Array.isArray(vectors) &&
    vectors.length === texts.length &&
    vectors.every((v) => v instanceof Float32Array && v.every(Number.isFinite))
    ? vectors
    : null;
}

const search: ToolHandlerFunction<'memory_search'> = async ({ retriever }, args, ctx) => {
  const response = await retriever.search(ctx.agentId, args.query, {
    limit: args.limit,
    ...(args.file === undefined ? {} : { tags: [`file:${args.file}`] }),
    ...(args.history === true ? { includeHistory: true } : {}),
    ...userFilter(ctx),
    ...(ctx.signal === undefined ? {} : { signal: ctx.signal }),
  });
  const { execution, results } = response;
  if (execution.outcome === 'cancelled') return { ok: false, text: 'memory_search was cancelled.' };
  if (execution.outcome === 'emptyQuery') {
    return { ok: false, text: 'Invalid arguments for memory_search: "query" has no searchable terms.' };
  }
  if (execution.outcome !== 'completed') {
    const cause = execution.degradations.find((c) => FAILURE_CAUSES.has(c)) ?? execution.degradations[0];
    return { ok: false, text: `memory_search failed${cause === undefined ? '' : ` (${cause})`}.` };
  }
  const lexicalOnly = execution.arms?.includes('vector') !== true;
  const embeddingCause = execution.degradations.find((c) => c.startsWith('embedding') || c === 'vectorCold');
  const note = lexicalOnly
    ? ` (keyword search only${embeddingCause === undefined ? '' : `: ${embeddingCause}`})`
    : '';
  if (results.length === 0) {
    return { ok: true, text: `No memories found${note}.`, data: { results: [], lexicalOnly } };
  }
  return {
    ok: true,
    text: renderSearch(results, args.maxChars, note),
    data: { results: searchHits(results, args.maxChars), lexicalOnly },
  };
};

const remember = async (
  deps: ToolDeps,
  args: ToolArgs['memory_remember'],
  ctx: ToolCallContext,
  attempt: number,
): Promise<ToolCallResult> => {
  const { store, retriever, settings } = deps;
  const content = args.content.trim();
  if (content === '')
    return { ok: false, text: 'Invalid arguments for memory_remember: "content" is empty.' };
  const hash = contentHash(content);
  const alreadyRemembered = (id: string): ToolCallResult => ({
    ok: true,
    text: `Already remembered as fact ${id}; nothing stored (exact duplicate).`,
    data: { id, action: 'duplicate' },
  });
  // A fast path only: the store's insert is what guarantees an exact duplicate is never stored twice.
  const existing = await fromStore('memory_remember', () =>
    store.findByContentHash(ctx.agentId, hash, 'fact'),
  );
  // The exact-duplicate rule holds inside a user: the same text of another user is another memory.
  const duplicate = existing.find((r) => r.lifecycle === 'active' && sameUser(r, ctx));
  if (duplicate !== undefined) return alreadyRemembered(duplicate.id);

  const neighbours = await retriever.decision(ctx.agentId, content, {
    kinds: ['fact'],
    limit: 5,
    ...userFilter(ctx),
    ...(ctx.signal === undefined ? {} : { signal: ctx.signal }),
  });
  if (neighbours.execution.outcome === 'cancelled')
    return { ok: false, text: 'memory_remember was cancelled.' };
  // Merges and contradictions stay inside the user: a user's fact never rewrites the agent's shared one.
  const candidates = neighbours.results.map((r) => r.record).filter((r) => sameUser(r, ctx));
  // Stored meanwhile by a concurrent call: still an exact duplicate, not a merge.
  const stored = candidates.find((c) => c.contentHash === hash);
  if (stored !== undefined) return alreadyRemembered(stored.id);
  const vectors = await embedBounded(deps, [content, ...candidates.map((c) => c.content)], ctx.signal);
  if (ctx.signal?.aborted === true) return { ok: false, text: 'memory_remember was cancelled.' };
  const own = vectors?.[0];
  const scored = candidates
    .map((record, i) => {
      const vector = vectors?.[i + 1];
      const byVector = own !== undefined && vector !== undefined && cosineSimilarity(own, vector) !== 0;
      const similarity = byVector ? cosineSimilarity(own, vector) : tokenJaccard(content, record.content);
      const threshold = byVector ? settings.mergeSimilarity : settings.mergeJaccard;
      return { record, similarity, similar: similarity >= threshold };
    })
    .filter((s) => s.similar)
    .sort((a, b) => b.similarity - a.similarity || (a.record.id < b.record.id ? -1 : 1));

  const tag = args.topic === undefined ? null : topicTag(args.topic);
  let blocked: { id: string; reason: FactMergeBlock } | undefined;
  for (const { record, similarity } of scored) {
    const verdict = canMergeFacts(record.content, content);
    if (!verdict.ok) {
      blocked ??= { id: record.id, reason: verdict.reason };
      continue;
    }
    const union = [...new Set([...record.tags, ...(tag === null ? [] : [tag])])].sort();
    const tags = union.length > MAX_TAGS ? record.tags : union;
    try {
      const merged = await store.updateMemory(
        ctx.agentId,
        record.id,
        record.revision,
        { content, importance: Math.max(record.importance, settings.factImportance), tags },
        userScope(ctx),
      );
      return {
        ok: true,
        text: `Merged into existing fact ${merged.id} (similarity ${similarity.toFixed(2)}); it now reads as given.`,
        data: { id: merged.id, action: 'merged' },
      };
    } catch (error) {
      // A revision conflict, or the text became another fact meanwhile (a second active duplicate is refused).
      const code = engramErrorCode(error);
      if ((code === 'ENGRAM_STORE_REVISION_CONFLICT' || code === 'ENGRAM_STORE_CONFLICT') && attempt === 0) {
        return remember(deps, args, ctx, 1);
      }
      if (engramErrorCode(error) === 'ENGRAM_STORE_REVISION_CONFLICT') {
        return {
          ok: false,
          text: 'memory_remember failed: the similar fact changed concurrently; try again.',
        };
      }
      throw storeFailure('memory_remember', error);
    }
  }

  const canAttach = own !== undefined && attachable(deps, own);
  const inserted = await fromStore('memory_remember', () =>
    store.insertUniqueMemory({
      agentId: ctx.agentId,
      kind: 'fact',
      content,
      importance: settings.factImportance,
      ...(tag === null ? {} : { tags: [tag] }),
      ...(ctx.userId === undefined ? {} : { userId: ctx.userId }),
      ...(ctx.sessionId === undefined ? {} : { sessionId: ctx.sessionId }),
      ...(canAttach ? { vector: own } : {}),
    }),
  );
  if (!inserted.created) return alreadyRemembered(inserted.record.id);
  // A current fact on the same subject with another value: both are kept and linked as conflicting.
  const contradicted: { id: string; reason: ContradictionReason }[] = [];
  for (const record of candidates) {
    const reason = contradiction(record.content, content);
    if (reason !== null) contradicted.push({ id: record.id, reason });
  }
  const linked: typeof contradicted = [];
  for (const c of contradicted) {
    try {
      await store.linkConflict(ctx.agentId, c.id, inserted.record.id, c.reason);
      linked.push(c);
    } catch {
      // The fact is stored; a link that could not be written (the other fact vanished) is not an error.
    }
  }
  if (linked.length > 0) {
    const list = linked.map((c) => `${c.id} (different ${c.reason})`).join(', ');
    return {
      ok: true,
      text: `Remembered as fact ${inserted.record.id}. It contradicts fact ${list} on the same subject: both are kept and marked conflicting, this one as the newer. Use memory_update or memory_forget to settle it now; otherwise maintenance resolves it.`,
      data: { id: inserted.record.id, action: 'remembered' },
    };
  }
  const separate =
    blocked === undefined
      ? ''
      : ` Kept separate from similar fact ${blocked.id}: they differ in a ${blocked.reason}.`;
  return {
    ok: true,
    text: `Remembered as fact ${inserted.record.id}.${separate}`,
    data: { id: inserted.record.id, action: 'remembered' },
  };
};

const get: ToolHandlerFunction<'memory_get'> = async ({ store }, args, ctx) => {
  if (args.id !== undefined) {
    const record = await fromStore('memory_get', () =>
      store.getMemory(ctx.agentId, args.id ?? '', userScope(ctx)),
    );
    if (record === null || record.lifecycle !== 'active') {
      return { ok: false, text: 'memory_get: no current memory with that id.' };
    }
    return {
      ok: true,
      text: renderWindow(
        record,
        { start: 0, end: record.content.length },
        `memory/${record.id}`,
        args.maxChars,
      ),
    };
  }
  const pointerText = args.pointer ?? '';
  const window = parseMemoryWindow(pointerText);
  if (window !== null) {
    const record = await fromStore('memory_get', () =>
      store.getMemory(ctx.agentId, window.id, userScope(ctx)),
    );
    if (record === null || record.lifecycle !== 'active' || window.end > record.content.length) {
      return { ok: false, text: 'memory_get: no memory window at that pointer.' };
    }
    return { ok: true, text: renderWindow(record, window, pointerText, args.maxChars) };
  }
  const pointer = parseArchivePointer(pointerText);
  if (pointer === null) {
    return {
      ok: false,
      text: 'Invalid arguments for memory_get: "pointer" must be session/<sessionId>#<from>-<to> or memory/<id>#<start>-<end>.',
    };
  }
  const { sessionId, from, to } = pointer;
  if (to - from + 1 > MAX_POINTER_EVENTS) {
    return {
      ok: false,
      text: `Invalid arguments for memory_get: "pointer" spans more than ${MAX_POINTER_EVENTS} events.`,
    };
  }
  // Another user's events are not there for this call, as another user's memories are not.
  const events = (
    await fromStore('memory_get', () => store.readEvents(ctx.agentId, sessionId, from, to))
  ).filter((e) => ctx.userId === undefined || e.userId === null || e.userId === ctx.userId);
  if (events.length === 0) return { ok: false, text: 'memory_get: no archived events at that pointer.' };
  return { ok: true, text: renderEvents(events, pointerText, args.maxChars) };
};

/** Skills are the agent's, shared by all its users: a call scoped to one user may read them, not change them. */
function sharedSkillRefusal(
  tool: 'skill_write' | 'skill_delete',
  ctx: ToolCallContext,
): ToolCallResult | null {
  return ctx.userId === undefined
    ? null
    : {
        ok: false,
        text: `${tool}: skills are shared by every user of this agent; a call scoped to one user cannot change them.`,
      };
}

const skillWrite: ToolHandlerFunction<'skill_write'> = async ({ store }, args, ctx) => {
  const refused = sharedSkillRefusal('skill_write', ctx);
  if (refused !== null) return refused;
  const { created } = await fromStore('skill_write', () =>
    store.writeSkill({
      agentId: ctx.agentId,
      name: args.name,
      description: args.description.trim(),
      content: args.content,
    }),
  );
  const action = created ? 'created' : 'replaced';
  return { ok: true, text: `Skill "${args.name}" ${action}.`, data: { skill: args.name, action } };
};

const skillDelete: ToolHandlerFunction<'skill_delete'> = async ({ store }, args, ctx) => {
  const refused = sharedSkillRefusal('skill_delete', ctx);
  if (refused !== null) return refused;
  const deleted = await fromStore('skill_delete', () => store.deleteSkill(ctx.agentId, args.name));
  return deleted
    ? { ok: true, text: `Skill "${args.name}" deleted.`, data: { skill: args.name, action: 'deleted' } }
    : { ok: false, text: `skill_delete: no skill named "${args.name}".` };
};

const skillList: ToolHandlerFunction<'skill_list'> = async ({ store }, args, ctx) => {
  const skills = await fromStore('skill_list', () => store.listSkills(ctx.agentId));
  const data = { skills: skills.map((s) => ({ name: s.name, description: s.description })) };
  if (skills.length === 0) return { ok: true, text: 'No skills yet.', data };
  return { ok: true, text: renderSkills(skills, args.maxChars), data };
};

/** One handler per tool; a tool without a handler fails the typecheck. */
const TOOL_HANDLERS: { readonly [K in MemoryToolName]: ToolHandlerFunction<K> } = {
  memory_search: search,
  memory_remember: (deps, args, ctx) => remember(deps, args, ctx, 0),
  memory_get: get,
  memory_update: update,
  memory_forget: forget,
  skill_write: skillWrite,
  skill_delete: skillDelete,
  skill_list: skillList,
};

/**
 * Runs a validated call with its tool's handler. A {@link ToolFailure} becomes its text; any other error
 * becomes an internal-error answer naming its code, never its message.
 */
export async function runToolCall<K extends MemoryToolName>(
  deps: ToolDeps,
  call: ToolCallOf<K>,
  ctx: ToolCallContext,
): Promise<ToolCallResult> {
  const handler: ToolHandlerFunction<K> = TOOL_HANDLERS[call.name];
  try {
    return await handler(deps, call.args, ctx);
  } catch (error) {
    if (error instanceof ToolFailure) return { ok: false, text: error.text };
    const code = engramErrorCode(error);
    return {
      ok: false,
      text: `${call.name} failed: internal error${code === undefined ? '' : ` (${clip(code, 64)})`}.`,
    };
  }
}
