/**
 * `SqliteMemoryStore`: the SQLite adapter of the `MemoryStore` port (better-sqlite3 + FTS5 + sqlite-vec).
 * Async methods, synchronous inside; every write is one transaction; every driver error is classified here.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { z } from 'zod';
import { classifySqliteError, EngramStoreError, invalidInput, isEngramStoreError } from './errors.js';
import { buildMatch, type LexicalPlan, planLexicalQuery } from './lexical-plan.js';
import {
  type EncryptionCipher,
  openDatabase,
  type SqliteDatabase,
  type SqliteDriver,
  type SqliteStatement,
} from './native.js';
import { contentHash, hasCjk, likeText, sha256Hex } from './normalize.js';
import { noopStoreObserver, type StatementKind, type StoreObserver } from './observer.js';
import {
  META_TABLE_SQL,
  MIGRATIONS,
  SCHEMA_VERSION,
  TOKENIZER_DESCRIPTION,
  vectorTableSql,
} from './schema.js';
import {
  type AppendEventsResult,
  EMBEDDING_STATES,
  type EmbeddingBacklog,
  type EmbeddingCommitResult,
  type EmbeddingOutcome,
  type EmbeddingProfile,
  type EmbeddingState,
  type EventInput,
  type EventRecord,
  type EventType,
  type IngestBatch,
  type LexicalHit,
  type LexicalQuery,
  type LexicalResult,
  LIFECYCLES,
  type Lifecycle,
  type ListMemoriesOptions,
  type ListPendingOptions,
  MEMORY_KINDS,
  type MemoryKind,
  type MemoryPatch,
  type MemoryRecord,
  type MemoryStore,
  type NewMemory,
  type PendingEmbedding,
  RECALLABLE_KINDS,
  type RevalidationCandidate,
  type SkillInput,
  type SkillRecord,
  type StoreHealth,
  type VectorHit,
  type VectorQuery,
} from './types.js';
import {
  DEFAULT_MAX_CONTENT_LENGTH,
  type PreparedMemory,
  prepareEvent,
  prepareNewMemory,
  preparePatch,
  prepareSkill,
  type ValidationLimits,
  validateAgentId,
  validateId,
  validateInteger,
  validateKind,
  validateLifecycle,
  validateLimit,
  validateSkillName,
  validateTag,
  validateTimestamp,
  validateVector,
} from './validate.js';

/** Configuration of a `SqliteMemoryStore`. */
export interface SqliteMemoryStoreConfig {
  /** `':memory:'` or a file path (parent directories are created). */
  readonly path: string;
  /**
   * The embedder profile the store is bound to. `null`: no vector index (recorded as `none`). Omitted: the
   * profile recorded in the file is adopted (a fresh database records `none`). A profile different from the
   * recorded one is `ENGRAM_STORE_FINGERPRINT_MISMATCH`; changing it is an explicit `resetEmbeddings`.
   */
  readonly embedding?: EmbeddingProfile | null;
  /** SQLite busy timeout, default 5000 ms. */
  readonly busyTimeoutMs?: number;
  /** Maximum content length in UTF-16 code units, default 65,536. */
  readonly maxContentLength?: number;
  /** The clock (epoch milliseconds), `Date.now` by default. */
  readonly now?: () => number;
  /** Statement counts and vector gauges; no-op by default. */
  readonly observer?: StoreObserver;
  /** Ids of new memories without a caller id; `crypto.randomUUID` by default. */
  readonly idFactory?: () => string;
  /** A better-sqlite3 compatible driver constructor (e.g. better-sqlite3-multiple-ciphers); better-sqlite3 by default. */
  readonly driver?: SqliteDriver;
  /** Path of the sqlite-vec loadable extension; `sqliteVec.getLoadablePath()` by default. */
  readonly vectorExtensionPath?: string;
  /**
   * Encryption at rest (off by default): the file is opened with better-sqlite3-multiple-ciphers (an optional
   * peer dependency, loaded only then) as a SQLCipher 4 compatible database. A wrong key is
   * `ENGRAM_STORE_ENCRYPTION_KEY`; a missing driver is `ENGRAM_STORE_NATIVE_UNAVAILABLE` naming the package.
   */
  readonly encryption?: SqliteStoreEncryption;
}

/** Encryption settings of a store: the passphrase and the cipher. The key is never logged or put in an error. */
export interface SqliteStoreEncryption {
  /** The passphrase: a non-empty string (its UTF-8 bytes are used) or non-empty bytes. */
  readonly key: string | Uint8Array;
  /** `sqlcipher` (SQLCipher 4 compatible), the default and only cipher. */
  readonly cipher?: EncryptionCipher;
}

/** What a store is bound to, as recorded in its meta table. */
export interface SqliteMemoryStoreInfo {
  readonly schemaVersion: number;
  /** `profileId:dimensions`, or `none`. */
  readonly fingerprint: string;
  readonly tokenizer: string;
}

/** Options of `repairEmbeddingIntegrity`. */
export interface RepairEmbeddingIntegrityOptions {
  /** At most this many rows are repaired (default 1000, at most 100,000). */
  readonly limit?: number;
}

const fnSchema = z.custom<(...args: never[]) => unknown>((v) => typeof v === 'function');
const profileSchema = z.object({
  id: z
    .string()
    .min(1)
    .max(128)
    .regex(/^[^\u0000-\u001f]+$/),
  dimensions: z.number().int().min(1).max(8192),
});
const configSchema = z.object({
  path: z.string().min(1),
  embedding: profileSchema.nullable().optional(),
  busyTimeoutMs: z.number().int().min(0).max(600_000).optional(),
  maxContentLength: z.number().int().min(1).max(10_000_000).optional(),
  now: fnSchema.optional(),
  observer: z.custom<StoreObserver>((v) => typeof v === 'object' && v !== null).optional(),
  idFactory: fnSchema.optional(),
  driver: fnSchema.optional(),
  vectorExtensionPath: z.string().min(1).optional(),
  encryption: z
    .object({
      key: z.union([
        z.string().min(1),
        z.custom<Uint8Array>((v) => v instanceof Uint8Array && v.byteLength > 0),
      ]),
      cipher: z.literal('sqlcipher').optional(),
    })
    .optional(),
});
const keySchema = configSchema.shape.encryption.unwrap().shape.key;

/** The passphrase bytes of a key (a copy: the caller zero-fills it after use). */
function keyBytes(key: string | Uint8Array): Buffer {
  return typeof key === 'string' ? Buffer.from(key, 'utf8') : Buffer.from(key);
}
const tagsJsonSchema = z.array(z.string());
const metadataJsonSchema = z.record(z.string(), z.unknown());

/** The fingerprint of an embedder profile: `profileId:dimensions`, or `none`. */
export function embeddingFingerprint(profile: EmbeddingProfile | null): string {
  return profile === null ? 'none' : `${profile.id}:${profile.dimensions}`;
}

function parseFingerprint(fp: string): EmbeddingProfile | null {
  if (fp === 'none') return null;
  const at = fp.lastIndexOf(':');
  const dims = Number(fp.slice(at + 1));
  if (at <= 0 || !Number.isSafeInteger(dims) || dims < 1) {
    throw new EngramStoreError('ENGRAM_STORE_CORRUPT', 'the recorded embedder fingerprint is malformed');
  }
  return { id: fp.slice(0, at), dimensions: dims };
}

/** Score of one LIKE-path match (a small constant: the LIKE path has no ranking of its own). */
export const LIKE_MATCH_SCORE = 0.5;

interface MemoryRow {
  rid: number;
  id: string;
  agent_id: string;
  kind: string;
  content: string;
  content_hash: string;
  importance: number;
  confidence: number;
  tags: string;
  session_id: string | null;
  seq_from: number | null;
  seq_to: number | null;
  created_at: number;
  updated_at: number;
  last_accessed_at: number | null;
  access_count: number;
  revision: number;
  lifecycle: string;
  superseded_by: string | null;
  embedding_state: string;
  embedding_fingerprint: string | null;
  embedding_attempts: number;
  has_cjk: number;
  /** NFKC form of the content for the LIKE path, when it differs (see `likeText`). */
  like_text: string | null;
}

interface EventRow {
  agent_id: string;
  session_id: string;
  seq: number;
  type: string;
  role: string;
  content: string;
  tool_name: string | null;
  metadata: string;
  created_at: number;
}

interface SkillRow {
  agent_id: string;
  name: string;
  description: string;
  content: string;
  created_at: number;
  updated_at: number;
}

/** A prepared statement that reports each execution to the store's observer. */
class CountedStatement {
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
}

/** Process-wide registry of open stores with a vector index: path → open handles. */
const vectorStores = new Map<string, number>();
let vectorStoreSeq = 0;

function vectorGauge(): { openStores: number; leases: number } {
  let leases = 0;
  for (const n of vectorStores.values()) leases += n;
  return { openStores: vectorStores.size, leases };
}

const AGENT_TOKEN_CACHE_MAX = 4096;

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
  readonly #db: SqliteDatabase;
  readonly #observer: StoreObserver;
  readonly #now: () => number;
  readonly #idFactory: () => string;
  readonly #limits: ValidationLimits;
  readonly #statements = new Map<string, CountedStatement>();
  readonly #agentTokens = new Map<string, string>();
  readonly #vectorKey: string;
  #profile: EmbeddingProfile | null;
  #fingerprint: string;
  #schemaVersion: number;
  readonly #encrypted: boolean;
  #closed = false;
  #registeredVector = false;
  #warmupReported = false;

  constructor(config: SqliteMemoryStoreConfig) {
    const parsed = configSchema.safeParse(config);
    if (!parsed.success) throw invalidInput('store configuration', parsed.error);
    this.path = config.path;
    this.maxContentLength = config.maxContentLength ?? DEFAULT_MAX_CONTENT_LENGTH;
    this.#limits = { maxContentLength: this.maxContentLength };
    this.#observer = config.observer ?? noopStoreObserver;
    this.#now = config.now ?? Date.now;
    this.#idFactory = config.idFactory ?? randomUUID;
    const memory = config.path === ':memory:' || config.path === '';
    if (config.encryption !== undefined && (memory || config.path.startsWith('file:'))) {
      throw invalidInput('encryption needs a plain file path (not :memory: or a file: URI)');
    }
    this.#encrypted = config.encryption !== undefined;
    vectorStoreSeq += 1;
    this.#vectorKey = memory ? `:memory:#${vectorStoreSeq}` : resolve(config.path);
    if (!memory && !config.path.startsWith('file:')) {
      try {
        mkdirSync(dirname(resolve(config.path)), { recursive: true });
      } catch (cause) {
        throw new EngramStoreError('ENGRAM_STORE_IO', 'the database directory could not be created', {
          cause,
        });
      }
    }
    const busyTimeoutMs = config.busyTimeoutMs ?? 5000;
    const key = config.encryption === undefined ? undefined : keyBytes(config.encryption.key);
    try {
      this.#db = openDatabase(config.path, {
        busyTimeoutMs,
        ...(config.driver === undefined ? {} : { driver: config.driver }),
        ...(config.vectorExtensionPath === undefined
          ? {}
          : { vectorExtensionPath: config.vectorExtensionPath }),
        ...(key === undefined
          ? {}
          : { encryption: { key, cipher: config.encryption?.cipher ?? 'sqlcipher' } }),
      });
    } finally {
      key?.fill(0);
    }
    try {
      if (!memory) this.#db.exec('PRAGMA journal_mode = WAL');
      this.#db.exec(`PRAGMA busy_timeout = ${busyTimeoutMs}`);
      this.#db.exec('PRAGMA foreign_keys = ON');
      this.#db.exec('PRAGMA synchronous = NORMAL');
      const opened = this.#migrate(config.embedding);
      this.#profile = opened.profile;
      this.#fingerprint = opened.fingerprint;
      this.#schemaVersion = opened.schemaVersion;
    } catch (err) {
      try {
        this.#db.close();
      } catch {
        // ignore: the open failed already
      }
      throw classifySqliteError(err, 'open');
    }
    this.#updateVectorRegistration();
  }

  /** The embedder profile the store is bound to, or null (no vector index). */
  get embeddingProfile(): EmbeddingProfile | null {
    return this.#profile;
  }

  /** Schema version, embedder fingerprint and tokenizer, as recorded in the meta table. */
  get info(): SqliteMemoryStoreInfo {
    return {
      schemaVersion: this.#schemaVersion,
      fingerprint: this.#fingerprint,
      tokenizer: TOKENIZER_DESCRIPTION,
    };
  }

  /** True once `close()` was called. */
  get closed(): boolean {
    return this.#closed;
  }

  /** True when the store was opened with `encryption`. */
  get encrypted(): boolean {
    return this.#encrypted;
  }

  /**
   * Key rotation: re-encrypts the whole database with `newKey` (`sqlite3_rekey`). Only for a store opened with
   * `encryption`; the file must not be open elsewhere (the journal leaves WAL mode for the rewrite and returns
   * to it; another connection makes that `ENGRAM_STORE_BUSY`). Later opens need the new key.
   */
  rekey(newKey: string | Uint8Array): Promise<void> {
    return this.#op('rekey', () => {
      if (!this.#encrypted) throw invalidInput('rekey needs a store opened with encryption');
      if (!keySchema.safeParse(newKey).success)
        throw invalidInput('the new key must be a non-empty string or bytes');
      const db = this.#db;
      if (typeof db.rekey !== 'function') {
        throw invalidInput('the SQLite driver does not support rekey');
      }
      const mode = (db.prepare('PRAGMA journal_mode = DELETE').get() as { journal_mode?: string } | undefined)
        ?.journal_mode;
      this.#count('meta');
      if (mode !== 'delete') {
        throw new EngramStoreError(
          'ENGRAM_STORE_BUSY',
          'store rekey failed: the database is open in another connection',
          { retryable: true },
        );
      }
      const key = keyBytes(newKey);
      try {
        db.rekey(key);
      } finally {
        key.fill(0);
        db.exec('PRAGMA journal_mode = WAL');
        this.#count('meta');
      }
    });
  }

  /** Closes the database; idempotent. Every later call rejects with `ENGRAM_STORE_CLOSED`. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#statements.clear();
    try {
      this.#db.close();
    } finally {
      this.#unregisterVector();
    }
  }

  // ---------------------------------------------------------------- internals

  #count = (kind: StatementKind): void => {
    const fn = this.#observer.onStatement;
    if (fn === undefined) return;
    try {
      fn.call(this.#observer, kind);
    } catch {
      // observer failures never change a store result
    }
  };

  #emitVectorGauge(): void {
    const fn = this.#observer.onVectorStores;
    if (fn === undefined) return;
    try {
      fn.call(this.#observer, vectorGauge());
    } catch {
      // isolated
    }
  }

  #emitWarmup(outcome: 'warm' | 'cold' | 'failed'): void {
    if (this.#warmupReported) return;
    this.#warmupReported = true;
    const fn = this.#observer.onVectorWarmup;
    if (fn === undefined) return;
    try {
      fn.call(this.#observer, outcome);
    } catch {
      // isolated
    }
  }

  #updateVectorRegistration(): void {
    if (this.#profile !== null && !this.#registeredVector) {
      vectorStores.set(this.#vectorKey, (vectorStores.get(this.#vectorKey) ?? 0) + 1);
      this.#registeredVector = true;
      this.#emitVectorGauge();
    } else if (this.#profile === null && this.#registeredVector) {
      this.#unregisterVector();
    }
  }

  #unregisterVector(): void {
    if (!this.#registeredVector) return;
    this.#registeredVector = false;
    const n = (vectorStores.get(this.#vectorKey) ?? 1) - 1;
    if (n <= 0) vectorStores.delete(this.#vectorKey);
    else vectorStores.set(this.#vectorKey, n);
    this.#emitVectorGauge();
  }

  #stmt(kind: StatementKind, sql: string): CountedStatement {
    let stmt = this.#statements.get(sql);
    if (stmt === undefined) {
      stmt = new CountedStatement(this.#db.prepare(sql), kind, this.#count);
      this.#statements.set(sql, stmt);
    }
    return stmt;
  }

  #tx<T>(fn: () => T): T {
    this.#stmt('meta', 'BEGIN IMMEDIATE').run();
    try {
      const result = fn();
      this.#stmt('meta', 'COMMIT').run();
      return result;
    } catch (err) {
      if (this.#db.inTransaction) {
        try {
          this.#stmt('meta', 'ROLLBACK').run();
        } catch {
          // the original error wins
        }
      }
      throw err;
    }
  }

  /** Runs a public operation: closed check, then every non-store error is classified. */
  #op<T>(operation: string, fn: () => T): Promise<T> {
    try {
      if (this.#closed) {
        throw new EngramStoreError('ENGRAM_STORE_CLOSED', `store ${operation} failed: the store is closed`);
      }
      return Promise.resolve(fn());
    } catch (err) {
      return Promise.reject(classifySqliteError(err, operation));
    }
  }

  #agentToken(agentId: string): string {
    let token = this.#agentTokens.get(agentId);
    if (token === undefined) {
      // `x` at the end keeps the Porter stemmer from touching the token.
      token = `a${sha256Hex(agentId).slice(0, 16)}x`;
      if (this.#agentTokens.size >= AGENT_TOKEN_CACHE_MAX) this.#agentTokens.clear();
      this.#agentTokens.set(agentId, token);
    }
    return token;
  }

  #migrate(embedding: EmbeddingProfile | null | undefined): {
    profile: EmbeddingProfile | null;
    fingerprint: string;
    schemaVersion: number;
  } {
    const db = this.#db;
    const hasMeta =
      db.prepare("SELECT 1 AS x FROM sqlite_master WHERE type = 'table' AND name = 'meta'").get() !==
      undefined;
    this.#count('meta');
    if (hasMeta) {
      const row = db.prepare("SELECT value FROM meta WHERE key = 'schema_version'").get() as
        | { value: string }
        | undefined;
      this.#count('meta');
      const stored = row === undefined ? 0 : Number(row.value);
      if (stored > SCHEMA_VERSION) {
        throw new EngramStoreError(
          'ENGRAM_STORE_SCHEMA_TOO_NEW',
          `the database schema version ${stored} is newer than this store supports (${SCHEMA_VERSION})`,
        );
      }
    }
    return this.#tx(() => {
      db.exec(META_TABLE_SQL);
      const getMeta = (key: string): string | undefined =>
        this.#stmt('meta', 'SELECT value FROM meta WHERE key = ?').get<{ value: string }>(key)?.value;
      const setMeta = (key: string, value: string): void => {
        this.#stmt(
          'meta',
          'INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value',
        ).run(key, value);
      };
      const current = Number(getMeta('schema_version') ?? '0');
      if (!Number.isSafeInteger(current) || current < 0) {
        throw new EngramStoreError('ENGRAM_STORE_CORRUPT', 'the recorded schema version is malformed');
      }
      if (current > SCHEMA_VERSION) {
        throw new EngramStoreError(
          'ENGRAM_STORE_SCHEMA_TOO_NEW',
          `the database schema version ${current} is newer than this store supports (${SCHEMA_VERSION})`,
        );
      }
      for (const migration of MIGRATIONS) {
        if (migration.version <= current) continue;
        migration.up(db);
        this.#count('meta');
        setMeta('schema_version', String(migration.version));
      }
      if (getMeta('tokenizer') === undefined) setMeta('tokenizer', TOKENIZER_DESCRIPTION);
      if (getMeta('created_at') === undefined) setMeta('created_at', String(this.#now()));
      const storedFp = getMeta('embedding_fingerprint');
      let profile: EmbeddingProfile | null;
      if (storedFp === undefined) {
        profile = embedding ?? null;
        setMeta('embedding_fingerprint', embeddingFingerprint(profile));
      } else if (embedding === undefined) {
        profile = parseFingerprint(storedFp);
      } else {
        if (embeddingFingerprint(embedding) !== storedFp) {
          throw new EngramStoreError(
            'ENGRAM_STORE_FINGERPRINT_MISMATCH',
            'the database was created with another embedder profile; call resetEmbeddings to re-index',
          );
        }
        profile = embedding;
      }
      if (profile !== null) {
        db.exec(vectorTableSql(profile.dimensions));
        this.#count('meta');
      }
      return {
        profile: profile === null ? null : { id: profile.id, dimensions: profile.dimensions },
        fingerprint: embeddingFingerprint(profile),
        schemaVersion: SCHEMA_VERSION,
      };
    });
  }

  #toRecord(row: MemoryRow): MemoryRecord {
    let tags: string[];
    try {
      tags = tagsJsonSchema.parse(JSON.parse(row.tags));
    } catch (cause) {
      throw new EngramStoreError('ENGRAM_STORE_CORRUPT', 'a stored tag list is not valid JSON', { cause });
    }
    return {
      id: row.id,
      agentId: row.agent_id,
      kind: row.kind as MemoryKind,
      content: row.content,
      contentHash: row.content_hash,
      importance: row.importance,
      confidence: row.confidence,
      tags,
      sessionId: row.session_id,
      seqFrom: row.seq_from,
      seqTo: row.seq_to,
      createdAt: row.created_at,
      updatedAt: row.updated_at,
      lastAccessedAt: row.last_accessed_at,
      accessCount: row.access_count,
      revision: row.revision,
      lifecycle: row.lifecycle as Lifecycle,
      supersededBy: row.superseded_by,
      embeddingState: row.embedding_state as EmbeddingState,
      embeddingFingerprint: row.embedding_fingerprint,
      embeddingAttempts: row.embedding_attempts,
    };
  }

  #selectRow(agentId: string, id: string): MemoryRow | undefined {
    return this.#stmt('read', 'SELECT * FROM memories WHERE id = ? AND agent_id = ?').get<MemoryRow>(
      id,
      agentId,
    );
  }

  #prepareInsert(input: NewMemory, field: string): PreparedMemory {
    const prepared = prepareNewMemory(input, this.#limits, field);
    if (prepared.vector !== undefined) {
      if (this.#profile === null) {
        throw new EngramStoreError(
          'ENGRAM_STORE_VECTOR_UNAVAILABLE',
          'the store has no embedder profile, so it cannot store vectors',
        );
      }
      validateVector(prepared.vector, this.#profile.dimensions, `${field}.vector`);
    }
    return prepared;
  }

  #newId(): string {
    const id = this.#idFactory();
    return validateId(id, 'generated id');
  }

  #writeFts(rid: number, agentId: string, content: string): boolean {
    const text = content.normalize('NFKC');
    const token = this.#agentToken(agentId);
    this.#stmt('fts', 'INSERT INTO memories_fts_words(rowid, agent, content) VALUES (?, ?, ?)').run(
      rid,
      token,
      text,
    );
    const cjk = hasCjk(text);
    if (cjk) {
      this.#stmt('fts', 'INSERT INTO memories_fts_trigram(rowid, agent, content) VALUES (?, ?, ?)').run(
        rid,
        token,
        text,
      );
    }
    return cjk;
  }

  #deleteFts(rid: number, hadCjk: boolean): void {
    this.#stmt('fts', 'DELETE FROM memories_fts_words WHERE rowid = ?').run(rid);
    if (hadCjk) this.#stmt('fts', 'DELETE FROM memories_fts_trigram WHERE rowid = ?').run(rid);
  }

  #writeVector(rid: number, agentId: string, vector: Float32Array): void {
    this.#stmt('vector', 'INSERT INTO memories_vec(rowid, agent_id, embedding) VALUES (?, ?, ?)').run(
      BigInt(rid),
      agentId,
      vector,
    );
  }

  #deleteVector(rid: number): void {
    if (this.#profile === null) return;
    this.#stmt('vector', 'DELETE FROM memories_vec WHERE rowid = ?').run(rid);
  }

  #writeTags(rid: number, agentId: string, tags: readonly string[]): void {
    if (tags.length === 0) return;
    this.#stmt(
      'write',
      'INSERT INTO memory_tags(agent_id, tag, rid) SELECT ?, value, ? FROM json_each(?)',
    ).run(agentId, rid, JSON.stringify(tags));
  }

  #deleteTags(rid: number, agentId: string, tags: readonly string[]): void {
    if (tags.length === 0) return;
    this.#stmt(
      'write',
      'DELETE FROM memory_tags WHERE agent_id = ? AND rid = ? AND tag IN (SELECT value FROM json_each(?))',
    ).run(agentId, rid, JSON.stringify(tags));
  }

  /** Inserts one validated memory; must run inside a transaction. */
  #insertPrepared(p: PreparedMemory, now: number): MemoryRecord {
    const id = p.id ?? this.#newId();
    const createdAt = p.createdAt ?? now;
    const hash = contentHash(p.content);
    const withVector = p.vector !== undefined && this.#profile !== null;
    const state: EmbeddingState = withVector ? 'ready' : 'pending';
    const fingerprint = withVector ? this.#fingerprint : null;
    const tagsJson = JSON.stringify(p.tags);
    const cjk = hasCjk(p.content.normalize('NFKC'));
    const info = this.#stmt(
      'write',
      `INSERT INTO memories(id, agent_id, kind, content, content_hash, importance, confidence, tags, session_id,
        seq_from, seq_to, created_at, updated_at, embedding_state, embedding_fingerprint, has_cjk, like_text)
       VALUES (@id, @agent, @kind, @content, @hash, @importance, @confidence, @tags, @session, @seqFrom, @seqTo,
        @createdAt, @createdAt, @state, @fp, @cjk, @likeText)`,
    ).run({
      id,
      agent: p.agentId,
      kind: p.kind,
      content: p.content,
      hash,
      importance: p.importance,
      confidence: p.confidence,
      tags: tagsJson,
      session: p.sessionId,
      seqFrom: p.seqFrom,
      seqTo: p.seqTo,
      createdAt,
      state,
      fp: fingerprint,
      cjk: cjk ? 1 : 0,
      likeText: likeText(p.content),
    });
    const rid = Number(info.lastInsertRowid);
    this.#writeTags(rid, p.agentId, p.tags);
    this.#writeFts(rid, p.agentId, p.content);
    if (withVector && p.vector !== undefined) this.#writeVector(rid, p.agentId, p.vector);
    return {
      id,
      agentId: p.agentId,
      kind: p.kind,
      content: p.content,
      contentHash: hash,
      importance: p.importance,
      confidence: p.confidence,
      tags: [...p.tags],
      sessionId: p.sessionId,
      seqFrom: p.seqFrom,
      seqTo: p.seqTo,
      createdAt,
      updatedAt: createdAt,
      lastAccessedAt: null,
      accessCount: 0,
      revision: 1,
      lifecycle: 'active',
      supersededBy: null,
      embeddingState: state,
      embeddingFingerprint: fingerprint,
      embeddingAttempts: 0,
    };
  }

  /** Reads a row for a compare-and-set write; NOT_FOUND / REVISION_CONFLICT otherwise. */
  #rowForWrite(agentId: string, id: string, expectedRevision: number | undefined): MemoryRow {
    const row = this.#selectRow(agentId, id);
    if (row === undefined) {
      throw new EngramStoreError('ENGRAM_STORE_NOT_FOUND', 'no memory with this id for this agent');
    }
    if (expectedRevision !== undefined && row.revision !== expectedRevision) {
      throw new EngramStoreError(
        'ENGRAM_STORE_REVISION_CONFLICT',
        `the memory changed meanwhile (expected revision ${expectedRevision}, stored ${row.revision})`,
      );
    }
    return row;
  }

  #casLifecycle(
    row: MemoryRow,
    lifecycle: Lifecycle,
    supersededBy: string | null,
    now: number,
  ): MemoryRecord {
    const info = this.#stmt(
      'write',
      `UPDATE memories SET lifecycle = ?, superseded_by = ?, revision = revision + 1, updated_at = ?
       WHERE rid = ? AND revision = ?`,
    ).run(lifecycle, supersededBy, now, row.rid, row.revision);
    if (info.changes !== 1) {
      throw new EngramStoreError('ENGRAM_STORE_REVISION_CONFLICT', 'the memory changed meanwhile');
    }
    return this.#toRecord({
      ...row,
      lifecycle,
      superseded_by: supersededBy,
      revision: row.revision + 1,
      updated_at: now,
    });
  }

  #validateKinds(kinds: readonly MemoryKind[] | undefined, fallback: readonly MemoryKind[]): string {
    if (kinds === undefined) return JSON.stringify(fallback);
    if (!Array.isArray(kinds)) throw invalidInput('kinds must be an array');
    return JSON.stringify([...new Set(kinds.map((k) => validateKind(k, 'kinds entry')))]);
  }

  #validateFilterTags(tags: readonly string[] | undefined): string {
    if (tags === undefined) return '[]';
    if (!Array.isArray(tags)) throw invalidInput('tags must be an array');
    if (tags.length > 64) throw invalidInput('tags filter has more than 64 entries');
    return JSON.stringify([...new Set(tags.map((t) => validateTag(t, 'tags filter entry')))]);
  }

  // ---------------------------------------------------------------- read slice

  /** Reads one row of an agent (any lifecycle), or null. */
  getMemory(agentId: string, id: string): Promise<MemoryRecord | null> {
    return this.#op('getMemory', () => {
      validateAgentId(agentId);
      validateId(id);
      const row = this.#selectRow(agentId, id);
      return row === undefined ? null : this.#toRecord(row);
    });
  }

  /** Lists an agent's rows in id order (all kinds and lifecycles unless filtered), keyset-paginated by `afterId`. */
  listMemories(agentId: string, options: ListMemoriesOptions = {}): Promise<readonly MemoryRecord[]> {
    return this.#op('listMemories', () => {
      validateAgentId(agentId);
      const kinds = this.#validateKinds(options.kinds, MEMORY_KINDS);
      let lifecycles: string = JSON.stringify(LIFECYCLES);
      if (options.lifecycles !== undefined) {
        if (!Array.isArray(options.lifecycles)) throw invalidInput('lifecycles must be an array');
        lifecycles = JSON.stringify(options.lifecycles.map((l) => validateLifecycle(l, 'lifecycles entry')));
      }
      const tags = this.#validateFilterTags(options.tags);
      const limit = validateLimit(options.limit, 'limit', 10_000, 100);
      const afterId = options.afterId === undefined ? '' : validateId(options.afterId, 'afterId');
      const rows = this.#stmt(
        'read',
        `SELECT * FROM memories m
         WHERE m.agent_id = @agent AND m.id > @after
           AND m.kind IN (SELECT value FROM json_each(@kinds))
           AND m.lifecycle IN (SELECT value FROM json_each(@lifecycles))
           AND NOT EXISTS (SELECT 1 FROM json_each(@tags) j WHERE NOT EXISTS (
             SELECT 1 FROM memory_tags t WHERE t.agent_id = m.agent_id AND t.tag = j.value AND t.rid = m.rid))
         ORDER BY m.id LIMIT @limit`,
      ).all<MemoryRow>({ agent: agentId, after: afterId, kinds, lifecycles, tags, limit });
      return rows.map((r) => this.#toRecord(r));
    });
  }

  /** Rows of an agent with this content hash (every lifecycle, oldest first), optionally of one kind. */
  findByContentHash(agentId: string, hash: string, kind?: MemoryKind): Promise<readonly MemoryRecord[]> {
    return this.#op('findByContentHash', () => {
      validateAgentId(agentId);
      if (typeof hash !== 'string' || hash.length === 0 || hash.length > 128) {
        throw invalidInput('contentHash must be a non-empty string');
      }
      const k = kind === undefined ? null : validateKind(kind);
      const rows = this.#stmt(
        'read',
        `SELECT * FROM memories WHERE agent_id = @agent AND content_hash = @hash AND (@kind IS NULL OR kind = @kind)
         ORDER BY created_at, id`,
      ).all<MemoryRow>({ agent: agentId, hash, kind: k });
      return rows.map((r) => this.#toRecord(r));
    });
  }

  #ftsSql(table: 'words' | 'trigram', filterOther: boolean, likeFilter: boolean): string {
    const t = table === 'words' ? 'memories_fts_words' : 'memories_fts_trigram';
    const other = table === 'words' ? 'memories_fts_trigram' : 'memories_fts_words';
    return `SELECT m.id AS id, m.revision AS revision, -bm25(${t}, 0.0, 1.0) AS score
      FROM ${t} f JOIN memories m ON m.rid = f.rowid
      WHERE ${t} MATCH @match AND m.agent_id = @agent AND m.lifecycle = 'active'
        AND m.kind IN (SELECT value FROM json_each(@kinds))
        AND NOT EXISTS (SELECT 1 FROM json_each(@tags) j WHERE NOT EXISTS (
          SELECT 1 FROM memory_tags t WHERE t.agent_id = @agent AND t.tag = j.value AND t.rid = m.rid))
        ${filterOther ? `AND m.rid IN (SELECT rowid FROM ${other} WHERE ${other} MATCH @other)` : ''}
        ${likeFilter ? `AND NOT EXISTS (SELECT 1 FROM json_each(@likes) j WHERE coalesce(m.like_text, m.content) NOT LIKE j.value ESCAPE '\\')` : ''}
      ORDER BY score DESC, m.id ASC LIMIT @limit`;
  }

  #likeSql(mode: 'any' | 'all'): string {
    const cond =
      mode === 'any'
        ? `EXISTS (SELECT 1 FROM json_each(@likes) j WHERE coalesce(m.like_text, m.content) LIKE j.value ESCAPE '\\')`
        : `NOT EXISTS (SELECT 1 FROM json_each(@likes) j WHERE coalesce(m.like_text, m.content) NOT LIKE j.value ESCAPE '\\')`;
    return `SELECT m.id AS id, m.revision AS revision,
        (SELECT count(*) FROM json_each(@likes) j WHERE coalesce(m.like_text, m.content) LIKE j.value ESCAPE '\\') AS hits
      FROM memories m
      WHERE m.agent_id = @agent AND m.has_cjk = 1 AND m.lifecycle = 'active'
        AND m.kind IN (SELECT value FROM json_each(@kinds))
        AND NOT EXISTS (SELECT 1 FROM json_each(@tags) j WHERE NOT EXISTS (
          SELECT 1 FROM memory_tags t WHERE t.agent_id = @agent AND t.tag = j.value AND t.rid = m.rid))
        AND ${cond}
      ORDER BY m.created_at DESC, m.rid DESC LIMIT @limit`;
  }

  /**
   * Lexical search of one agent's active rows: word index, trigram index (CJK ≥ 3) and a bounded LIKE scan
   * (CJK 1–2), merged per id by summing scores; ordered by score desc, id asc.
   */
  searchLexical(query: LexicalQuery): Promise<LexicalResult> {
    return this.#op('searchLexical', () => {
      if (typeof query !== 'object' || query === null) throw invalidInput('query must be an object');
      const agentId = validateAgentId(query.agentId);
      const limit = validateLimit(query.limit, 'limit', 1000, 50);
      const kinds = this.#validateKinds(query.kinds, RECALLABLE_KINDS);
      const tags = this.#validateFilterTags(query.tags);
      const mode = query.mode ?? 'any';
      const plan: LexicalPlan = planLexicalQuery(query.terms, mode);
      const paths = {
        words: plan.wordsExpr !== null,
        trigram: plan.trigramExpr !== null,
        like: plan.likeTerms.length > 0,
      };
      const base = {
        hits: [] as LexicalHit[],
        likeTerms: [...plan.likeTerms],
        droppedTerms: plan.droppedTerms,
      };
      if (!paths.words && !paths.trigram && !paths.like) {
        return { ...base, paths: { words: false, trigram: false, like: false } };
      }
      const token = this.#agentToken(agentId);
      const wordsMatch = plan.wordsExpr === null ? null : buildMatch(token, plan.wordsExpr);
      const trigramMatch = plan.trigramExpr === null ? null : buildMatch(token, plan.trigramExpr);
      const likes = JSON.stringify(plan.likePatterns);
      const merged = new Map<string, { revision: number; score: number }>();
      const add = (id: string, revision: number, score: number): void => {
        const prev = merged.get(id);
        if (prev === undefined) merged.set(id, { revision, score });
        else prev.score += score;
      };
      const common = { agent: agentId, kinds, tags, limit };
      type FtsRow = { id: string; revision: number; score: number };
      if (mode === 'any') {
        if (wordsMatch !== null) {
          for (const r of this.#stmt('fts', this.#ftsSql('words', false, false)).all<FtsRow>({
            ...common,
            match: wordsMatch,
          })) {
            add(r.id, r.revision, r.score);
          }
        }
        if (trigramMatch !== null) {
          for (const r of this.#stmt('fts', this.#ftsSql('trigram', false, false)).all<FtsRow>({
            ...common,
            match: trigramMatch,
          })) {
            add(r.id, r.revision, r.score);
          }
        }
        if (paths.like) {
          for (const r of this.#stmt('like', this.#likeSql('any')).all<{
            id: string;
            revision: number;
            hits: number;
          }>({
            ...common,
            likes,
          })) {
            add(r.id, r.revision, r.hits * LIKE_MATCH_SCORE);
          }
        }
      } else {
        const likeBonus = plan.likeTerms.length * LIKE_MATCH_SCORE;
        if (wordsMatch !== null) {
          const sql = this.#ftsSql('words', trigramMatch !== null, paths.like);
          const params: Record<string, unknown> = { ...common, match: wordsMatch };
          if (trigramMatch !== null) params.other = trigramMatch;
          if (paths.like) params.likes = likes;
          for (const r of this.#stmt('fts', sql).all<FtsRow>(params))
            add(r.id, r.revision, r.score + likeBonus);
        }
        if (trigramMatch !== null) {
          const sql = this.#ftsSql('trigram', wordsMatch !== null, paths.like);
          const params: Record<string, unknown> = { ...common, match: trigramMatch };
          if (wordsMatch !== null) params.other = wordsMatch;
          if (paths.like) params.likes = likes;
          for (const r of this.#stmt('fts', sql).all<FtsRow>(params)) {
            // The words query already added the LIKE bonus for rows it found.
            const bonus = wordsMatch !== null && merged.has(r.id) ? 0 : likeBonus;
            add(r.id, r.revision, r.score + bonus);
          }
        }
        if (wordsMatch === null && trigramMatch === null) {
          for (const r of this.#stmt('like', this.#likeSql('all')).all<{
            id: string;
            revision: number;
            hits: number;
          }>({
            ...common,
            likes,
          })) {
            add(r.id, r.revision, r.hits * LIKE_MATCH_SCORE);
          }
        }
      }
      const hits: LexicalHit[] = [...merged.entries()]
        .map(([id, v]) => ({ id, revision: v.revision, score: v.score }))
        .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
        .slice(0, limit);
      return { ...base, hits, paths };
    });
  }

  /** k-NN in the agent's vector partition; cosine distance, similarity = 1 − distance; nearest first. */
  searchVector(query: VectorQuery): Promise<readonly VectorHit[]> {
    return this.#op('searchVector', () => {
      if (typeof query !== 'object' || query === null) throw invalidInput('query must be an object');
      const agentId = validateAgentId(query.agentId);
      if (this.#profile === null) {
        throw new EngramStoreError(
          'ENGRAM_STORE_VECTOR_UNAVAILABLE',
          'the store has no embedder profile, so it has no vector index',
        );
      }
      const vector = validateVector(query.vector, this.#profile.dimensions, 'query.vector');
      const k = validateLimit(query.k, 'k', 1000);
      let rows: { id: string; distance: number | null }[];
      try {
        rows = this.#stmt(
          'vector',
          `SELECT m.id AS id, knn.distance AS distance
           FROM (SELECT rowid, distance FROM memories_vec WHERE embedding MATCH @v AND k = @k AND agent_id = @agent) knn
           JOIN memories m ON m.rid = knn.rowid
           WHERE m.agent_id = @agent
           ORDER BY knn.distance, m.id`,
        ).all<{ id: string; distance: number | null }>({ v: vector, k, agent: agentId });
      } catch (err) {
        this.#emitWarmup('failed');
        throw err;
      }
      this.#emitWarmup(rows.length > 0 ? 'warm' : 'cold');
      const hits: VectorHit[] = [];
      for (const r of rows) {
        if (r.distance === null || !Number.isFinite(r.distance)) continue;
        hits.push({ id: r.id, distance: r.distance, similarity: 1 - r.distance });
      }
      return hits;
    });
  }

  /** Re-reads candidates: only this agent's `active` rows, of the expected revision where given, in input order. */
  revalidate(
    agentId: string,
    candidates: readonly RevalidationCandidate[],
  ): Promise<readonly MemoryRecord[]> {
    return this.#op('revalidate', () => {
      validateAgentId(agentId);
      if (!Array.isArray(candidates)) throw invalidInput('candidates must be an array');
      if (candidates.length > 10_000) throw invalidInput('at most 10,000 candidates');
      if (candidates.length === 0) return [];
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
      const rows = this.#stmt(
        'read',
        // Driven by the id list (CROSS JOIN fixes the join order): one index lookup per candidate. Filtering
        // the agent's rows by the list instead walks every active row of the agent (linear in its size).
        `SELECT m.* FROM json_each(?) j CROSS JOIN memories m ON m.id = j.value
         WHERE m.agent_id = ? AND m.lifecycle = 'active'`,
      ).all<MemoryRow>(JSON.stringify(ids), agentId);
      const byId = new Map(rows.map((r) => [r.id, r]));
      const out: MemoryRecord[] = [];
      const emitted = new Set<string>();
      for (const c of candidates) {
        if (emitted.has(c.id)) continue;
        const row = byId.get(c.id);
        if (row === undefined) continue;
        if (c.revision !== undefined && c.revision !== row.revision) continue;
        emitted.add(c.id);
        out.push(this.#toRecord(row));
      }
      return out;
    });
  }

  // ---------------------------------------------------------------- write slice

  /** Inserts one memory (row, tags, FTS mirror and optional vector in one transaction). */
  insertMemory(input: NewMemory): Promise<MemoryRecord> {
    return this.#op('insertMemory', () => {
      const prepared = this.#prepareInsert(input, 'memory');
      const now = this.#now();
      return this.#tx(() => this.#insertPrepared(prepared, now));
    });
  }

  /** Inserts several memories, all or nothing. */
  insertMemories(inputs: readonly NewMemory[]): Promise<readonly MemoryRecord[]> {
    return this.#op('insertMemories', () => {
      if (!Array.isArray(inputs)) throw invalidInput('memories must be an array');
      const prepared = inputs.map((m, i) => this.#prepareInsert(m, `memories[${i}]`));
      if (prepared.length === 0) return [];
      const now = this.#now();
      return this.#tx(() => prepared.map((p) => this.#insertPrepared(p, now)));
    });
  }

  /**
   * Compare-and-set update. A content change bumps the hash, replaces the FTS rows, drops the vector and
   * resets the row to `pending`. `event` rows only take tag, importance, confidence and lifecycle changes.
   */
  updateMemory(
    agentId: string,
    id: string,
    expectedRevision: number,
    patch: MemoryPatch,
  ): Promise<MemoryRecord> {
    return this.#op('updateMemory', () => {
      validateAgentId(agentId);
      validateId(id);
      validateInteger(expectedRevision, 'expectedRevision', 1);
      const p = preparePatch(patch, this.#limits);
      const now = this.#now();
      return this.#tx(() => {
        const row = this.#rowForWrite(agentId, id, expectedRevision);
        const contentChanged = p.content !== undefined && p.content !== row.content;
        if (row.kind === 'event' && (contentChanged || (p.kind !== undefined && p.kind !== 'event'))) {
          throw invalidInput('event rows are never edited in place (only tags and scores may change)');
        }
        if (p.kind === 'event' && row.kind !== 'event') {
          throw invalidInput('a row cannot become an event (events are appended, not converted)');
        }
        const oldTags = this.#toRecord(row).tags;
        const next: MemoryRow = {
          ...row,
          kind: p.kind ?? row.kind,
          importance: p.importance ?? row.importance,
          confidence: p.confidence ?? row.confidence,
          lifecycle: p.lifecycle ?? row.lifecycle,
          tags: p.tags === undefined ? row.tags : JSON.stringify(p.tags),
          revision: row.revision + 1,
          updated_at: now,
        };
        if (contentChanged && p.content !== undefined) {
          next.content = p.content;
          next.content_hash = contentHash(p.content);
          next.has_cjk = hasCjk(p.content.normalize('NFKC')) ? 1 : 0;
          next.like_text = likeText(p.content);
          next.embedding_state = 'pending';
          next.embedding_fingerprint = null;
          next.embedding_attempts = 0;
        }
        const info = this.#stmt(
          'write',
          `UPDATE memories SET kind = @kind, content = @content, content_hash = @hash, importance = @importance,
             confidence = @confidence, tags = @tags, lifecycle = @lifecycle, revision = @revision,
             updated_at = @updatedAt, embedding_state = @state, embedding_fingerprint = @fp,
             embedding_attempts = @attempts, has_cjk = @cjk, like_text = @likeText
           WHERE rid = @rid AND revision = @expected`,
        ).run({
          kind: next.kind,
          content: next.content,
          hash: next.content_hash,
          importance: next.importance,
          confidence: next.confidence,
          tags: next.tags,
          lifecycle: next.lifecycle,
          revision: next.revision,
          updatedAt: now,
          state: next.embedding_state,
          fp: next.embedding_fingerprint,
          attempts: next.embedding_attempts,
          cjk: next.has_cjk,
          likeText: next.like_text,
          rid: row.rid,
          expected: expectedRevision,
        });
        if (info.changes !== 1) {
          throw new EngramStoreError('ENGRAM_STORE_REVISION_CONFLICT', 'the memory changed meanwhile');
        }
        if (contentChanged) {
          this.#deleteFts(row.rid, row.has_cjk === 1);
          this.#writeFts(row.rid, agentId, next.content);
          this.#deleteVector(row.rid);
        }
        if (p.tags !== undefined) {
          const newTags = p.tags;
          const removed = oldTags.filter((t) => !newTags.includes(t));
          const added = newTags.filter((t) => !oldTags.includes(t));
          this.#deleteTags(row.rid, agentId, removed);
          this.#writeTags(row.rid, agentId, added);
        }
        return this.#toRecord(next);
      });
    });
  }

  /** Bumps `lastAccessedAt` and `accessCount` of the agent's rows; the revision is unchanged. */
  recordAccess(agentId: string, ids: readonly string[], at?: number): Promise<void> {
    return this.#op('recordAccess', () => {
      validateAgentId(agentId);
      if (!Array.isArray(ids)) throw invalidInput('ids must be an array');
      if (ids.length > 10_000) throw invalidInput('at most 10,000 ids');
      for (const id of ids) validateId(id, 'ids entry');
      const when = at === undefined ? this.#now() : validateTimestamp(at, 'at');
      if (ids.length === 0) return;
      this.#stmt(
        'write',
        `UPDATE memories SET last_accessed_at = ?, access_count = access_count + 1
         WHERE agent_id = ? AND id IN (SELECT DISTINCT value FROM json_each(?))`,
      ).run(when, agentId, JSON.stringify(ids));
    });
  }

  /** Deletes the row, its tags, FTS entries and vector in one transaction; false when it did not exist. */
  deleteMemory(agentId: string, id: string): Promise<boolean> {
    return this.#op('deleteMemory', () => {
      validateAgentId(agentId);
      validateId(id);
      return this.#tx(() => {
        const row = this.#selectRow(agentId, id);
        if (row === undefined) return false;
        this.#stmt('write', 'DELETE FROM memories WHERE rid = ?').run(row.rid);
        this.#deleteTags(row.rid, agentId, this.#toRecord(row).tags);
        this.#deleteFts(row.rid, row.has_cjk === 1);
        this.#deleteVector(row.rid);
        return true;
      });
    });
  }

  // ---------------------------------------------------------------- lifecycle slice

  /** Archives a row (compare-and-set when `expectedRevision` is given); FTS and vector rows stay (search filters). */
  archiveMemory(agentId: string, id: string, expectedRevision?: number): Promise<MemoryRecord> {
    return this.#op('archiveMemory', () => {
      validateAgentId(agentId);
      validateId(id);
      if (expectedRevision !== undefined) validateInteger(expectedRevision, 'expectedRevision', 1);
      const now = this.#now();
      return this.#tx(() => {
        const row = this.#rowForWrite(agentId, id, expectedRevision);
        return this.#casLifecycle(row, 'archived', row.superseded_by, now);
      });
    });
  }

  /** Inserts the replacement and marks the old row `superseded` (with `supersededBy`), in one transaction. */
  supersedeMemory(
    agentId: string,
    oldId: string,
    expectedRevision: number,
    replacement: NewMemory,
  ): Promise<{ readonly superseded: MemoryRecord; readonly replacement: MemoryRecord }> {
    return this.#op('supersedeMemory', () => {
      validateAgentId(agentId);
      validateId(oldId, 'oldId');
      validateInteger(expectedRevision, 'expectedRevision', 1);
      const prepared = this.#prepareInsert(replacement, 'replacement');
      if (prepared.agentId !== agentId) throw invalidInput('replacement.agentId must equal agentId');
      const now = this.#now();
      return this.#tx(() => {
        const row = this.#rowForWrite(agentId, oldId, expectedRevision);
        const inserted = this.#insertPrepared(prepared, now);
        const superseded = this.#casLifecycle(row, 'superseded', inserted.id, now);
        return { superseded, replacement: inserted };
      });
    });
  }

  /** Compare-and-set lifecycle move. */
  setLifecycle(
    agentId: string,
    id: string,
    expectedRevision: number,
    lifecycle: Lifecycle,
  ): Promise<MemoryRecord> {
    return this.#op('setLifecycle', () => {
      validateAgentId(agentId);
      validateId(id);
      validateInteger(expectedRevision, 'expectedRevision', 1);
      validateLifecycle(lifecycle);
      const now = this.#now();
      return this.#tx(() => {
        const row = this.#rowForWrite(agentId, id, expectedRevision);
        return this.#casLifecycle(row, lifecycle, row.superseded_by, now);
      });
    });
  }

  // ---------------------------------------------------------------- embedding slice

  /**
   * Active rows waiting for an embedding, in insertion order: `pending` rows, plus `error` rows with fewer than
   * `retryErrorsBelowAttempts` attempts when asked.
   */
  listPendingEmbeddings(options: ListPendingOptions): Promise<readonly PendingEmbedding[]> {
    return this.#op('listPendingEmbeddings', () => {
      if (typeof options !== 'object' || options === null) throw invalidInput('options must be an object');
      const agentId = options.agentId === undefined ? null : validateAgentId(options.agentId);
      const limit = validateLimit(options.limit, 'limit', 1000, 64);
      const below =
        options.retryErrorsBelowAttempts === undefined
          ? 0
          : validateInteger(options.retryErrorsBelowAttempts, 'retryErrorsBelowAttempts', 0);
      const agentCond = agentId === null ? '' : 'AND agent_id = @agent';
      const stateCond =
        below > 0
          ? "(embedding_state = 'pending' OR (embedding_state = 'error' AND embedding_attempts < @below))"
          : "embedding_state = 'pending'";
      type Row = {
        id: string;
        agent_id: string;
        content: string;
        revision: number;
        embedding_attempts: number;
      };
      const rows = this.#stmt(
        'read',
        `SELECT id, agent_id, content, revision, embedding_attempts FROM memories
         WHERE ${stateCond} AND lifecycle = 'active' ${agentCond} ORDER BY rid LIMIT @limit`,
      ).all<Row>({ limit, ...(agentId === null ? {} : { agent: agentId }), ...(below > 0 ? { below } : {}) });
      return rows.map((r) => ({
        id: r.id,
        agentId: r.agent_id,
        content: r.content,
        revision: r.revision,
        embeddingAttempts: r.embedding_attempts,
      }));
    });
  }

  /** Commits embedding outcomes in one transaction; rows whose revision changed (or that are gone) are `stale`. */
  commitEmbeddings(outcomes: readonly EmbeddingOutcome[]): Promise<EmbeddingCommitResult> {
    return this.#op('commitEmbeddings', () => {
      if (!Array.isArray(outcomes)) throw invalidInput('outcomes must be an array');
      const seen = new Set<string>();
      for (const [i, o] of outcomes.entries()) {
        if (typeof o !== 'object' || o === null) throw invalidInput('outcome must be an object');
        validateId(o.id, `outcomes[${i}].id`);
        if (seen.has(o.id)) throw invalidInput('outcomes name the same id twice');
        seen.add(o.id);
        validateInteger(o.revision, `outcomes[${i}].revision`, 1);
        if (o.state === 'ready') {
          if (this.#profile === null) {
            throw new EngramStoreError(
              'ENGRAM_STORE_VECTOR_UNAVAILABLE',
              'the store has no embedder profile, so it cannot store vectors',
            );
          }
          validateVector(o.vector, this.#profile.dimensions, `outcomes[${i}].vector`);
        } else if (o.state !== 'error' && o.state !== 'ftsOnly') {
          throw invalidInput(`outcomes[${i}].state must be ready, error or ftsOnly`);
        }
      }
      const result = { ready: 0, error: 0, ftsOnly: 0, stale: 0 };
      if (outcomes.length === 0) return result;
      return this.#tx(() => {
        for (const o of outcomes) {
          const row = this.#stmt('read', 'SELECT rid, agent_id, revision FROM memories WHERE id = ?').get<{
            rid: number;
            agent_id: string;
            revision: number;
          }>(o.id);
          if (row === undefined || row.revision !== o.revision) {
            result.stale += 1;
            continue;
          }
          if (o.state === 'ready') {
            this.#deleteVector(row.rid);
            this.#writeVector(row.rid, row.agent_id, o.vector);
            this.#stmt(
              'write',
              "UPDATE memories SET embedding_state = 'ready', embedding_fingerprint = ? WHERE rid = ?",
            ).run(this.#fingerprint, row.rid);
            result.ready += 1;
          } else if (o.state === 'error') {
            this.#deleteVector(row.rid);
            this.#stmt(
              'write',
              `UPDATE memories SET embedding_state = 'error', embedding_fingerprint = NULL,
               embedding_attempts = embedding_attempts + 1 WHERE rid = ?`,
            ).run(row.rid);
            result.error += 1;
          } else {
            this.#deleteVector(row.rid);
            this.#stmt(
              'write',
              "UPDATE memories SET embedding_state = 'ftsOnly', embedding_fingerprint = NULL WHERE rid = ?",
            ).run(row.rid);
            result.ftsOnly += 1;
          }
        }
        return result;
      });
    });
  }

  /** Active `pending` rows, in total and per agent. */
  countEmbeddingBacklog(): Promise<EmbeddingBacklog> {
    return this.#op('countEmbeddingBacklog', () => {
      const rows = this.#stmt(
        'read',
        `SELECT agent_id, count(*) AS n FROM memories WHERE embedding_state = 'pending' AND lifecycle = 'active'
         GROUP BY agent_id ORDER BY agent_id`,
      ).all<{ agent_id: string; n: number }>();
      const byAgent: Record<string, number> = {};
      let total = 0;
      for (const r of rows) {
        byAgent[r.agent_id] = r.n;
        total += r.n;
      }
      return { total, byAgent };
    });
  }

  /**
   * The explicit re-index: drops every vector, recreates the vector table for `profile` (or none), resets every
   * row to `pending` and records the new fingerprint.
   */
  resetEmbeddings(profile: EmbeddingProfile | null): Promise<void> {
    return this.#op('resetEmbeddings', () => {
      const parsed = profileSchema.nullable().safeParse(profile);
      if (!parsed.success) throw invalidInput('embedding profile', parsed.error);
      const next = profile === null ? null : { id: profile.id, dimensions: profile.dimensions };
      const fingerprint = embeddingFingerprint(next);
      this.#tx(() => {
        this.#db.exec('DROP TABLE IF EXISTS memories_vec');
        this.#count('meta');
        if (next !== null) {
          this.#db.exec(vectorTableSql(next.dimensions));
          this.#count('meta');
        }
        this.#stmt(
          'write',
          `UPDATE memories SET embedding_state = 'pending', embedding_fingerprint = NULL, embedding_attempts = 0`,
        ).run();
        this.#stmt(
          'meta',
          'INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value',
        ).run('embedding_fingerprint', fingerprint);
      });
      // Statements on the old vector table are stale now.
      for (const sql of [...this.#statements.keys()]) {
        if (sql.includes('memories_vec')) this.#statements.delete(sql);
      }
      this.#profile = next;
      this.#fingerprint = fingerprint;
      this.#warmupReported = false;
      this.#updateVectorRegistration();
    });
  }

  /**
   * Cheap integrity repair of one agent: `ready` rows without a vector (or with another fingerprint) and rows
   * missing from the word index are reset to `pending` / re-indexed. Bounded by `limit`.
   */
  repairEmbeddingIntegrity(
    agentId: string,
    options: RepairEmbeddingIntegrityOptions = {},
  ): Promise<{ readonly repaired: number }> {
    return this.#op('repairEmbeddingIntegrity', () => {
      validateAgentId(agentId);
      const limit = validateLimit(options.limit, 'limit', 100_000, 1000);
      return this.#tx(() => {
        let repaired = 0;
        const vecCond =
          this.#profile === null ? '' : 'OR NOT EXISTS (SELECT 1 FROM memories_vec v WHERE v.rowid = m.rid)';
        const broken = this.#stmt(
          'read',
          `SELECT m.rid AS rid FROM memories m
           WHERE m.agent_id = @agent AND m.embedding_state = 'ready'
             AND (m.embedding_fingerprint IS NOT @fp ${vecCond})
           ORDER BY m.rid LIMIT @limit`,
        ).all<{ rid: number }>({
          agent: agentId,
          fp: this.#profile === null ? null : this.#fingerprint,
          limit,
        });
        for (const r of broken) {
          this.#deleteVector(r.rid);
          this.#stmt(
            'write',
            "UPDATE memories SET embedding_state = 'pending', embedding_fingerprint = NULL WHERE rid = ?",
          ).run(r.rid);
          repaired += 1;
        }
        if (repaired < limit) {
          const missing = this.#stmt(
            'read',
            `SELECT m.rid AS rid, m.content AS content, m.has_cjk AS has_cjk FROM memories m
             WHERE m.agent_id = @agent AND NOT EXISTS (SELECT 1 FROM memories_fts_words f WHERE f.rowid = m.rid)
             ORDER BY m.rid LIMIT @limit`,
          ).all<{ rid: number; content: string; has_cjk: number }>({
            agent: agentId,
            limit: limit - repaired,
          });
          for (const r of missing) {
            this.#deleteFts(r.rid, r.has_cjk === 1);
            this.#writeFts(r.rid, agentId, r.content);
            repaired += 1;
          }
        }
        return { repaired };
      });
    });
  }

  /** Deletes vectors (of one agent, or all) whose memory row is gone or not `ready`, and orphaned FTS entries. */
  pruneOrphanedVectors(agentId?: string): Promise<{ readonly pruned: number }> {
    return this.#op('pruneOrphanedVectors', () => {
      if (agentId !== undefined) validateAgentId(agentId);
      return this.#tx(() => {
        let pruned = 0;
        const params = agentId === undefined ? {} : { agent: agentId };
        if (this.#profile !== null) {
          // One anti-join: a vector whose row is gone, not `ready`, or filed under another agent.
          const orphans = this.#stmt(
            'vector',
            `SELECT v.rowid AS rid FROM memories_vec v LEFT JOIN memories m ON m.rid = v.rowid
             WHERE ${agentId === undefined ? '' : 'v.agent_id = @agent AND'}
               (m.rid IS NULL OR m.embedding_state <> 'ready' OR m.agent_id <> v.agent_id)`,
          ).all<{ rid: number | bigint }>(params);
          for (const v of orphans) {
            this.#stmt('vector', 'DELETE FROM memories_vec WHERE rowid = ?').run(v.rid);
            pruned += 1;
          }
        }
        // FTS rows (either index) whose row is gone; scoped to the agent's postings when one is given.
        const scope = (t: string): string => (agentId === undefined ? '' : `${t} MATCH @match AND`);
        const ftsOrphans = this.#stmt(
          'fts',
          `SELECT rowid AS rid FROM memories_fts_words
             WHERE ${scope('memories_fts_words')} rowid NOT IN (SELECT rid FROM memories)
           UNION
           SELECT rowid AS rid FROM memories_fts_trigram
             WHERE ${scope('memories_fts_trigram')} rowid NOT IN (SELECT rid FROM memories)`,
        ).all<{ rid: number }>(
          agentId === undefined ? {} : { match: `agent : "${this.#agentToken(agentId)}"` },
        );
        for (const f of ftsOrphans) {
          this.#deleteFts(f.rid, true);
          pruned += 1;
        }
        return { pruned };
      });
    });
  }

  // ---------------------------------------------------------------- event log

  #toEvent(row: EventRow): EventRecord {
    let metadata: Record<string, unknown>;
    try {
      metadata = metadataJsonSchema.parse(JSON.parse(row.metadata));
    } catch (cause) {
      throw new EngramStoreError('ENGRAM_STORE_CORRUPT', 'stored event metadata is not valid JSON', {
        cause,
      });
    }
    return {
      agentId: row.agent_id,
      sessionId: row.session_id,
      seq: row.seq,
      type: row.type as EventType,
      role: row.role,
      content: row.content,
      toolName: row.tool_name,
      metadata,
      createdAt: row.created_at,
    };
  }

  /** Appends events idempotently by seq: identical re-appends are skipped, a differing one is a conflict. */
  appendEvents(
    agentId: string,
    sessionId: string,
    events: readonly EventInput[],
  ): Promise<AppendEventsResult> {
    return this.#op('appendEvents', () => {
      validateAgentId(agentId);
      validateAgentId(sessionId, 'sessionId');
      if (!Array.isArray(events)) throw invalidInput('events must be an array');
      const prepared = events.map((e, i) => prepareEvent(e, this.#limits, `events[${i}]`));
      const bySeq = new Map<number, (typeof prepared)[number]>();
      let skipped = 0;
      const unique: (typeof prepared)[number][] = [];
      for (const e of prepared) {
        const prev = bySeq.get(e.seq);
        if (prev === undefined) {
          bySeq.set(e.seq, e);
          unique.push(e);
        } else if (
          prev.type === e.type &&
          prev.role === e.role &&
          prev.content === e.content &&
          prev.toolName === e.toolName &&
          prev.metadataJson === e.metadataJson
        ) {
          skipped += 1;
        } else {
          throw invalidInput('the batch has two different events with the same seq');
        }
      }
      const now = this.#now();
      return this.#tx(() => {
        let appended = 0;
        if (unique.length > 0) {
          const existing = this.#stmt(
            'read',
            `SELECT seq, type, role, content, tool_name, metadata FROM events
             WHERE agent_id = ? AND session_id = ? AND seq IN (SELECT value FROM json_each(?))`,
          ).all<Pick<EventRow, 'seq' | 'type' | 'role' | 'content' | 'tool_name' | 'metadata'>>(
            agentId,
            sessionId,
            JSON.stringify(unique.map((e) => e.seq)),
          );
          const stored = new Map(existing.map((r) => [r.seq, r]));
          const insert = this.#stmt(
            'write',
            `INSERT INTO events(agent_id, session_id, seq, type, role, content, tool_name, metadata, content_hash, created_at)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
          );
          for (const e of unique) {
            const s = stored.get(e.seq);
            if (s !== undefined) {
              if (
                s.type === e.type &&
                s.role === e.role &&
                s.content === e.content &&
                s.tool_name === e.toolName &&
                s.metadata === e.metadataJson
              ) {
                skipped += 1;
                continue;
              }
              throw new EngramStoreError(
                'ENGRAM_STORE_CONFLICT',
                'an event with this seq is already stored with different content',
              );
            }
            insert.run(
              agentId,
              sessionId,
              e.seq,
              e.type,
              e.role,
              e.content,
              e.toolName,
              e.metadataJson,
              contentHash(e.content),
              e.createdAt ?? now,
            );
            appended += 1;
          }
        }
        const last = this.#stmt(
          'read',
          'SELECT max(seq) AS last FROM events WHERE agent_id = ? AND session_id = ?',
        ).get<{ last: number | null }>(agentId, sessionId);
        return { appended, skipped, lastSeq: last?.last ?? 0 };
      });
    });
  }

  /** Exactly the stored events with `fromSeq ≤ seq ≤ toSeq`, in order. */
  readEvents(
    agentId: string,
    sessionId: string,
    fromSeq: number,
    toSeq: number,
  ): Promise<readonly EventRecord[]> {
    return this.#op('readEvents', () => {
      validateAgentId(agentId);
      validateAgentId(sessionId, 'sessionId');
      validateInteger(fromSeq, 'fromSeq', 0);
      validateInteger(toSeq, 'toSeq', 0);
      if (toSeq < fromSeq) return [];
      return this.#stmt(
        'read',
        `SELECT * FROM events WHERE agent_id = ? AND session_id = ? AND seq BETWEEN ? AND ? ORDER BY seq`,
      )
        .all<EventRow>(agentId, sessionId, fromSeq, toSeq)
        .map((r) => this.#toEvent(r));
    });
  }

  /** Up to `limit` events with `seq > afterSeq`, in order. */
  listEventsAfter(
    agentId: string,
    sessionId: string,
    afterSeq: number,
    limit: number,
  ): Promise<readonly EventRecord[]> {
    return this.#op('listEventsAfter', () => {
      validateAgentId(agentId);
      validateAgentId(sessionId, 'sessionId');
      validateInteger(afterSeq, 'afterSeq', 0);
      const n = validateLimit(limit, 'limit', 10_000);
      return this.#stmt(
        'read',
        'SELECT * FROM events WHERE agent_id = ? AND session_id = ? AND seq > ? ORDER BY seq LIMIT ?',
      )
        .all<EventRow>(agentId, sessionId, afterSeq, n)
        .map((r) => this.#toEvent(r));
    });
  }

  /** The agent's sessions (with events or a cursor), with their last seq and cursor, by session id. */
  listSessions(
    agentId: string,
  ): Promise<readonly { readonly sessionId: string; readonly lastSeq: number; readonly cursor: number }[]> {
    return this.#op('listSessions', () => {
      validateAgentId(agentId);
      return this.#stmt(
        'read',
        `SELECT session_id AS sessionId, max(last_seq) AS lastSeq, max(cur) AS cursor FROM (
           SELECT session_id, max(seq) AS last_seq, 0 AS cur FROM events WHERE agent_id = @agent GROUP BY session_id
           UNION ALL
           SELECT session_id, 0 AS last_seq, cursor AS cur FROM session_cursors WHERE agent_id = @agent
         ) GROUP BY session_id ORDER BY session_id`,
      ).all<{ sessionId: string; lastSeq: number; cursor: number }>({ agent: agentId });
    });
  }

  #readCursor(agentId: string, sessionId: string): number {
    return (
      this.#stmt('read', 'SELECT cursor FROM session_cursors WHERE agent_id = ? AND session_id = ?').get<{
        cursor: number;
      }>(agentId, sessionId)?.cursor ?? 0
    );
  }

  /** The last ingested seq of a session (0 before any ingestion). */
  getCursor(agentId: string, sessionId: string): Promise<number> {
    return this.#op('getCursor', () => {
      validateAgentId(agentId);
      validateAgentId(sessionId, 'sessionId');
      return this.#readCursor(agentId, sessionId);
    });
  }

  /** Inserts the batch's memories and moves the cursor atomically (compare-and-set on the cursor). */
  ingestBatch(batch: IngestBatch): Promise<readonly MemoryRecord[]> {
    return this.#op('ingestBatch', () => {
      if (typeof batch !== 'object' || batch === null) throw invalidInput('batch must be an object');
      const agentId = validateAgentId(batch.agentId);
      const sessionId = validateAgentId(batch.sessionId, 'sessionId');
      const expected = validateInteger(batch.expectedCursor, 'expectedCursor', 0);
      const next = validateInteger(batch.nextCursor, 'nextCursor', 0);
      if (next < expected) throw invalidInput('nextCursor must not be below expectedCursor');
      if (!Array.isArray(batch.memories)) throw invalidInput('memories must be an array');
      const prepared = batch.memories.map((m, i) => this.#prepareInsert(m, `memories[${i}]`));
      for (const p of prepared) {
        if (p.agentId !== agentId)
          throw invalidInput('every memory of a batch must belong to the batch agent');
      }
      const now = this.#now();
      return this.#tx(() => {
        const current = this.#readCursor(agentId, sessionId);
        if (current !== expected) {
          throw new EngramStoreError(
            'ENGRAM_STORE_REVISION_CONFLICT',
            `the session cursor moved meanwhile (expected ${expected}, stored ${current})`,
          );
        }
        const records = prepared.map((p) => this.#insertPrepared(p, now));
        this.#stmt(
          'write',
          `INSERT INTO session_cursors(agent_id, session_id, cursor, updated_at) VALUES (?, ?, ?, ?)
           ON CONFLICT(agent_id, session_id) DO UPDATE SET cursor = excluded.cursor, updated_at = excluded.updated_at`,
        ).run(agentId, sessionId, next, now);
        return records;
      });
    });
  }

  // ---------------------------------------------------------------- skills

  #toSkill(row: SkillRow): SkillRecord {
    return {
      agentId: row.agent_id,
      name: row.name,
      description: row.description,
      content: row.content,
      createdAt: row.created_at,
      updatedAt: row.updated_at,
    };
  }

  /** Creates or replaces a skill (names are unique per agent, case-insensitively). */
  writeSkill(input: SkillInput): Promise<{ readonly skill: SkillRecord; readonly created: boolean }> {
    return this.#op('writeSkill', () => {
      const s = prepareSkill(input, this.#limits);
      const now = this.#now();
      return this.#tx(() => {
        const existing = this.#stmt(
          'read',
          'SELECT * FROM skills WHERE agent_id = ? AND name = ?',
        ).get<SkillRow>(s.agentId, s.name);
        if (existing === undefined) {
          this.#stmt(
            'write',
            'INSERT INTO skills(agent_id, name, description, content, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)',
          ).run(s.agentId, s.name, s.description, s.content, now, now);
          return {
            skill: { ...s, createdAt: now, updatedAt: now },
            created: true,
          };
        }
        this.#stmt(
          'write',
          'UPDATE skills SET name = ?, description = ?, content = ?, updated_at = ? WHERE agent_id = ? AND name = ?',
        ).run(s.name, s.description, s.content, now, s.agentId, s.name);
        return {
          skill: { ...s, createdAt: existing.created_at, updatedAt: now },
          created: false,
        };
      });
    });
  }

  /** Deletes a skill; false when it did not exist. */
  deleteSkill(agentId: string, name: string): Promise<boolean> {
    return this.#op('deleteSkill', () => {
      validateAgentId(agentId);
      validateSkillName(name);
      return (
        this.#stmt('write', 'DELETE FROM skills WHERE agent_id = ? AND name = ?').run(agentId, name).changes >
        0
      );
    });
  }

  /** The agent's skills by name. */
  listSkills(agentId: string): Promise<readonly SkillRecord[]> {
    return this.#op('listSkills', () => {
      validateAgentId(agentId);
      return this.#stmt('read', 'SELECT * FROM skills WHERE agent_id = ? ORDER BY name')
        .all<SkillRow>(agentId)
        .map((r) => this.#toSkill(r));
    });
  }

  /** One skill by name (case-insensitive), or null. */
  getSkill(agentId: string, name: string): Promise<SkillRecord | null> {
    return this.#op('getSkill', () => {
      validateAgentId(agentId);
      validateSkillName(name);
      const row = this.#stmt('read', 'SELECT * FROM skills WHERE agent_id = ? AND name = ?').get<SkillRow>(
        agentId,
        name,
      );
      return row === undefined ? null : this.#toSkill(row);
    });
  }

  // ---------------------------------------------------------------- health

  /**
   * Zero-filled counts by kind, lifecycle and embedding state. Totals: `memories` = all rows, `events` = rows of
   * the event log, `facts` = active `fact` rows, `skills` = skills. Never rejects.
   */
  health(
    agentId?: string,
  ): Promise<
    { readonly ok: true; readonly health: StoreHealth } | { readonly ok: false; readonly code: string }
  > {
    try {
      if (this.#closed) return Promise.resolve({ ok: false, code: 'ENGRAM_STORE_CLOSED' });
      if (agentId !== undefined) validateAgentId(agentId);
      const byKind = Object.fromEntries(MEMORY_KINDS.map((k) => [k, 0])) as Record<MemoryKind, number>;
      const byLifecycle = Object.fromEntries(LIFECYCLES.map((k) => [k, 0])) as Record<Lifecycle, number>;
      const byEmbeddingState = Object.fromEntries(EMBEDDING_STATES.map((k) => [k, 0])) as Record<
        EmbeddingState,
        number
      >;
      const where = agentId === undefined ? '' : 'WHERE agent_id = @agent';
      const params = agentId === undefined ? {} : { agent: agentId };
      const rows = this.#stmt(
        'read',
        `SELECT kind, lifecycle, embedding_state AS state, count(*) AS n FROM memories ${where}
         GROUP BY kind, lifecycle, embedding_state`,
      ).all<{ kind: string; lifecycle: string; state: string; n: number }>(params);
      let memories = 0;
      let facts = 0;
      for (const r of rows) {
        memories += r.n;
        if (r.kind in byKind) byKind[r.kind as MemoryKind] += r.n;
        if (r.lifecycle in byLifecycle) byLifecycle[r.lifecycle as Lifecycle] += r.n;
        if (r.state in byEmbeddingState) byEmbeddingState[r.state as EmbeddingState] += r.n;
        if (r.kind === 'fact' && r.lifecycle === 'active') facts += r.n;
      }
      const events =
        this.#stmt('read', `SELECT count(*) AS n FROM events ${where}`).get<{ n: number }>(params)?.n ?? 0;
      const skills =
        this.#stmt('read', `SELECT count(*) AS n FROM skills ${where}`).get<{ n: number }>(params)?.n ?? 0;
      return Promise.resolve({
        ok: true,
        health: { totals: { memories, events, facts, skills }, byKind, byLifecycle, byEmbeddingState },
      });
    } catch (err) {
      return Promise.resolve({ ok: false, code: classifySqliteError(err, 'health').code });
    }
  }

  /** Distinct agents with at least one memory or event, sorted. */
  listAgents(): Promise<readonly string[]> {
    return this.#op('listAgents', () =>
      this.#stmt('read', 'SELECT agent_id FROM memories UNION SELECT agent_id FROM events ORDER BY agent_id')
        .all<{ agent_id: string }>()
        .map((r) => r.agent_id),
    );
  }
}

/** Opens (or creates) a SQLite memory store; throws `EngramStoreError` (schema too new, fingerprint mismatch …). */
export function createSqliteMemoryStore(config: SqliteMemoryStoreConfig): SqliteMemoryStore {
  try {
    return new SqliteMemoryStore(config);
  } catch (err) {
    throw isEngramStoreError(err) ? err : classifySqliteError(err, 'open');
  }
}
