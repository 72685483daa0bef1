/**
 * The data model and the async store port of Engram. The closed enums (kinds, lifecycles, embedding states,
 * event types) come from `@engram/contracts`.
 *
 * Long on purpose: the port is one contract (records, queries, and the slices every adapter implements), read
 * as a whole by anyone writing a second store. The user scope of a call is `scope.ts`.
 *
 * Every slice is `async` so a networked adapter (PostgreSQL + pgvector) can serve it later; the SQLite
 * adapter is synchronous inside. No SQL ever leaves this package: callers speak in these types only.
 */
import type { EmbeddingState, EventType, Lifecycle, MemoryKind } from '@engram/contracts/enums';
import type { StoreHealthDto, StoreIntegrityDto } from '@engram/contracts/health';
import type { MemoryFilter } from '@engram/contracts/rules';
import type { BacklogReadSlice, EmbeddingErrorOutcome } from './backlog-reads.js';
import type { EngramStoreErrorCode } from './errors.js';
import type { MemoryFactsSlice } from './facts-types.js';
import type { MaintenanceLeaseSlice } from './lease-types.js';
import type { ProcessBeatSlice } from './process-beats.js';
import type { UserScope } from './scope.js';
import type { SessionReadSlice } from './session-read.js';

export type {
  EmbeddingState,
  EventType,
  Lifecycle,
  MemoryKind,
  StatementKind,
  VectorWarmupOutcome,
} from '@engram/contracts/enums';
export type { StoreObserver } from '@engram/contracts/observers';
export type { MemoryFilter, MetadataCondition, MetadataScalar } from '@engram/contracts/rules';

import type { ChunkSpan } from './chunking.js';

export type { ClaimMaintenanceOptions, MaintenanceClaim, MaintenanceLeaseSlice } from './lease-types.js';

/**
 * Tag rule (enforced by the store with `checkTag` of `@engram/contracts`): `prefix:value`, the prefix matching
 * `/^[a-z][a-z0-9_-]{0,31}$/`, the value (everything after the first `:`) non-empty, at most 512 UTF-16 units, without control characters or lone surrogates; at most
 * 64 distinct tags per row, stored sorted.
 */

/** One memory row, as stored. Timestamps are epoch milliseconds. */
export interface MemoryRecord {
  readonly id: string;
  readonly agentId: string;
  readonly kind: MemoryKind;
  readonly content: string;
  /** SHA-256 (hex) of the normalised content (NFKC, lower-case, whitespace collapsed, trimmed). */
  readonly contentHash: string;
  /** 0..1. */
  readonly importance: number;
  /** 0..1. */
  readonly confidence: number;
  /** `prefix:value` tags, sorted and unique. */
  readonly tags: readonly string[];
  readonly sessionId: string | null;
  readonly seqFrom: number | null;
  readonly seqTo: number | null;
  readonly createdAt: number;
  /**
   * When the row was last written (inserted, imported, updated or moved). A row inserted with a past
   * `createdAt` (imported history) records its write time here, never earlier than `createdAt`.
   */
  readonly updatedAt: number;
  readonly lastAccessedAt: number | null;
  readonly accessCount: number;
  /** Starts at 1; every update bumps it. Writers pass the revision they read (compare-and-set). */
  readonly revision: number;
  readonly lifecycle: Lifecycle;
  readonly supersededBy: string | null;
  readonly embeddingState: EmbeddingState;
  /** Fingerprint of the embedder that produced the stored vector (`profileId:dimensions`), or null. */
  readonly embeddingFingerprint: string | null;
  /** How many times embedding this row failed (bounded retries). */
  readonly embeddingAttempts: number;
  /** The user scope, or null. (`sessionId` is the session scope.) */
  readonly userId: string | null;
  /** Free-form JSON metadata (an object; `{}` when none). */
  readonly metadata: Readonly<Record<string, unknown>>;
  /** Since when the memory holds (defaults to its creation). */
  readonly validFrom: number;
  /** Until when it held: set when it is superseded or forgotten; null while current. */
  readonly validTo: number | null;
  /** When it was forgotten with its content kept (`forget: 'keep'`); null otherwise. */
  readonly forgottenAt: number | null;
}

/** Input of a new memory. Optional fields get defaults (importance 0.5, confidence 1, no tags). */
export interface NewMemory {
  /** A caller-chosen id (unique in the store); a time-ordered UUID (version 7) when omitted. */
  readonly id?: string;
  readonly agentId: string;
  readonly kind: MemoryKind;
  readonly content: string;
  readonly importance?: number;
  readonly confidence?: number;
  readonly tags?: readonly string[];
  readonly sessionId?: string;
  readonly seqFrom?: number;
  readonly seqTo?: number;
  /** Defaults to the store clock. */
  readonly createdAt?: number;
  /** A vector to store in the same transaction (the row is then `ready`); must match the store's dimensions. */
  readonly vector?: Float32Array;
  /** The user scope. */
  readonly userId?: string;
  /** Free-form JSON metadata: a plain object, at most `MAX_METADATA_CHARS` once serialised. */
  readonly metadata?: Readonly<Record<string, unknown>>;
  /** Since when the fact holds; defaults to `createdAt`. */
  readonly validFrom?: number;
}

/** Fields an update may change. Changing `content` resets the row to `pending` and drops its vector. */
export interface MemoryPatch {
  readonly content?: string;
  readonly kind?: MemoryKind;
  readonly importance?: number;
  readonly confidence?: number;
  readonly tags?: readonly string[];
  readonly lifecycle?: Lifecycle;
  /** Replaces the metadata. */
  readonly metadata?: Readonly<Record<string, unknown>>;
}

/**
 * Which version of the facts a search or revalidation sees. Default: current rows only (`active`). `asOf`: the
 * rows valid at that time (current or since superseded, never forgotten). `includeHistory`: current and
 * superseded rows alike.
 */
export interface TimeScope {
  readonly asOf?: number;
  readonly includeHistory?: boolean;
}

/** Filters for listing rows of one agent. */
export interface ListMemoriesOptions {
  readonly kinds?: readonly MemoryKind[];
  readonly lifecycles?: readonly Lifecycle[];
  /** Every tag must be present (exact match). */
  readonly tags?: readonly string[];
  /** Default 100, at most 10,000. */
  readonly limit?: number;
  /** Keyset pagination: rows strictly after this id in id order. */
  readonly afterId?: string;
  /** Scope and metadata filter. */
  readonly filter?: MemoryFilter;
}

/** How query terms combine in lexical search. */
export type TermMode = 'any' | 'all';

/** A lexical query: terms are quoted by the store, so no term can inject FTS5 syntax. */
export interface LexicalQuery {
  readonly agentId: string;
  /** Terms as extracted by the caller (words, identifiers, paths, CJK runs). At most 64 are used. */
  readonly terms: readonly string[];
  readonly mode?: TermMode;
  /** Candidate budget. Default 50, at most 1,000. */
  readonly limit: number;
  /** Defaults to RECALLABLE_KINDS. */
  readonly kinds?: readonly MemoryKind[];
  /** Every tag must be present (exact match). */
  readonly tags?: readonly string[];
  /** Also match `archived` rows (default: `active` rows only). */
  readonly includeArchived?: boolean;
  /** Scope and metadata filter, applied inside the candidate query. */
  readonly filter?: MemoryFilter;
  /** Which version of the facts to search (default: current rows). */
  readonly time?: TimeScope;
  /**
   * Optional: revalidate the hits in the same read. A store that supports it returns with each hit its `brief`,
   * exactly what `revalidateBrief(agentId, [{ id, revision }], briefs)` would return for that hit at that moment
   * (null when that re-read would drop it), and refuses bad options as `revalidateBrief` does. A store that
   * does not ignores the field: its hits have no `brief`, and the caller revalidates them itself.
   */
  readonly briefs?: RevalidateOptions;
}

/** One lexical hit; `score` is higher-is-better (`any` mode: the BM25 score; `all` mode: negated FTS5 bm25, summed over the indexes used). */
export interface LexicalHit {
  readonly id: string;
  readonly revision: number;
  readonly score: number;
  /** For a chunked memory: the best-matching chunk (`content.slice(start, end)` is its window). */
  readonly chunk?: ChunkSpan;
  /**
   * The memory's BM25 score as one whole document (its chunks' term frequencies and lengths summed, with
   * statistics over the agent's memories rather than its chunks), in its own units. Given for every hit when the
   * answer holds a chunked memory, absent otherwise; the retriever's long-memory prior reads it. `score` and
   * the order of the hits stay the best chunk's.
   */
  readonly memoryScore?: number;
  /**
   * With {@link LexicalQuery.briefs}, on a store that supports it: the row's brief as `revalidateBrief` reads it
   * at the hit's revision under those options, or null when that re-read would drop the hit (not current or out
   * of the time scope, archived, another user's). Absent otherwise.
   */
  readonly brief?: MemoryBrief | null;
}

/** Which lexical paths a search used. */
export interface LexicalPaths {
  /** Word index (unicode61 + porter) for Latin/number terms. */
  readonly words: boolean;
  /** CJK terms of ≥ 3 code points: their bigrams (BM25 index) in `any` mode, the trigram index in `all` mode. */
  readonly trigram: boolean;
  /** 1–2 character CJK terms: their unigram or bigram in `any` mode, a bounded `LIKE` scan in `all` mode. */
  readonly like: boolean;
}

/** The answer of a lexical search. */
export interface LexicalResult {
  readonly hits: readonly LexicalHit[];
  readonly paths: LexicalPaths;
  /** The 1–2 character CJK terms that went through the bounded `LIKE` path. */
  readonly likeTerms: readonly string[];
  /** Terms dropped before matching (empty after normalisation, stop words, over the term cap). */
  readonly droppedTerms: number;
}

/** A vector query, limited to one agent's partition. */
export interface VectorQuery {
  readonly agentId: string;
  readonly vector: Float32Array;
  /** k of the k-NN. At most 1,000. */
  readonly k: number;
  /**
   * Kind, scope and metadata filters (every one given must hold). With any of them the store over-fetches
   * neighbours and refills until it has `k` passing rows or has looked at all of the agent's vectors, so a
   * selective filter never starves the top k.
   */
  readonly kinds?: readonly MemoryKind[];
  readonly tags?: readonly string[];
  readonly filter?: MemoryFilter;
  /** Which version of the facts to search (default: every row with a vector, as revalidation decides). */
  readonly time?: TimeScope;
  /**
   * Optional: revalidate the hits in the same read. A store that supports it returns with each hit its `brief`,
   * exactly what `revalidateBrief(agentId, [{ id }], briefs)` would return for that id at that moment (null
   * when that re-read would drop the row), and refuses bad options as `revalidateBrief` does. A store that
   * does not ignores the field: its hits have no `brief`, and the caller revalidates them itself.
   */
  readonly briefs?: RevalidateOptions;
}

/** One vector hit; `distance` is cosine distance (0..2), `similarity` = 1 − distance. */
export interface VectorHit {
  readonly id: string;
  readonly distance: number;
  readonly similarity: number;
  /** For a chunked memory: the nearest chunk (`content.slice(start, end)` is its window). */
  readonly chunk?: ChunkSpan;
  /**
   * With {@link VectorQuery.briefs}, on a store that supports it: the row's brief as `revalidateBrief` reads it
   * under those options, or null when that re-read would drop the row (not current or out of the time scope,
   * archived, another user's). Absent otherwise.
   */
  readonly brief?: MemoryBrief | null;
}

/** A candidate to revalidate: the revision the caller saw, when it knows it. */
export interface RevalidationCandidate {
  readonly id: string;
  readonly revision?: number;
}

/**
 * The fields of a memory that ranking and the kind and tag filters read (what `revalidateBrief` returns):
 * whether the row is current, of this agent and in the time scope is decided by the read itself, so neither
 * those columns nor the content, hash, metadata and bookkeeping are converted (the session and positions
 * serve the retriever's conversation scoring, `validFrom` its time in queries).
 */
export type MemoryBrief = Pick<MemoryRecord, RankedField | 'sessionId' | 'seqFrom' | 'seqTo' | 'validFrom'>;
type RankedField = 'id' | 'kind' | 'revision' | 'importance' | 'tags' | 'createdAt' | 'updatedAt';

/** Options of `revalidate`: a time scope, the user scope (another user's row is left out), and archived rows. */
export interface RevalidateOptions extends TimeScope, UserScope {
  /** Also return `archived` rows (default: `active` rows only). */
  readonly includeArchived?: boolean;
}

/**
 * Options of `supersedeMemory`: the user scope, and who made the correction and why (kept in the superseded
 * version's history entry; bounded and checked as a forget's `actor` and `reason` are).
 */
export interface SupersedeOptions extends UserScope {
  readonly actor?: string;
  readonly reason?: string;
}

/** One source of a merge: a row and the revision the caller read. */
export interface MergeSource {
  readonly id: string;
  readonly expectedRevision: number;
}

/** A row waiting for its embedding. */
export interface PendingEmbedding {
  readonly id: string;
  readonly agentId: string;
  /** The text to embed: the whole content, or the chunk's text when `chunk` is given. */
  readonly content: string;
  readonly revision: number;
  readonly embeddingAttempts: number;
  /** For a memory longer than the chunk budget: the index of the chunk to embed (pass it back in the outcome). */
  readonly chunk?: number;
}

/** One outcome to commit after embedding a batch (`chunk` as listed for a chunked memory). */
export type EmbeddingOutcome =
  | {
      readonly id: string;
      readonly revision: number;
      readonly state: 'ready';
      readonly vector: Float32Array;
      readonly chunk?: number;
    }
  | EmbeddingErrorOutcome
  | { readonly id: string; readonly revision: number; readonly state: 'ftsOnly'; readonly chunk?: number };

/** The real transitions an embedding commit made. `stale` rows changed revision (or vanished) meanwhile. */
export interface EmbeddingCommitResult {
  readonly ready: number;
  readonly error: number;
  readonly ftsOnly: number;
  readonly stale: number;
}

/** Options for listing rows to embed. */
export interface ListPendingOptions {
  /** One agent, or all agents when omitted. */
  readonly agentId?: string;
  /** Default 64, at most 1,000. */
  readonly limit: number;
  /** Also return `error` rows with fewer than this many attempts (bounded retry). Default 0: none. */
  readonly retryErrorsBelowAttempts?: number;
  /** Only these rows (at most 1,000 ids), e.g. the rows a maintenance pass just wrote. */
  readonly ids?: readonly string[];
}

/** Backlog of rows still `pending`. */
export interface EmbeddingBacklog {
  readonly total: number;
  readonly byAgent: Readonly<Record<string, number>>;
}

/** One event to append to a session's archival log. */
export interface EventInput {
  /** Position in the session, an integer ≥ 1, unique per session. */
  readonly seq: number;
  readonly type: EventType;
  /** `user`, `assistant`, `system`, `tool`. */
  readonly role: string;
  readonly content: string;
  /** Tool name for `tool_call` / `tool_result`. */
  readonly toolName?: string;
  /** Structured metadata (tool arguments …); JSON-serialisable. */
  readonly metadata?: Readonly<Record<string, unknown>>;
  readonly createdAt?: number;
  /** The user the event is of (null or omitted: none); the ingestor copies it to the event's memory. */
  readonly userId?: string | null;
}

/** One stored event. */
export interface EventRecord {
  readonly agentId: string;
  readonly sessionId: string;
  readonly seq: number;
  readonly type: EventType;
  readonly role: string;
  readonly content: string;
  readonly toolName: string | null;
  readonly metadata: Readonly<Record<string, unknown>>;
  readonly createdAt: number;
  readonly userId: string | null;
}

/** The answer of an append: re-appending an already stored range adds nothing. */
export interface AppendEventsResult {
  readonly appended: number;
  readonly skipped: number;
  /** The highest seq stored for the session after the append. */
  readonly lastSeq: number;
}

/** A batch of ingested memories and the cursor move that goes with it, applied atomically. */
export interface IngestBatch {
  readonly agentId: string;
  readonly sessionId: string;
  /** The cursor the caller read; a different stored cursor is a conflict and nothing is written. */
  readonly expectedCursor: number;
  readonly nextCursor: number;
  readonly memories: readonly NewMemory[];
}

/** A skill: a named, reusable procedure, unique by name per agent. */
export interface SkillRecord {
  readonly agentId: string;
  readonly name: string;
  readonly description: string;
  readonly content: string;
  readonly createdAt: number;
  readonly updatedAt: number;
}

/** Input of a skill write (create or replace). */
export interface SkillInput {
  readonly agentId: string;
  readonly name: string;
  readonly description: string;
  readonly content: string;
}

/** Store health counts (all agents, or one). Every enum-keyed record is complete (zero-filled). */
export type StoreHealth = StoreHealthDto;

/** The embedder profile a store is bound to; recorded in the meta table as its fingerprint. */
export interface EmbeddingProfile {
  readonly id: string;
  readonly dimensions: number;
}

/** Reading rows: search arms, revalidation, listing. Async; throws `EngramStoreError` only. */
export interface MemoryReadSlice extends SessionReadSlice {
  /** One row (any lifecycle), or null; with a user scope another user's row is null too. */
  getMemory(agentId: string, id: string, scope?: UserScope): Promise<MemoryRecord | null>;
  listMemories(agentId: string, options?: ListMemoriesOptions): Promise<readonly MemoryRecord[]>;
  findByContentHash(
    agentId: string,
    contentHash: string,
    kind?: MemoryKind,
  ): Promise<readonly MemoryRecord[]>;
  searchLexical(query: LexicalQuery): Promise<LexicalResult>;
  /** k-NN inside the agent's partition; throws `ENGRAM_STORE_VECTOR_UNAVAILABLE` when the store has no embedder profile. */
  searchVector(query: VectorQuery): Promise<readonly VectorHit[]>;
  /**
   * Authoritative re-read: only rows of this agent that are `active` (or, with a time scope, valid at `asOf`
   * or superseded; `archived` too with `includeArchived`) and, where given, of the expected revision. Order
   * follows the input.
   */
  revalidate(
    agentId: string,
    candidates: readonly RevalidationCandidate[],
    options?: RevalidateOptions,
  ): Promise<readonly MemoryRecord[]>;
  /**
   * Optional: `revalidate` returning only the fields ranking and filtering read ({@link MemoryBrief}) — the
   * same rows, in the same order, under the same rules. A search revalidates hundreds of candidates and
   * returns a few: it reads the briefs of all and the full rows of the returned ones only (with `revalidate`,
   * at the revision it ranked). A store without it is read in full once.
   */
  revalidateBrief?(
    agentId: string,
    candidates: readonly RevalidationCandidate[],
    options?: RevalidateOptions,
  ): Promise<readonly MemoryBrief[]>;
}

/** What {@link MemoryWriteSlice.insertUniqueMemory} did. */
export interface InsertedMemory {
  /** The new row, or the active exact duplicate already stored (`created: false`). */
  readonly record: MemoryRecord;
  /** False when nothing was written because an exact duplicate is active. */
  readonly created: boolean;
}

/**
 * Writing rows. Every write validates first and changes nothing on bad input.
 *
 * An exact duplicate is never stored twice: at most one `active` row of an agent, user (none: the agent's own)
 * and kind has a given content hash (events excepted: they are archival history, one row per event). An insert whose duplicate is active
 * writes nothing and resolves with the existing row, under any concurrency (it is a constraint of the
 * schema); an update or a lifecycle move that would make a second such row rejects with
 * `ENGRAM_STORE_CONFLICT`.
 */
export interface MemoryWriteSlice {
  /** Inserts a memory; resolves with the stored row (the active exact duplicate's, when there is one). */
  insertMemory(input: NewMemory): Promise<MemoryRecord>;
  /** As `insertMemory`, telling whether this call created the row or found its exact duplicate. */
  insertUniqueMemory(input: NewMemory): Promise<InsertedMemory>;
  /** All or nothing, in one transaction; a duplicate (of a stored row or of an earlier input) gives that row. */
  insertMemories(inputs: readonly NewMemory[]): Promise<readonly MemoryRecord[]>;
  /**
   * Compare-and-set on `revision`: a different stored revision throws `ENGRAM_STORE_REVISION_CONFLICT`; with a
   * user scope, another user's row and the agent's shared one are `ENGRAM_STORE_NOT_FOUND` (a user's call changes
   * only that user's own memories).
   */
  updateMemory(
    agentId: string,
    id: string,
    expectedRevision: number,
    patch: MemoryPatch,
    scope?: UserScope,
  ): Promise<MemoryRecord>;
  /** Bumps `lastAccessedAt` and `accessCount` without changing the revision. */
  recordAccess(agentId: string, ids: readonly string[], at?: number): Promise<void>;
  /** Deletes the row, its FTS entries and its vector together; false when it did not exist. */
  deleteMemory(agentId: string, id: string, scope?: UserScope): Promise<boolean>;
}

/**
 * Lifecycle moves; each is compare-and-set when `expectedRevision` is given. With a user scope, another user's
 * row and the agent's shared one are `ENGRAM_STORE_NOT_FOUND` (as for updates and deletes).
 */
export interface MemoryLifecycleSlice {
  archiveMemory(
    agentId: string,
    id: string,
    expectedRevision?: number,
    scope?: UserScope,
  ): Promise<MemoryRecord>;
  /** Marks `oldId` superseded by a new row (inserted in the same transaction); the link is kept in `supersededBy`. */
  supersedeMemory(
    agentId: string,
    oldId: string,
    expectedRevision: number,
    replacement: NewMemory,
    options?: SupersedeOptions,
  ): Promise<{ readonly superseded: MemoryRecord; readonly replacement: MemoryRecord }>;
  setLifecycle(
    agentId: string,
    id: string,
    expectedRevision: number,
    lifecycle: Lifecycle,
    scope?: UserScope,
  ): Promise<MemoryRecord>;
  /**
   * Folds two or more rows into one: inserts `merged` and marks every source `superseded` by it (with
   * `supersededBy`), compare-and-set on each source's revision, all in one transaction. A source that changed
   * or is gone writes nothing at all.
   */
  mergeMemories(
    agentId: string,
    sources: readonly MergeSource[],
    merged: NewMemory,
    scope?: UserScope,
  ): Promise<{ readonly superseded: readonly MemoryRecord[]; readonly merged: MemoryRecord }>;
}

/** The drain's view: pending rows, revision-checked commits, backlog. */
export interface MemoryEmbeddingSlice {
  readonly embeddingProfile: EmbeddingProfile | null;
  listPendingEmbeddings(options: ListPendingOptions): Promise<readonly PendingEmbedding[]>;
  /**
   * One transaction; a row whose revision changed (or that is gone), or that no longer waits for an embedding
   * (a concurrent commit settled it), is counted `stale` and left untouched: the counts are the transitions made.
   */
  commitEmbeddings(outcomes: readonly EmbeddingOutcome[]): Promise<EmbeddingCommitResult>;
  countEmbeddingBacklog(): Promise<EmbeddingBacklog>;
}

/** The archival event log and its per-session ingestion cursor. */
export interface EventLogSlice {
  appendEvents(
    agentId: string,
    sessionId: string,
    events: readonly EventInput[],
  ): Promise<AppendEventsResult>;
  /** Exactly the stored events with `fromSeq ≤ seq ≤ toSeq`, in order. */
  readEvents(
    agentId: string,
    sessionId: string,
    fromSeq: number,
    toSeq: number,
  ): Promise<readonly EventRecord[]>;
  listEventsAfter(
    agentId: string,
    sessionId: string,
    afterSeq: number,
    limit: number,
  ): Promise<readonly EventRecord[]>;
  listSessions(
    agentId: string,
  ): Promise<readonly { readonly sessionId: string; readonly lastSeq: number; readonly cursor: number }[]>;
  /** Last ingested seq of a session (0 before any ingestion). */
  getCursor(agentId: string, sessionId: string): Promise<number>;
  /** Inserts the batch's memories and moves the cursor, atomically; a cursor mismatch throws `ENGRAM_STORE_REVISION_CONFLICT`. */
  ingestBatch(batch: IngestBatch): Promise<readonly MemoryRecord[]>;
}

/** Skills: unique name per agent. */
export interface SkillSlice {
  writeSkill(input: SkillInput): Promise<{ readonly skill: SkillRecord; readonly created: boolean }>;
  deleteSkill(agentId: string, name: string): Promise<boolean>;
  listSkills(agentId: string): Promise<readonly SkillRecord[]>;
  getSkill(agentId: string, name: string): Promise<SkillRecord | null>;
}

/** Counts for the health page; never throws (returns `{ ok: false }` when the store is unusable). */
export interface MemoryHealthSlice {
  health(agentId?: string): Promise<
    | { readonly ok: true; readonly health: StoreHealth }
    | {
        readonly ok: false;
        readonly code: EngramStoreErrorCode;
        /** The file's last integrity check, when the store checks (a damaged file often cannot be counted). */
        readonly integrity?: StoreIntegrityDto;
      }
  >;
  /** Distinct agents with at least one memory or event. */
  listAgents(): Promise<readonly string[]>;
}

/** Cheap integrity work for the maintenance pass (off the hot path). */
export interface MemoryIntegritySlice {
  /**
   * Resets to `pending` (dropping the vector) this agent's `ready` rows that have no vector or another embedder
   * fingerprint, and re-indexes rows missing from the word index. At most `limit` rows (default 1000).
   */
  repairEmbeddingIntegrity(
    agentId: string,
    options?: { readonly limit?: number },
  ): Promise<{ readonly repaired: number }>;
  /** Deletes vectors whose row is gone or not `ready`, and FTS entries whose row is gone (one agent, or all). */
  pruneOrphanedVectors(agentId?: string): Promise<{ readonly pruned: number }>;
}

/** The whole async store port. Consumers declare the subset they need (`Pick<MemoryStore, …>`). */
export interface MemoryStore
  extends MaintenanceLeaseSlice,
    ProcessBeatSlice,
    MemoryReadSlice,
    MemoryWriteSlice,
    MemoryLifecycleSlice,
    MemoryEmbeddingSlice,
    EventLogSlice,
    SkillSlice,
    MemoryHealthSlice,
    MemoryIntegritySlice,
    MemoryFactsSlice,
    BacklogReadSlice {}
