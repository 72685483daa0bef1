/**
 * The connection context every slice works over: the open database, the prepared-statement cache, the
 * observer, the clock and id factory, the validation limits and the embedder binding (profile, fingerprint,
 * vector lease). One context per open store; the slices are functions of it.
 */

import type { StatementKind } from '@engram/contracts';
import type { EmbeddingProfile, ForgetMode, IntegrityResult } from '@engram/store/port-kit';
import {
  AdapterContext,
  type AdapterContextInit,
  EngramStoreError,
  integrityAllowsWrites,
  integrityResult,
  notifyObserver,
  sha256Hex,
} from '@engram/store/port-kit';
import { type Bm25Settings, DEFAULT_BM25, LexicalBatch } from '../lexical-index.js';
import type { SqliteDatabase, SqliteStatement } from '../native.js';
import { classifySqliteError, RECOVERY_HINT } from './classify.js';
import type { StoreAccess, VectorIndexProgress } from './config.js';
import { acquireVectorLease, releaseVectorLease, vectorGauge } from './registry.js';
import { isVectorChunkFailure, repairVectorChunks } from './vector-chunks.js';
import type { VectorWorker } from './vector-dispatch.js';
import type { VectorIndexOptions, VectorIndexSetting } from './vector-quant.js';

export type { IntegrityResult };

/** A prepared statement that reports each execution to the store's observer. */
export class CountedStatement {
  readonly #stmt: SqliteStatement;
  readonly #kind: StatementKind;
  readonly #count: (kind: StatementKind) => void;

  constructor(stmt: SqliteStatement, kind: StatementKind, count: (kind: StatementKind) => void) {
    this.#stmt = stmt;
    this.#kind = kind;
    this.#count = count;
  }

  run(...params: unknown[]): { changes: number; lastInsertRowid: number | bigint } {
    this.#count(this.#kind);
    return this.#stmt.run(...params);
  }

  get<T>(...params: unknown[]): T | undefined {
    this.#count(this.#kind);
    return this.#stmt.get(...params) as T | undefined;
  }

  all<T>(...params: unknown[]): T[] {
    this.#count(this.#kind);
    return this.#stmt.all(...params) as T[];
  }

  /** Every row as the array of its column values in select order: no object per row (cheaper for wide rows). */
  values<T extends readonly unknown[]>(...params: unknown[]): T[] {
    this.#count(this.#kind);
    this.#stmt.raw(true);
    try {
      return this.#stmt.all(...params) as T[];
    } finally {
      this.#stmt.raw(false);
    }
  }
}

const AGENT_TOKEN_CACHE_MAX = 4096;
/** Statement variants kept (see `StoreContext.variant`); the oldest is dropped past this. */
const VARIANT_CACHE_MAX = 256;

/** What a context is built from (see `openStoreContext`). */
export interface StoreContextInit extends AdapterContextInit {
  readonly db: SqliteDatabase;
  readonly vectorKey: string;
  readonly encrypted: boolean;
  /** `read`: a read-only connection, every write refused. */
  readonly access: StoreAccess;
  /** The connection's busy timeout in milliseconds. */
  readonly busyTimeoutMs: number;
  /** The connection's memory-map size in bytes (0, the default: none; see `SqliteMemoryStoreConfig.mmapSize`). */
  readonly mmapSize?: number;
}

/** The shared state of one open store. */
export class StoreContext extends AdapterContext {
  readonly db: SqliteDatabase;
  readonly encrypted: boolean;
  readonly access: StoreAccess;
  readonly busyTimeoutMs: number;
  readonly mmapSize: number;
  /** Prepared statements by SQL text. */
  readonly statements: Map<string, CountedStatement> = new Map();
  /** Prepared statements by variant key (see `variant`). */
  readonly #variants = new Map<string, { readonly sql: string; readonly stmt: CountedStatement }>();
  readonly #agentTokens = new Map<string, string>();
  readonly #vectorKey: string;
  /**
   * The claim lease of `listPendingEmbeddings` in ms (set at open from `claimLeaseMs`; null: listing claims
   * nothing). See `claims.ts`.
   */
  claimLeaseMs: number | null = null;
  /** Who this store's claims belong to: the store instance's id (set by the store when it opens). */
  claimOwner = '';
  /** True once this store claimed rows (its claims are given up when it closes). */
  claimsTaken = false;
  /** What forgetting does (set at open from the configuration; see `ForgetMode`). */
  forgetMode: ForgetMode = 'erase';
  /** BM25 units indexed by the open transaction, written just before it commits (see `flushLexical`). */
  readonly lexical: LexicalBatch = new LexicalBatch();
  /** BM25 settings of the lexical search (set at open from the configuration). */
  bm25: Bm25Settings = DEFAULT_BM25;
  /** The vector index the store searches with (set at open, or by `resetVectorIndex`; see `vector-quant.ts`). */
  vectorIndex: VectorIndexSetting = { quantization: 'none', rescore: 1 };
  /**
   * The configuration's `vectorIndex` (set at open; `resetVectorIndex` moves an explicit `quantization` to the
   * one it records). An explicit `quantization` is the setting this store holds to; without one the store follows
   * the file's (see `followVectorIndex` in `vector-quant.ts`).
   */
  vectorIndexOption: VectorIndexOptions | undefined = undefined;
  /**
   * The `PRAGMA data_version` at which `vectorIndex` was last confirmed as the file's recorded setting; null while
   * the store opens, for a `:memory:` database (no other connection can change it) and on the vector worker's
   * context: then nothing is checked.
   */
  vectorIndexVersion: number | null = null;
  /** True once the open write transaction confirmed `vectorIndex` (it cannot change until that transaction ends). */
  vectorIndexChecked = false;
  /**
   * False while the quantised table is still being built (a build left unfinished, seen by a read-only open, or
   * a `resetVectorIndex` that failed part-way): searches then run the exact float k-NN, writes still keep the
   * quantised copies (see `vector-quant-build.ts`).
   */
  quantReady = true;
  /** The configuration's `onIndexProgress` (see `vector-quant-build.ts`), set at open. */
  onIndexProgress: ((progress: VectorIndexProgress) => void) | null = null;
  /** The vector worker of `searchVector`, when the store uses one (see `vector-dispatch.ts`). */
  vectorWorker: VectorWorker | null = null;
  /**
   * Set while an import's write transaction (or an export's read transaction, when the export reads on this
   * connection) spans the stream: every other write of this store is refused with `ENGRAM_STORE_BUSY` until it
   * ends, so nothing joins (or breaks) that transaction.
   */
  held: 'import' | 'export' | null = null;
  /**
   * Opens another read-only connection to the store's file for an export's snapshot (set at open for a plain
   * file with the default driver and no encryption); null: an export reads on this connection.
   */
  openReader: (() => SqliteDatabase) | null = null;
  #registeredVector = false;

  constructor(init: StoreContextInit) {
    super(init);
    this.db = init.db;
    this.encrypted = init.encrypted;
    this.access = init.access;
    this.busyTimeoutMs = init.busyTimeoutMs;
    this.mmapSize = init.mmapSize ?? 0;
    this.#vectorKey = init.vectorKey;
  }

  /** Closes the database and returns the vector lease; idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.vectorWorker?.close();
    this.statements.clear();
    this.#variants.clear();
    try {
      this.db.close();
    } finally {
      this.#unregisterVector();
    }
  }

  /** The cached prepared statement for `sql`, counted as `kind`. */
  stmt(kind: StatementKind, sql: string): CountedStatement {
    let stmt = this.statements.get(sql);
    if (stmt === undefined) {
      stmt = new CountedStatement(this.db.prepare(sql), kind, this.count);
      this.statements.set(sql, stmt);
    }
    return stmt;
  }

  /**
   * The prepared statement of one variant of a statement family, by a short key naming its shape (for example
   * the filter clauses that apply): `build` writes its SQL the first time the key is seen, so a hot statement
   * costs one lookup of a short key instead of building and hashing its text on every call. Bounded: past
   * {@link VARIANT_CACHE_MAX} keys the oldest is dropped (and built again if it returns).
   */
  variant(kind: StatementKind, key: string, build: () => string): CountedStatement {
    const hit = this.#variants.get(key);
    if (hit !== undefined) return hit.stmt;
    const sql = build();
    const stmt = this.stmt(kind, sql);
    if (this.#variants.size >= VARIANT_CACHE_MAX) {
      const oldest = this.#variants.keys().next().value;
      if (oldest !== undefined) {
        const dropped = this.#variants.get(oldest);
        this.#variants.delete(oldest);
        if (dropped !== undefined) this.statements.delete(dropped.sql);
      }
    }
    this.#variants.set(key, { sql, stmt });
    return stmt;
  }

  /**
   * Throws when this store must not write: opened with access `read` (`ENGRAM_STORE_READ_ONLY`), or its file
   * failed the integrity check (`ENGRAM_STORE_CORRUPT`, saying how to recover).
   */
  assertWritable(operation: string): void {
    if (this.held !== null) {
      throw new EngramStoreError(
        'ENGRAM_STORE_BUSY',
        `store ${operation} refused: an ${this.held} of this store is running on its connection; retry when it ends`,
      );
    }
    if (this.access === 'read') {
      throw new EngramStoreError(
        'ENGRAM_STORE_READ_ONLY',
        `store ${operation} failed: the store was opened with access 'read' (open it with access 'write' to change it)`,
      );
    }
    // Rows no reader can use (`badRows`) and damaged vector chunks fail the check too, but leave writes allowed:
    // such rows can be forgotten, and a write repairs the chunks.
    if (!integrityAllowsWrites(this.integrity)) {
      throw new EngramStoreError(
        'ENGRAM_STORE_CORRUPT',
        `store ${operation} refused: the database file failed its integrity check, and writing could damage it further; ${RECOVERY_HINT}`,
      );
    }
  }

  /** Writes the BM25 units the open transaction indexed so far (see `LexicalBatch.flush` for its statements). */
  flushLexical(): void {
    this.lexical.flush((sql, ...params) => this.stmt('fts', sql).run(...params), true, {
      get: (sql, ...params) => this.stmt('fts', sql).get(...params),
      all: (sql, ...params) => this.stmt('fts', sql).all(...params),
    });
  }

  /**
   * Runs `fn` in a `BEGIN IMMEDIATE` transaction; rolls back when it throws. Refused when not writable. The
   * BM25 units the transaction indexed are written before it commits, so they commit or roll back with it.
   */
  tx<T>(fn: () => T): T {
    try {
      return this.#tx(fn);
    } catch (err) {
      // A vec0 statement that failed on a damaged chunk blob: the chunk is repaired (its vectors dropped and
      // their memories embedded again, `vector-chunks.ts`) and the transaction runs once more, so a damaged
      // index never blocks a write, forgetting included. So `fn` must keep its state inside itself: a second
      // run starts from what the rolled-back first one left, nothing.
      // Those outside (`importRecords`) repair first.
      if (!isVectorChunkFailure(err) || this.#repairingVectors) throw err;
      this.#repairingVectors = true;
      try {
        const repaired = this.#tx(() => repairVectorChunks(this));
        if (repaired.chunks === 0) throw err;
        this.noteVectorChunksRepaired();
        return this.#tx(fn);
      } finally {
        this.#repairingVectors = false;
      }
    }
  }

  /** After a repair of damaged vector chunks: the recorded integrity no longer counts them. */
  noteVectorChunksRepaired(): void {
    const { integrity } = this;
    if (integrity.damagedVectorChunks === undefined) return;
    this.integrity = integrityResult(true, integrity.badRows ?? 0, integrity.checkedAt ?? this.now(), 0);
  }

  #repairingVectors = false;

  #tx<T>(fn: () => T): T {
    this.assertWritable('write');
    this.stmt('meta', 'BEGIN IMMEDIATE').run();
    this.vectorIndexChecked = false;
    try {
      const result = fn();
      this.flushLexical();
      this.stmt('meta', 'COMMIT').run();
      return result;
    } catch (err) {
      this.lexical.clear();
      if (this.db.inTransaction) {
        try {
          this.stmt('meta', 'ROLLBACK').run();
        } catch {
          // the original error wins
        }
      }
      throw err;
    }
  }

  /**
   * The connection's `PRAGMA data_version`: it changes when another connection (in this process or another)
   * commits to the file, never for this connection's own commits.
   */
  dataVersion(): number {
    return (
      this.stmt('meta', 'PRAGMA data_version').get<{ data_version: number }>()?.data_version ?? Number.NaN
    );
  }

  /** Runs a public operation: closed check, then every non-store error is classified. */
  op<T>(operation: string, fn: () => T): Promise<T> {
    try {
      if (this.closed) {
        throw new EngramStoreError('ENGRAM_STORE_CLOSED', `store ${operation} failed: the store is closed`);
      }
      return Promise.resolve(fn());
    } catch (err) {
      return Promise.reject(classifySqliteError(err, operation));
    }
  }

  /** The FTS token that scopes an agent's postings (a hash, so agent ids never reach the FTS query syntax). */
  agentToken(agentId: string): string {
    let token = this.#agentTokens.get(agentId);
    if (token === undefined) {
      // `x` at the end keeps the Porter stemmer from touching the token.
      token = `a${sha256Hex(agentId).slice(0, 16)}x`;
      if (this.#agentTokens.size >= AGENT_TOKEN_CACHE_MAX) this.#agentTokens.clear();
      this.#agentTokens.set(agentId, token);
    }
    return token;
  }

  /** Binds the store to an embedder profile: the vector lease and the warm-up report follow it. */
  override bindProfile(profile: EmbeddingProfile | null, fingerprint: string): void {
    super.bindProfile(profile, fingerprint);
    this.#updateVectorRegistration();
  }

  /** Takes or returns the vector lease so that it matches the bound profile. */
  #updateVectorRegistration(): void {
    if (this.profile !== null && !this.#registeredVector) {
      acquireVectorLease(this.#vectorKey);
      this.#registeredVector = true;
      this.#emitVectorGauge();
    } else if (this.profile === null && this.#registeredVector) {
      this.#unregisterVector();
    }
  }

  /** Returns the vector lease, if held. */
  #unregisterVector(): void {
    if (!this.#registeredVector) return;
    this.#registeredVector = false;
    releaseVectorLease(this.#vectorKey);
    this.#emitVectorGauge();
  }

  #emitVectorGauge(): void {
    notifyObserver(this.observer, 'onVectorStores', vectorGauge());
  }
}
