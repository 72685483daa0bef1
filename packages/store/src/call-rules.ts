/**
 * What the port's row, event and embedding calls accept, checked the same way by every adapter before any
 * statement runs (bad input changes nothing), and the order rules of their answers. Pure; the statements stay
 * the adapter's.
 */
import type { MemoryKind } from '@engram/contracts';
import type { Bm25Plan } from './bm25-plan.js';
import { invalidInput } from './errors.js';
import type { LexicalPlan } from './lexical-plan.js';
import type { InsertRules } from './lifecycle-rules.js';
import { prepareMemoryInsert } from './lifecycle-rules.js';
import { checkKinds, checkTags } from './query-checks.js';
import type {
  EventInput,
  IngestBatch,
  LexicalHit,
  LexicalPaths,
  LexicalQuery,
  LexicalResult,
  ListPendingOptions,
  MemoryPatch,
  NewMemory,
  RevalidationCandidate,
} from './types.js';
import {
  type PreparedEvent,
  type PreparedMemory,
  type PreparedPatch,
  prepareEvent,
  preparePatch,
  validateAgentId,
  validateId,
  validateInteger,
  validateKind,
  validateLimit,
  validateTimestamp,
} from './validate.js';

/** The arguments of `findByContentHash`; the kind asked for (null: any). */
export function validateContentHashArgs(agentId: string, hash: string, kind?: MemoryKind): MemoryKind | null {
  validateAgentId(agentId);
  if (typeof hash !== 'string' || hash.length === 0 || hash.length > 128) {
    throw invalidInput('contentHash must be a non-empty string');
  }
  return kind === undefined ? null : validateKind(kind);
}

/** The distinct ids of at most 10,000 revalidation candidates, in input order (each checked). */
export function candidateIds(candidates: readonly RevalidationCandidate[]): string[] {
  if (!Array.isArray(candidates)) throw invalidInput('candidates must be an array');
  if (candidates.length > 10_000) throw invalidInput('at most 10,000 candidates');
  const ids: string[] = [];
  const seen = new Set<string>();
  for (const c of candidates) {
    if (typeof c !== 'object' || c === null) throw invalidInput('candidate must be an object');
    validateId(c.id, 'candidate.id');
    if (c.revision !== undefined) validateInteger(c.revision, 'candidate.revision', 1);
    if (!seen.has(c.id)) {
      seen.add(c.id);
      ids.push(c.id);
    }
  }
  return ids;
}

/**
 * The answer of a revalidation: the rows read (`byId`), in the candidates' order, each once, skipping a
 * candidate whose row is gone or is at another revision than the one it names.
 */
export function inCandidateOrder<T, R>(
  candidates: readonly RevalidationCandidate[],
  byId: ReadonlyMap<string, T>,
  revisionOf: (row: T) => number,
  convert: (row: T) => R,
): R[] {
  const out: R[] = [];
  const emitted = new Set<string>();
  for (const c of candidates) {
    if (emitted.has(c.id)) continue;
    const row = byId.get(c.id);
    if (row === undefined) continue;
    if (c.revision !== undefined && c.revision !== revisionOf(row)) continue;
    emitted.add(c.id);
    out.push(convert(row));
  }
  return out;
}

/** The arguments of `insertMemories`: each input prepared, named by its place. */
export function prepareInsertBatch(rules: InsertRules, inputs: readonly NewMemory[]): PreparedMemory[] {
  if (!Array.isArray(inputs)) throw invalidInput('memories must be an array');
  return inputs.map((m, i) => prepareMemoryInsert(rules, m, `memories[${i}]`));
}

/** The arguments of `updateMemory`; the prepared patch. */
export function validateUpdateArgs(
  rules: InsertRules,
  agentId: string,
  id: string,
  expectedRevision: number,
  patch: MemoryPatch,
): PreparedPatch {
  validateAgentId(agentId);
  validateId(id);
  validateInteger(expectedRevision, 'expectedRevision', 1);
  return preparePatch(patch, rules.limits);
}

/**
 * The event rule of an update: an `event` row never changes its content or kind (only tags and scores), and no
 * row becomes an event. True when the content changes.
 */
export function checkEventEdit(
  row: { readonly kind: string; readonly content: string },
  p: PreparedPatch,
): boolean {
  const contentChanged = p.content !== undefined && p.content !== row.content;
  if (row.kind === 'event' && (contentChanged || (p.kind !== undefined && p.kind !== 'event'))) {
    throw invalidInput('event rows are never edited in place (only tags and scores may change)');
  }
  if (p.kind === 'event' && row.kind !== 'event') {
    throw invalidInput('a row cannot become an event (events are appended, not converted)');
  }
  return contentChanged;
}

/** The arguments of `recordAccess`: at most 10,000 ids; the access time (`now()` when not given). */
export function validateAccessArgs(
  agentId: string,
  ids: readonly string[],
  at: number | undefined,
  now: () => number,
): number {
  validateAgentId(agentId);
  if (!Array.isArray(ids)) throw invalidInput('ids must be an array');
  if (ids.length > 10_000) throw invalidInput('at most 10,000 ids');
  for (const id of ids) validateId(id, 'ids entry');
  return at === undefined ? now() : validateTimestamp(at, 'at');
}

/** The arguments of `appendEvents`: each event prepared, named by its place. */
export function prepareAppend(
  rules: InsertRules,
  agentId: string,
  sessionId: string,
  events: readonly EventInput[],
): PreparedEvent[] {
  validateAgentId(agentId);
  validateAgentId(sessionId, 'sessionId');
  if (!Array.isArray(events)) throw invalidInput('events must be an array');
  return events.map((e, i) => prepareEvent(e, rules.limits, `events[${i}]`));
}

/** The arguments of `readEvents` (`fromSeq`, `toSeq` from 0). */
export function validateEventRangeArgs(
  agentId: string,
  sessionId: string,
  fromSeq: number,
  toSeq: number,
): void {
  validateAgentId(agentId);
  validateAgentId(sessionId, 'sessionId');
  validateInteger(fromSeq, 'fromSeq', 0);
  validateInteger(toSeq, 'toSeq', 0);
}

/** The arguments of `listEventsAfter`; the limit (at most 10,000). */
export function validateEventsAfterArgs(
  agentId: string,
  sessionId: string,
  afterSeq: number,
  limit: number,
): number {
  validateAgentId(agentId);
  validateAgentId(sessionId, 'sessionId');
  validateInteger(afterSeq, 'afterSeq', 0);
  return validateLimit(limit, 'limit', 10_000);
}

/** A checked ingestion batch: its agent and session, the cursor move and the prepared memories. */
export interface CheckedBatch {
  readonly agentId: string;
  readonly sessionId: string;
  readonly expected: number;
  readonly next: number;
  readonly prepared: readonly PreparedMemory[];
}

/** The argument of `ingestBatch`: the cursor never moves back, every memory belongs to the batch agent. */
export function validateIngestBatch(rules: InsertRules, batch: IngestBatch): CheckedBatch {
  if (typeof batch !== 'object' || batch === null) throw invalidInput('batch must be an object');
  const agentId = validateAgentId(batch.agentId);
  const sessionId = validateAgentId(batch.sessionId, 'sessionId');
  const expected = validateInteger(batch.expectedCursor, 'expectedCursor', 0);
  const next = validateInteger(batch.nextCursor, 'nextCursor', 0);
  if (next < expected) throw invalidInput('nextCursor must not be below expectedCursor');
  if (!Array.isArray(batch.memories)) throw invalidInput('memories must be an array');
  const prepared = batch.memories.map((m, i) => prepareMemoryInsert(rules, m, `memories[${i}]`));
  for (const p of prepared) {
    if (p.agentId !== agentId) throw invalidInput('every memory of a batch must belong to the batch agent');
  }
  return { agentId, sessionId, expected, next, prepared };
}

/** The checked options of `listPendingEmbeddings`. */
export interface PendingListing {
  /** One agent's rows, or null: every agent's. */
  readonly agentId: string | null;
  readonly limit: number;
  /** Rows in `error` with fewer attempts than this are listed again (0: none). */
  readonly below: number;
  /** Only these rows (distinct), or null: any. */
  readonly ids: readonly string[] | null;
}

/** The options of `listPendingEmbeddings`: a limit up to 1000 (64 by default), at most 1,000 ids. */
export function validatePendingOptions(options: ListPendingOptions): PendingListing {
  if (typeof options !== 'object' || options === null) throw invalidInput('options must be an object');
  const agentId = options.agentId === undefined ? null : validateAgentId(options.agentId);
  const limit = validateLimit(options.limit, 'limit', 1000, 64);
  const below =
    options.retryErrorsBelowAttempts === undefined
      ? 0
      : validateInteger(options.retryErrorsBelowAttempts, 'retryErrorsBelowAttempts', 0);
  let ids: string[] | null = null;
  if (options.ids !== undefined) {
    if (!Array.isArray(options.ids)) throw invalidInput('ids must be an array');
    if (options.ids.length > 1000) throw invalidInput('at most 1,000 ids');
    ids = [...new Set(options.ids.map((id) => validateId(id, 'ids entry')))];
  }
  return { agentId, limit, below, ids };
}

/** A checked lexical query: the agent, the limit, the kinds and tags filters, and the mode. */
export interface CheckedLexicalQuery {
  readonly agentId: string;
  readonly limit: number;
  /** The kinds asked for (deduplicated), or `recallable` when none were named. */
  readonly kinds: readonly MemoryKind[];
  /** Every tag required (deduplicated, at most 64). */
  readonly tags: readonly string[];
  readonly mode: 'any' | 'all';
}

/** The argument of `searchLexical`: a limit up to 1000 (50 by default), `any` (the default) or `all`. */
export function checkLexicalQuery(
  query: LexicalQuery,
  recallable: readonly MemoryKind[],
): CheckedLexicalQuery {
  if (typeof query !== 'object' || query === null) throw invalidInput('query must be an object');
  const agentId = validateAgentId(query.agentId);
  const limit = validateLimit(query.limit, 'limit', 1000, 50);
  const kinds = checkKinds(query.kinds) ?? [...recallable];
  const tags = checkTags(query.tags);
  const mode = query.mode ?? 'any';
  if (mode !== 'any' && mode !== 'all') throw invalidInput('mode must be "any" or "all"');
  return { agentId, limit, kinds, tags, mode };
}

/** The answer of an `any`-mode search: its hits, and the paths and terms its BM25 plan used. */
export function bm25Answer(hits: readonly LexicalHit[], bm25: Bm25Plan): LexicalResult {
  return {
    hits,
    paths: { words: bm25.usesWords, trigram: bm25.usesLongCjk, like: bm25.shortCjkTerms.length > 0 },
    likeTerms: [...bm25.shortCjkTerms],
    droppedTerms: bm25.droppedTerms,
  };
}

/** The paths an `all`-mode plan searches. */
export function planPaths(plan: LexicalPlan): LexicalPaths {
  return {
    words: plan.wordsExpr !== null,
    trigram: plan.trigramExpr !== null,
    like: plan.likeTerms.length > 0,
  };
}
