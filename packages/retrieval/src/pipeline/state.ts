import type { DegradationCause } from '@engram/contracts/enums';
import type { Timers } from '@engram/contracts/rules';
import type { ChunkSpan, MemoryBrief, MemoryRecord, RevalidateOptions, VectorHit } from '@engram/store';
import { type ConversationScoring, NO_CONVERSATION_SCORING } from '../conversation.js';
import type { RetrievalResult } from '../explanation.js';
import type { Reranker, RetrievalStore } from '../ports.js';
import { classifyStoreError, type StoreFailureCause } from '../store-errors.js';
import type { QueryEmbeddingGuard } from './query-embedding.js';
import type { ExecutionRecorder } from './recorder.js';
import type { RetrieverSettings } from './settings.js';
import type { ValidatedCall } from './validate.js';

/** Thrown inside the pipeline when the caller's signal aborts; the call settles as `cancelled`. */
export const CANCELLED: unique symbol = Symbol('cancelled');

/** A classified store rejection inside the pipeline. */
export class StoreFailure {
  readonly cause: StoreFailureCause;
  constructor(cause: StoreFailureCause) {
    this.cause = cause;
  }
}

/** The outcome of the query embedding: a vector (null for a text without features) or a degradation. */
export type EmbedOutcome =
  | { readonly ok: true; readonly vector: Float32Array | null; readonly ms: number }
  | { readonly ok: false; readonly cause: DegradationCause | typeof CANCELLED; readonly ms?: number };

/** One candidate of an arm, before revalidation. */
export interface ArmHit {
  readonly id: string;
  readonly revision?: number;
  readonly score?: number;
  readonly similarity?: number;
  /** The store's matching chunk, for a chunked memory. */
  readonly chunk?: ChunkSpan;
  /** A chunked memory's score as a whole (lexical arm; see `LexicalHit.memoryScore`). */
  readonly memoryScore?: number;
}

/** The candidates of one arm and the budget they were asked with. */
export interface ArmState {
  budget: number;
  hits: ArmHit[];
  /** The store returned as many hits as asked (above the threshold for the vector arm): more may exist. */
  saturated: boolean;
}

/** A candidate that survived revalidation and filtering, with its current row (the fields ranking reads). */
export interface ValidCandidate {
  readonly hit: ArmHit;
  readonly record: MemoryBrief;
}

/** What every stage may read: fixed for the retriever's lifetime. */
export interface PipelineContext {
  readonly settings: RetrieverSettings;
  readonly store: RetrievalStore;
  readonly guard: QueryEmbeddingGuard;
  /** The rerank stage's model, when `settings.rerank` is set. */
  readonly reranker: Reranker | undefined;
  readonly timers: Timers;
  readonly now: () => number;
  readonly mono: () => number;
}

/** The settled first k-NN of the vector arm: its hits or its failure, and its own time. */
export type VectorRun =
  | { readonly ok: true; readonly hits: readonly VectorHit[]; readonly ms: number }
  | { readonly ok: false; readonly error: unknown; readonly ms: number };

/** The explicit state of one call, threaded through the stages in order. */
export interface CallState {
  readonly agentId: string;
  readonly query: string;
  readonly call: ValidatedCall;
  /** Aborted when the call settles: an embedding still running is then released. */
  readonly stop: AbortSignal;
  readonly recorder: ExecutionRecorder;
  terms: readonly string[];
  embedding: Promise<EmbedOutcome> | undefined;
  /**
   * The vector arm's first k-NN, started as soon as the query vector is ready (while the FTS arm runs);
   * never rejects. Undefined when it did not start (no embedding, or no vector).
   */
  vectorRun: Promise<VectorRun | undefined> | undefined;
  /** True while that k-NN has been asked for and has not settled. */
  vectorPending: boolean;
  /** Time spent revalidating the lexical candidates while the k-NN ran (part of the revalidation stage). */
  earlyRevalidationMs: number;
  lexicalOn: boolean;
  readonly lexical: ArmState;
  queryVector: Float32Array | null;
  vectorOn: boolean;
  readonly vector: ArmState;
  /** The vector arm's weight in this call; its confidence comes from its first hits, before the threshold. */
  vectorWeight: number;
  /** The vector arm's own confidence (0..1, from its similarity margin; 0 when not calibrated). */
  vectorConfidence: number;
  /** Revalidated rows by id (briefs, or full rows); null for a candidate that is no longer active. */
  readonly checked: Map<string, MemoryBrief | null>;
  /** The full rows read so far by id: every candidate's when read in full, else the returned results'. */
  readonly records: Map<string, MemoryRecord>;
  lexicalValid: ValidCandidate[];
  vectorValid: ValidCandidate[];
  /** Memories next to lexical candidates in their sessions (conversation scoring), own score 0. */
  neighbours: ValidCandidate[];
  results: RetrievalResult[];
}

/** A fresh state for one validated call. */
export function createCallState(
  ctx: PipelineContext,
  init: Pick<CallState, 'agentId' | 'query' | 'call' | 'stop' | 'recorder'>,
): CallState {
  return {
    ...init,
    terms: [],
    embedding: undefined,
    vectorRun: undefined,
    vectorPending: false,
    earlyRevalidationMs: 0,
    lexicalOn: ctx.settings.arms.lexical,
    lexical: { budget: ctx.settings.candidateBudget, hits: [], saturated: false },
    queryVector: null,
    vectorOn: false,
    vector: { budget: ctx.settings.candidateBudget, hits: [], saturated: false },
    vectorWeight: ctx.settings.fusion.vector,
    vectorConfidence: 0,
    checked: new Map(),
    records: new Map(),
    lexicalValid: [],
    vectorValid: [],
    neighbours: [],
    results: [],
  };
}

/**
 * The conversation scoring of a call: the retriever's, except for `decision` lookups (the facts most like a
 * new one, for deduplication and contradictions), which rank by the memory's own match only.
 */
export function callConversation(ctx: PipelineContext, state: CallState): ConversationScoring {
  return state.recorder.purpose === 'decision' ? NO_CONVERSATION_SCORING : ctx.settings.conversation;
}

/** Throws {@link CANCELLED} once the caller's signal has aborted. */
export function checkAbort(state: CallState): void {
  if (state.call.signal?.aborted === true) throw CANCELLED;
}

/** The revalidation options of a call: its time scope, and archived rows too when it asked for them. */
export function revalidateOptions(state: CallState): RevalidateOptions {
  return state.call.includeArchived ? { ...state.call.time, includeArchived: true } : state.call.time;
}

/**
 * Whether an arm's search re-reads its hits as revalidation would (`VectorQuery.briefs`,
 * `LexicalQuery.briefs`): when revalidation reads briefs (the store has `revalidateBrief` and the call no
 * metadata filter). A store that cannot ignores it.
 */
export function foldsRevalidation(ctx: PipelineContext, state: CallState): boolean {
  return ctx.store.revalidateBrief !== undefined && state.call.filter === null;
}

/** Runs a store call; a rejection becomes a classified {@link StoreFailure}. */
export async function storeCall<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw new StoreFailure(classifyStoreError(error));
  }
}

/**
 * Whether a stored id and revision, as a store read them back, can name a row: a row damaged outside the store
 * (an id that is not text, a revision that is not a positive integer) is never a candidate, so it cannot fail
 * the call that met it. The store's integrity check counts such rows.
 */
export function readableId(id: unknown): id is string {
  return typeof id === 'string' && id !== '';
}
export function readableRevision(revision: unknown): boolean {
  return revision === undefined || (Number.isSafeInteger(revision) && (revision as number) >= 1);
}
/** A re-read row a result can stand on (see {@link readableId}). */
export function readableRow(row: MemoryBrief): boolean {
  return readableId(row.id) && row.revision !== undefined && readableRevision(row.revision);
}
