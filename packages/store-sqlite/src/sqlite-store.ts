/**
 * `SqliteMemoryStore`: the SQLite adapter of the `MemoryStore` port (better-sqlite3 + FTS5 + sqlite-vec).
 * A thin facade: the connection context (`sqlite/context.ts`) is opened by `sqlite/open.ts`, and each slice of
 * the port is implemented as functions over that context in its own module under `sqlite/`.
 * Async methods, synchronous inside; every write is one transaction; every driver error is classified.
 * The port's methods are forwarded by the port's `MemoryStoreFacade`; this file names the slice table.
 */

import { randomUUID } from 'node:crypto';
import type { MemoryStore, StoreSlices } from '@engram/store/port-kit';
import { isEngramStoreError, MemoryStoreFacade } from '@engram/store/port-kit';
import { TOKENIZER_DESCRIPTION } from './schema.js';
import * as backlog from './sqlite/backlog.js';
import { releaseOwnClaims } from './sqlite/claims.js';
import { classifySqliteError } from './sqlite/classify.js';
import type { SqliteMemoryStoreConfig, SqliteMemoryStoreInfo, StoreAccess } from './sqlite/config.js';
import { isValidKey, keyBytes } from './sqlite/config.js';
import type { StoreContext } from './sqlite/context.js';
import * as embedding from './sqlite/embedding.js';
import * as events from './sqlite/events.js';
import { exportRecords } from './sqlite/export.js';
import * as facts from './sqlite/facts.js';
import * as healthSlice from './sqlite/health.js';
import { history } from './sqlite/history.js';
import { importRecords } from './sqlite/import.js';
import * as integrity from './sqlite/integrity.js';
import * as lease from './sqlite/lease.js';
import * as lifecycle from './sqlite/lifecycle.js';
import { openStoreContext } from './sqlite/open.js';
import * as beats from './sqlite/process-beats.js';
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
 * The functions serving the port's methods, each over the connection context; `leaseOwner` is the owner of
 * the maintenance leases the store takes without naming one.
 */
function sqliteSlices(leaseOwner: string): StoreSlices<StoreContext> {
  return {
    ...read,
    ...write,
    ...lifecycle,
    ...facts,
    ...embedding,
    ...integrity,
    ...events,
    ...skills,
    ...healthSlice,
    listFailedEmbeddings: backlog.listFailedEmbeddings,
    listSessionSummaries: backlog.listSessionSummaries,
    publishProcessBeat: beats.publishProcessBeat,
    removeProcessBeat: beats.removeProcessBeat,
    listProcessBeats: beats.listProcessBeats,
    searchLexical,
    searchVector: (ctx, query) => searchVector(ctx, query, ctx.vectorWorker?.offload),
    history,
    exportRecords,
    importRecords,
    claimMaintenance: (ctx, agentId, options) => lease.claimMaintenance(ctx, leaseOwner, agentId, options),
    releaseMaintenance: (ctx, agentId, options) =>
      lease.releaseMaintenance(ctx, leaseOwner, agentId, options),
  };
}

/**
 * The SQLite memory store. Create it with `createSqliteMemoryStore`; close it with `close()`.
 *
 * Contract: every method is async and rejects with `EngramStoreError` only (never a raw driver error), except
 * `health`, which never rejects. Writes validate their input first and change nothing on bad input. The port's
 * methods are the facade's (`MemoryStoreFacade`), each served by the slice table above; the health slice's
 * `checkIntegrity` runs `PRAGMA quick_check` (O(file size)), and after `failed` every write rejects with
 * `ENGRAM_STORE_CORRUPT`. Transfer: `exportRecords` holds one page of rows at a time; `importRecords` is
 * batched (one transaction per batch), idempotent, recomputes derived rows and keeps vectors only when the
 * export's embedder profile is the store's.
 */
export class SqliteMemoryStore extends MemoryStoreFacade<StoreContext> implements MemoryStore {
  /** The database path as configured (`':memory:'` or a file). */
  readonly path: string;
  readonly #ctx: StoreContext;

  constructor(config: SqliteMemoryStoreConfig) {
    const ctx = openStoreContext(config);
    // One id for the store instance: the owner of its maintenance leases and of its embedding claims.
    const owner = `store-${randomUUID()}`;
    ctx.claimOwner = owner;
    super(ctx, sqliteSlices(owner));
    this.#ctx = ctx;
    contexts.set(this, ctx);
    this.path = config.path;
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

  /** How the store was opened: `read` (read-only connection, writes refused) or `write`. */
  get access(): StoreAccess {
    return this.#ctx.access;
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
    releaseOwnClaims(this.#ctx);
    this.#ctx.close();
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
}

/** Opens (or creates) a SQLite memory store; throws `EngramStoreError` (schema too new, fingerprint or vector index mismatch …). */
export function createSqliteMemoryStore(config: SqliteMemoryStoreConfig): SqliteMemoryStore {
  try {
    return new SqliteMemoryStore(config);
  } catch (err) {
    throw isEngramStoreError(err) ? err : classifySqliteError(err, 'open');
  }
}
