/**
 * `PostgresMemoryStore`: the PostgreSQL + pgvector adapter of the `MemoryStore` port, over a `pg` pool. A thin
 * facade: each slice is a module of functions over the connection context (`context.ts`). It behaves as the
 * SQLite store does (the shared conformance suite runs against both); the differences are listed in the
 * package README and tested.
 *
 * Slightly over 400 lines on purpose: one delegating method per method of the port, read as one facade.
 */
import { randomUUID } from 'node:crypto';
import {
  type AppendEventsResult,
  type ConflictLink,
  type ConflictResolution,
  type ConflictState,
  type DeleteAllOptions,
  type DeleteAllResult,
  type EmbeddingBacklog,
  type EmbeddingCommitResult,
  type EmbeddingOutcome,
  type EmbeddingProfile,
  EngramStoreError,
  type EventInput,
  type EventRecord,
  type ExportOptions,
  type ExportRecord,
  type ForgetMode,
  type ForgetOptions,
  type ForgetResult,
  type ImportOptions,
  type ImportSummary,
  type IngestBatch,
  type InsertedMemory,
  type IntegrityResult,
  type LexicalQuery,
  type LexicalResult,
  type Lifecycle,
  type ListMemoriesOptions,
  type ListPendingOptions,
  type MaintenanceClaim,
  type MemoryBrief,
  type MemoryHistory,
  type MemoryKind,
  type MemoryPatch,
  type MemoryRecord,
  type MemoryStore,
  type MergeSource,
  type NewMemory,
  type PendingEmbedding,
  type RevalidateOptions,
  type RevalidationCandidate,
  type SkillInput,
  type SkillRecord,
  type UserScope,
  type VectorHit,
  type VectorQuery,
} from '@engram/store';
import {
  DEFAULT_BM25,
  DEFAULT_MAX_CONTENT_LENGTH,
  invalidInput,
  timeOrderedId,
} from '@engram/store/port-kit';
import pg from 'pg';
import { checkConfig, type PostgresMemoryStoreConfig } from './config.js';

export type { PostgresMemoryStoreConfig } from './config.js';

import { PgContext } from './context.js';
import * as embedding from './embedding.js';
import { classifyPgError } from './errors.js';
import * as events from './events.js';
import * as facts from './facts.js';
import * as healthSlice from './health.js';
import { history } from './history.js';
import { checkIntegrity } from './integrity.js';
import * as lease from './lease.js';
import * as lifecycle from './lifecycle.js';
import * as read from './read.js';
import { migrate } from './schema.js';
import { searchLexical } from './search-lexical.js';
import { searchVector } from './search-vector.js';
import * as skills from './skills.js';
import { exportRecords } from './transfer-export.js';
import { importRecords } from './transfer-import.js';
import * as write from './write.js';

/** What a store is bound to, as recorded in its meta table. */
export interface PostgresMemoryStoreInfo {
  readonly schemaVersion: number;
  readonly fingerprint: string;
  /** The BM25 implementation the lexical arm runs. */
  readonly lexicalEngine: 'statistics-tables';
}

/**
 * The PostgreSQL memory store. Open it with `createPostgresMemoryStore`; close it with `close()`.
 * Contract: every method is async and rejects with `EngramStoreError` only, except `health`, which never rejects.
 */
export class PostgresMemoryStore implements MemoryStore {
  readonly maxContentLength: number;
  readonly #ctx: PgContext;

  /** Use `createPostgresMemoryStore` (it runs the migrations). */
  constructor(ctx: PgContext) {
    this.#ctx = ctx;
    this.maxContentLength = ctx.limits.maxContentLength;
  }

  get embeddingProfile(): EmbeddingProfile | null {
    return this.#ctx.profile;
  }

  get info(): PostgresMemoryStoreInfo {
    return {
      schemaVersion: this.#ctx.schemaVersion,
      fingerprint: this.#ctx.fingerprint,
      lexicalEngine: this.#ctx.lexicalEngine,
    };
  }

  get closed(): boolean {
    return this.#ctx.closed;
  }

  /** The last integrity check in this process (`notChecked` until `checkIntegrity` runs). */
  get integrity(): IntegrityResult {
    const { state, checkedAt } = this.#ctx.integrity;
    return { state, checkedAt };
  }

  /**
   * Checks what the store's schema relies on (the duplicate rule's index, the BM25 statistics) and records it;
   * the server itself guarantees page integrity. A failed check is reported, not enforced (see the README).
   */
  checkIntegrity(): Promise<IntegrityResult> {
    return checkIntegrity(this.#ctx);
  }

  /** Streams the store's records (or one agent's) in the export format of `@engram/store`. */
  exportRecords(options?: ExportOptions): AsyncIterable<ExportRecord> {
    return exportRecords(this.#ctx, options);
  }

  /** Imports an export stream (of either store): validated, batched, idempotent. */
  importRecords(
    records: AsyncIterable<ExportRecord> | Iterable<ExportRecord>,
    options?: ImportOptions,
  ): Promise<ImportSummary> {
    return importRecords(this.#ctx, records, options);
  }

  /** Ends the pool the store created (a pool given in the config stays open); idempotent. */
  async close(): Promise<void> {
    if (this.#ctx.closed) return;
    this.#ctx.closed = true;
    if (this.#ctx.ownsPool) await this.#ctx.pool.end();
  }

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
    return searchVector(this.#ctx, query);
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

  listPendingEmbeddings(options: ListPendingOptions): Promise<readonly PendingEmbedding[]> {
    return embedding.listPendingEmbeddings(this.#ctx, options);
  }
  commitEmbeddings(outcomes: readonly EmbeddingOutcome[]): Promise<EmbeddingCommitResult> {
    return embedding.commitEmbeddings(this.#ctx, outcomes);
  }
  countEmbeddingBacklog(): Promise<EmbeddingBacklog> {
    return embedding.countEmbeddingBacklog(this.#ctx);
  }
  /** The explicit re-index: drops every vector, rebinds to `profile` (or none), resets every row to `pending`. */
  resetEmbeddings(profile: EmbeddingProfile | null): Promise<void> {
    return embedding.resetEmbeddings(this.#ctx, profile);
  }

  repairEmbeddingIntegrity(
    agentId: string,
    options?: { readonly limit?: number },
  ): Promise<{ readonly repaired: number }> {
    return healthSlice.repairEmbeddingIntegrity(this.#ctx, agentId, options);
  }
  pruneOrphanedVectors(agentId?: string): Promise<{ readonly pruned: number }> {
    return healthSlice.pruneOrphanedVectors(this.#ctx, agentId);
  }

  /** The agent's maintenance lease (server clock); without `owner`, this store instance's worker id. */
  claimMaintenance(
    agentId: string,
    options: { readonly leaseMs: number; readonly owner?: string },
  ): Promise<MaintenanceClaim> {
    return lease.claimMaintenance(this.#ctx, agentId, options);
  }
  releaseMaintenance(agentId: string, options?: { readonly owner?: string }): Promise<void> {
    return lease.releaseMaintenance(this.#ctx, agentId, options);
  }

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

  health(agentId?: string): Promise<healthSlice.HealthResult> {
    return healthSlice.health(this.#ctx, agentId);
  }
  listAgents(): Promise<readonly string[]> {
    return healthSlice.listAgents(this.#ctx);
  }
}

/**
 * Opens a PostgreSQL memory store: connects, migrates under the advisory lock and binds the embedder profile.
 * Rejects with `EngramStoreError` (unreachable server → `ENGRAM_STORE_IO`, schema too new, fingerprint mismatch …).
 */
export async function createPostgresMemoryStore(
  config: PostgresMemoryStoreConfig,
): Promise<PostgresMemoryStore> {
  checkConfig(config);
  const ownsPool = config.pool === undefined;
  const pool =
    config.pool ??
    new pg.Pool({
      connectionString: config.connectionString,
      max: config.poolSize ?? 10,
      ...(config.ssl === undefined ? {} : { ssl: config.ssl }),
    });
  // An idle client's error (the server went away) must not crash the process; the next query reports it.
  if (ownsPool) pool.on('error', () => {});
  const ctx = new PgContext({
    pool,
    ownsPool,
    observer: config.observer ?? {},
    now: config.now ?? Date.now,
    idFactory: config.idFactory ?? timeOrderedId,
    limits: { maxContentLength: config.maxContentLength ?? DEFAULT_MAX_CONTENT_LENGTH },
    bm25: { k1: config.lexical?.k1 ?? DEFAULT_BM25.k1, b: config.lexical?.b ?? DEFAULT_BM25.b },
    claimLeaseMs: config.claimLeaseMs ?? null,
    workerId: randomUUID(),
    vectorSearch: {
      efSearch: config.vectorSearch?.efSearch ?? 100,
      exact: config.vectorSearch?.exact ?? false,
    },
    analyzeAfterRows: config.analyzeAfterRows === undefined ? 1000 : config.analyzeAfterRows,
    forgetMode: config.forget ?? 'erase',
  });
  try {
    const result = await migrate(ctx, config.embedding);
    ctx.schemaVersion = result.schemaVersion;
    ctx.bindProfile(result.profile, result.fingerprint);
    return new PostgresMemoryStore(ctx);
  } catch (err) {
    if (ownsPool) await pool.end().catch(() => {});
    throw err instanceof EngramStoreError ? err : classifyPgError(err, 'open');
  }
}

/** True for a `postgres://` or `postgresql://` URL (what `--db` and `--store` accept besides a file path). */
export function isPostgresUrl(value: string): boolean {
  return /^postgres(ql)?:\/\//.test(value);
}

/**
 * What a database records without migrating it: `'new'` when it holds no Engram schema yet, else the embedder
 * profile it is bound to (null: none). A composition root reads it to pick the embedder, as it reads a SQLite
 * file's fingerprint. Rejects with `EngramStoreError` (an unreachable server is `ENGRAM_STORE_IO`).
 */
export async function readPostgresBinding(
  connectionString: string,
): Promise<EmbeddingProfile | null | 'new'> {
  if (typeof connectionString !== 'string' || !isPostgresUrl(connectionString)) {
    throw invalidInput('connection string');
  }
  const client = new pg.Client({ connectionString });
  client.on('error', () => {});
  try {
    await client.connect();
    const meta = await client.query<{ t: string | null }>("SELECT to_regclass('engram_meta')::text AS t");
    if (meta.rows[0]?.t === null || meta.rows[0]?.t === undefined) return 'new';
    const fp = await client.query<{ value: string }>(
      "SELECT value FROM engram_meta WHERE key = 'embedding_fingerprint'",
    );
    const value = fp.rows[0]?.value;
    if (value === undefined) return 'new';
    if (value === 'none') return null;
    const at = value.lastIndexOf(':');
    const dimensions = Number(value.slice(at + 1));
    if (at <= 0 || !Number.isSafeInteger(dimensions)) {
      throw new EngramStoreError('ENGRAM_STORE_CORRUPT', 'the recorded embedder fingerprint is malformed');
    }
    return { id: value.slice(0, at), dimensions };
  } catch (err) {
    throw err instanceof EngramStoreError ? err : classifyPgError(err, 'readBinding');
  } finally {
    await client.end().catch(() => {});
  }
}
