/**
 * `SqliteMemoryStore`: the SQLite adapter of the `MemoryStore` port (better-sqlite3 + FTS5 + sqlite-vec).
 * A thin facade: the connection context (`sqlite/context.ts`) is opened by `sqlite/open.ts`, and each slice of
 * the port is implemented as functions over that context in its own module under `sqlite/`.
 * Async methods, synchronous inside; every write is one transaction; every driver error is classified.
 * Longer than 400 lines because it is the list of the port's methods, each a documented one-line delegation.
 */

import { randomUUID } from 'node:crypto';
import type {
  AppendEventsResult,
  ClaimMaintenanceOptions,
  ConflictLink,
  ConflictResolution,
  ConflictState,
  DeleteAllOptions,
  DeleteAllResult,
  EmbeddingBacklog,
  EmbeddingCommitResult,
  EmbeddingOutcome,
  EmbeddingProfile,
  EventInput,
  EventRecord,
  ExportOptions,
  ExportRecord,
  ForgetMode,
  ForgetOptions,
  ForgetResult,
  ImportOptions,
  ImportSummary,
  IngestBatch,
  InsertedMemory,
  LexicalQuery,
  LexicalResult,
  Lifecycle,
  ListMemoriesOptions,
  ListPendingOptions,
  MaintenanceClaim,
  MemoryBrief,
  MemoryHistory,
  MemoryKind,
  MemoryPatch,
  MemoryRecord,
  MemoryStore,
  MergeSource,
  NewMemory,
  PendingEmbedding,
  RevalidateOptions,
  RevalidationCandidate,
  SkillInput,
  SkillRecord,
  UserScope,
  VectorHit,
  VectorQuery,
} from '@engram/store/port-kit';
import { isEngramStoreError } from '@engram/store/port-kit';
import { TOKENIZER_DESCRIPTION } from './schema.js';
import { classifySqliteError } from './sqlite/classify.js';
import type {
  RepairEmbeddingIntegrityOptions,
  SqliteMemoryStoreConfig,
  SqliteMemoryStoreInfo,
  StoreAccess,
} from './sqlite/config.js';
import { isValidKey, keyBytes } from './sqlite/config.js';
import type { IntegrityResult, StoreContext } from './sqlite/context.js';
import * as embedding from './sqlite/embedding.js';
import * as events from './sqlite/events.js';
import { exportRecords } from './sqlite/export.js';
import * as facts from './sqlite/facts.js';
import { checkIntegrity, type HealthResult, health, listAgents } from './sqlite/health.js';
import { history } from './sqlite/history.js';
import { importRecords } from './sqlite/import.js';
import * as integrity from './sqlite/integrity.js';
import * as lease from './sqlite/lease.js';
import * as lifecycle from './sqlite/lifecycle.js';
import { openStoreContext } from './sqlite/open.js';
import * as read from './sqlite/read.js';
import { rekey } from './sqlite/rekey.js';
import { searchLexical } from './sqlite/search-lexical.js';
import { searchVector } from './sqlite/search-vector.js';
import * as skills from './sqlite/skills.js';
import type { VectorWorkerProbe } from './sqlite/vector-dispatch.js';
import type { VectorIndexOptions, VectorIndexSetting } from './sqlite/vector-quant.js';
import * as write from './sqlite/write.js';

export type {
  RepairEmbeddingIntegrityOptions,
  SqliteMemoryStoreConfig,
  SqliteMemoryStoreInfo,
  SqliteStoreEncryption,
  StoreAccess,
  VectorIndexProgress,
} from './sqlite/config.js';
export { DEFAULT_MMAP_SIZE } from './sqlite/config.js';
export type { IntegrityResult } from './sqlite/context.js';
export { embeddingFingerprint } from './sqlite/migrate.js';
export { LIKE_MATCH_SCORE } from './sqlite/search-lexical.js';
export type { VectorIndexOptions, VectorIndexSetting, VectorQuantization } from './sqlite/vector-quant.js';

const contexts = new WeakMap<SqliteMemoryStore, StoreContext>();

/** The state of a store's vector worker (null: the store does not use one); for tests and tools. */
export function vectorWorkerProbe(store: SqliteMemoryStore): VectorWorkerProbe | null {
  return contexts.get(store)?.vectorWorker?.probe ?? null;
}

/**
 * The SQLite memory store. Create it with `createSqliteMemoryStore`; close it with `close()`.
 *
 * Contract: every method is async and rejects with `EngramStoreError` only (never a raw driver error), except
 * `health`, which never rejects. Writes validate their input first and change nothing on bad input.
 */
export class SqliteMemoryStore implements MemoryStore {
  /** The database path as configured (`':memory:'` or a file). */
  readonly path: string;
  /** The content length cap in UTF-16 code units. */
  readonly maxContentLength: number;
  readonly #ctx: StoreContext;
  /** The owner of maintenance leases this instance takes without naming one. */
  readonly #leaseOwner: string = `store-${randomUUID()}`;

  constructor(config: SqliteMemoryStoreConfig) {
    this.#ctx = openStoreContext(config);
    contexts.set(this, this.#ctx);
    this.path = config.path;
    this.maxContentLength = this.#ctx.limits.maxContentLength;
  }

  /** The embedder profile the store is bound to, or null (no vector index). */
  get embeddingProfile(): EmbeddingProfile | null {
    return this.#ctx.profile;
  }

  /** Schema version, embedder fingerprint and tokenizer, as recorded in the meta table. */
  get info(): SqliteMemoryStoreInfo {
    const ctx = this.#ctx;
    return {
      schemaVersion: ctx.schemaVersion,
      fingerprint: ctx.fingerprint,
      tokenizer: TOKENIZER_DESCRIPTION,
    };
  }

  /** True once `close()` was called. */
  get closed(): boolean {
    return this.#ctx.closed;
  }

  /** How the store was opened: `read` (read-only connection, writes refused) or `write`. */
  get access(): StoreAccess {
    return this.#ctx.access;
  }

  /**
   * The file's last integrity check in this process: `ok`, `failed` (every write is refused with
   * `ENGRAM_STORE_CORRUPT`) or `notChecked`, and when it ran. See `checkIntegrity`.
   */
  get integrity(): IntegrityResult {
    const { state, checkedAt } = this.#ctx.integrity;
    return { state, checkedAt };
  }

  /** True when the store was opened with `encryption`. */
  get encrypted(): boolean {
    return this.#ctx.encrypted;
  }

  /**
   * Key rotation: re-encrypts the whole database with `newKey` (`sqlite3_rekey`). Only for a store opened with
   * `encryption`; the file must not be open elsewhere (the journal leaves WAL mode for the rewrite and returns
   * to it; another connection makes that `ENGRAM_STORE_BUSY`). Later opens need the new key.
   */
  async rekey(newKey: string | Uint8Array): Promise<void> {
    // The vector worker's connection would keep the file open: it is stopped first, and reopens with the new key.
    const worker = this.#ctx.vectorWorker;
    if (worker !== null) await worker.stop();
    await rekey(this.#ctx, newKey);
    if (worker !== null && isValidKey(newKey)) worker.rekeyed(keyBytes(newKey));
  }

  /** Closes the database; idempotent. Every later call rejects with `ENGRAM_STORE_CLOSED`. */
  close(): void {
    this.#ctx.close();
  }

  // ---------------------------------------------------------------- read slice (sqlite/read.ts, search-*.ts)

  getMemory(agentId: string, id: string, scope?: UserScope): Promise<MemoryRecord | null> {
    return read.getMemory(this.#ctx, agentId, id, scope);
  }
  listMemories(agentId: string, options?: ListMemoriesOptions): Promise<readonly MemoryRecord[]> {
    return read.listMemories(this.#ctx, agentId, options);
  }
  findByContentHash(agentId: string, hash: string, kind?: MemoryKind): Promise<readonly MemoryRecord[]> {
    return read.findByContentHash(this.#ctx, agentId, hash, kind);
  }
  searchLexical(query: LexicalQuery): Promise<LexicalResult> {
    return searchLexical(this.#ctx, query);
  }
  searchVector(query: VectorQuery): Promise<readonly VectorHit[]> {
    return searchVector(this.#ctx, query, this.#ctx.vectorWorker?.offload);
  }
  revalidate(
    agentId: string,
    candidates: readonly RevalidationCandidate[],
    options?: RevalidateOptions,
  ): Promise<readonly MemoryRecord[]> {
    return read.revalidate(this.#ctx, agentId, candidates, options);
  }
  revalidateBrief(
    agentId: string,
    candidates: readonly RevalidationCandidate[],
    options?: RevalidateOptions,
  ): Promise<readonly MemoryBrief[]> {
    return read.revalidateBrief(this.#ctx, agentId, candidates, options);
  }

  // ---------------------------------------------------------------- write slice (sqlite/write.ts)

  insertMemory(input: NewMemory): Promise<MemoryRecord> {
    return write.insertMemory(this.#ctx, input);
  }
  insertUniqueMemory(input: NewMemory): Promise<InsertedMemory> {
    return write.insertUniqueMemory(this.#ctx, input);
  }
  insertMemories(inputs: readonly NewMemory[]): Promise<readonly MemoryRecord[]> {
    return write.insertMemories(this.#ctx, inputs);
  }
  updateMemory(
    agentId: string,
    id: string,
    expectedRevision: number,
    patch: MemoryPatch,
    scope?: UserScope,
  ): Promise<MemoryRecord> {
    return write.updateMemory(this.#ctx, agentId, id, expectedRevision, patch, scope);
  }
  recordAccess(agentId: string, ids: readonly string[], at?: number): Promise<void> {
    return write.recordAccess(this.#ctx, agentId, ids, at);
  }
  deleteMemory(agentId: string, id: string, scope?: UserScope): Promise<boolean> {
    return write.deleteMemory(this.#ctx, agentId, id, scope);
  }

  // ---------------------------------------------------------------- lifecycle slice (sqlite/lifecycle.ts)

  archiveMemory(
    agentId: string,
    id: string,
    expectedRevision?: number,
    scope?: UserScope,
  ): Promise<MemoryRecord> {
    return lifecycle.archiveMemory(this.#ctx, agentId, id, expectedRevision, scope);
  }
  supersedeMemory(
    agentId: string,
    oldId: string,
    expectedRevision: number,
    replacement: NewMemory,
    scope?: UserScope,
  ): Promise<{ readonly superseded: MemoryRecord; readonly replacement: MemoryRecord }> {
    return lifecycle.supersedeMemory(this.#ctx, agentId, oldId, expectedRevision, replacement, scope);
  }
  setLifecycle(
    agentId: string,
    id: string,
    expectedRevision: number,
    to: Lifecycle,
    scope?: UserScope,
  ): Promise<MemoryRecord> {
    return lifecycle.setLifecycle(this.#ctx, agentId, id, expectedRevision, to, scope);
  }
  mergeMemories(
    agentId: string,
    sources: readonly MergeSource[],
    merged: NewMemory,
    scope?: UserScope,
  ): Promise<{ readonly superseded: readonly MemoryRecord[]; readonly merged: MemoryRecord }> {
    return lifecycle.mergeMemories(this.#ctx, agentId, sources, merged, scope);
  }

  // ---------------------------------------------------------------- facts slice (sqlite/facts.ts, history.ts)

  /** The forget setting this store was opened with. */
  get forgetMode(): ForgetMode {
    return this.#ctx.forgetMode;
  }
  history(agentId: string, id: string, scope?: UserScope): Promise<MemoryHistory> {
    return history(this.#ctx, agentId, id, scope);
  }
  forgetMemory(agentId: string, id: string, options?: ForgetOptions & UserScope): Promise<ForgetResult> {
    return facts.forgetMemory(this.#ctx, agentId, id, options);
  }
  deleteAll(agentId: string, options?: DeleteAllOptions): Promise<DeleteAllResult> {
    return facts.deleteAll(this.#ctx, agentId, options);
  }
  linkConflict(agentId: string, olderId: string, newerId: string, reason: string): Promise<boolean> {
    return facts.linkConflict(this.#ctx, agentId, olderId, newerId, reason);
  }
  listConflicts(
    agentId: string,
    options?: { readonly ids?: readonly string[]; readonly state?: ConflictState; readonly limit?: number },
  ): Promise<readonly ConflictLink[]> {
    return facts.listConflicts(this.#ctx, agentId, options);
  }
  resolveConflict(
    agentId: string,
    olderId: string,
    newerId: string,
    resolution: ConflictResolution,
  ): Promise<ConflictLink> {
    return facts.resolveConflict(this.#ctx, agentId, olderId, newerId, resolution);
  }

  // ---------------------------------------------------------------- embedding slice (sqlite/embedding.ts)

  listPendingEmbeddings(options: ListPendingOptions): Promise<readonly PendingEmbedding[]> {
    return embedding.listPendingEmbeddings(this.#ctx, options);
  }
  commitEmbeddings(outcomes: readonly EmbeddingOutcome[]): Promise<EmbeddingCommitResult> {
    return embedding.commitEmbeddings(this.#ctx, outcomes);
  }
  countEmbeddingBacklog(): Promise<EmbeddingBacklog> {
    return embedding.countEmbeddingBacklog(this.#ctx);
  }
  /**
   * The explicit re-index: drops every vector, recreates the vector table for `profile` (or none), resets every
   * row to `pending` and records the new fingerprint.
   */
  resetEmbeddings(profile: EmbeddingProfile | null): Promise<void> {
    return embedding.resetEmbeddings(this.#ctx, profile);
  }
  /**
   * The explicit change of the vector index quantisation (`none`, `int8`, `bit`) and its rescoring factor: the
   * quantised table is rebuilt from the stored float vectors (nothing is re-embedded) and the setting recorded.
   */
  resetVectorIndex(options: VectorIndexOptions): Promise<{ readonly indexed: number }> {
    return embedding.resetVectorIndex(this.#ctx, options);
  }

  /** The vector index the store searches with: the recorded quantisation and the rescoring factor. */
  get vectorIndex(): VectorIndexSetting {
    const { quantization, rescore } = this.#ctx.vectorIndex;
    return { quantization, rescore };
  }
  /**
   * The file's vector index setting, read now as the next vector write or search would: resolves with the
   * setting in use (the file's, adopted, for a store opened without `vectorIndex`); rejects with
   * `ENGRAM_STORE_VECTOR_INDEX_MISMATCH` when another connection's `resetVectorIndex` left another kind than this
   * store was opened with (its vector writes and searches are refused until it is reopened).
   */
  refreshVectorIndex(): Promise<VectorIndexSetting> {
    return embedding.refreshVectorIndex(this.#ctx);
  }

  // ---------------------------------------------------------------- integrity slice (sqlite/integrity.ts)

  repairEmbeddingIntegrity(
    agentId: string,
    options?: RepairEmbeddingIntegrityOptions,
  ): Promise<{ readonly repaired: number }> {
    return integrity.repairEmbeddingIntegrity(this.#ctx, agentId, options);
  }
  pruneOrphanedVectors(agentId?: string): Promise<{ readonly pruned: number }> {
    return integrity.pruneOrphanedVectors(this.#ctx, agentId);
  }

  // ---------------------------------------------------------------- maintenance lease (sqlite/lease.ts)

  claimMaintenance(agentId: string, options: ClaimMaintenanceOptions): Promise<MaintenanceClaim> {
    return lease.claimMaintenance(this.#ctx, this.#leaseOwner, agentId, options);
  }
  releaseMaintenance(agentId: string, options?: { readonly owner?: string }): Promise<void> {
    return lease.releaseMaintenance(this.#ctx, this.#leaseOwner, agentId, options);
  }

  // ---------------------------------------------------------------- event log (sqlite/events.ts)

  appendEvents(
    agentId: string,
    sessionId: string,
    input: readonly EventInput[],
  ): Promise<AppendEventsResult> {
    return events.appendEvents(this.#ctx, agentId, sessionId, input);
  }
  readEvents(
    agentId: string,
    sessionId: string,
    fromSeq: number,
    toSeq: number,
  ): Promise<readonly EventRecord[]> {
    return events.readEvents(this.#ctx, agentId, sessionId, fromSeq, toSeq);
  }
  listEventsAfter(
    agentId: string,
    sessionId: string,
    afterSeq: number,
    limit: number,
  ): Promise<readonly EventRecord[]> {
    return events.listEventsAfter(this.#ctx, agentId, sessionId, afterSeq, limit);
  }
  listSessions(
    agentId: string,
  ): Promise<readonly { readonly sessionId: string; readonly lastSeq: number; readonly cursor: number }[]> {
    return events.listSessions(this.#ctx, agentId);
  }
  getCursor(agentId: string, sessionId: string): Promise<number> {
    return events.getCursor(this.#ctx, agentId, sessionId);
  }
  ingestBatch(batch: IngestBatch): Promise<readonly MemoryRecord[]> {
    return events.ingestBatch(this.#ctx, batch);
  }

  // ---------------------------------------------------------------- skills slice (sqlite/skills.ts)

  writeSkill(input: SkillInput): Promise<{ readonly skill: SkillRecord; readonly created: boolean }> {
    return skills.writeSkill(this.#ctx, input);
  }
  deleteSkill(agentId: string, name: string): Promise<boolean> {
    return skills.deleteSkill(this.#ctx, agentId, name);
  }
  listSkills(agentId: string): Promise<readonly SkillRecord[]> {
    return skills.listSkills(this.#ctx, agentId);
  }
  getSkill(agentId: string, name: string): Promise<SkillRecord | null> {
    return skills.getSkill(this.#ctx, agentId, name);
  }

  // ---------------------------------------------------------------- transfer (sqlite/export.ts, import.ts)

  /**
   * Streams the file's records (or one agent's) in the export format of `transfer.ts`: a header, memories,
   * events, cursors, skills, an end record. One page of rows is held at a time.
   */
  exportRecords(options?: ExportOptions): AsyncIterable<ExportRecord> {
    return exportRecords(this.#ctx, options);
  }

  /**
   * Imports an export stream: validated, batched (one transaction per batch), idempotent (a stored record
   * with the same values is left alone, one with other values is a conflict and is kept as stored). Derived
   * rows are recomputed; vectors are kept only when the export's embedder profile is the store's.
   */
  importRecords(
    records: AsyncIterable<ExportRecord> | Iterable<ExportRecord>,
    options?: ImportOptions,
  ): Promise<ImportSummary> {
    return importRecords(this.#ctx, records, options);
  }

  // ---------------------------------------------------------------- health slice (sqlite/health.ts)

  /**
   * Runs the file's integrity check now (`PRAGMA quick_check`; O(file size)) and records it: `health` reports
   * it, and after `failed` every write rejects with `ENGRAM_STORE_CORRUPT` saying how to recover. A write open
   * runs it by itself for files up to 256 MiB.
   */
  checkIntegrity(): Promise<IntegrityResult> {
    return checkIntegrity(this.#ctx);
  }

  health(agentId?: string): Promise<HealthResult> {
    return health(this.#ctx, agentId);
  }
  listAgents(): Promise<readonly string[]> {
    return listAgents(this.#ctx);
  }
}

/** Opens (or creates) a SQLite memory store; throws `EngramStoreError` (schema too new, fingerprint or vector index mismatch …). */
export function createSqliteMemoryStore(config: SqliteMemoryStoreConfig): SqliteMemoryStore {
  try {
    return new SqliteMemoryStore(config);
  } catch (err) {
    throw isEngramStoreError(err) ? err : classifySqliteError(err, 'open');
  }
}
