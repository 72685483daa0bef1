/**
 * Configuration of the SQLite store: the public config and info types, and the zod schemas that check them.
 */

import type { StoreObserver } from '@engram/contracts';
import type {
  EmbeddingProfile,
  ForgetMode,
  RepairEmbeddingIntegrityOptions,
  StoreAccess,
  VectorIndexProgress,
} from '@engram/store/port-kit';
import { invalidInput, MAX_CONTENT_LENGTH_CAP } from '@engram/store/port-kit';
import { z } from 'zod';
import type { EncryptionCipher, SqliteDriver } from '../native.js';
import { VECTOR_QUANTIZATIONS, type VectorIndexOptions } from './vector-quant.js';

export type { RepairEmbeddingIntegrityOptions, StoreAccess, VectorIndexProgress };

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
  /**
   * How the file is opened. `write` (the default): the file is created when missing or empty, migrated when
   * older, and every slice works. `read`: a read-only connection — nothing is ever created, converted or
   * migrated, no write lock is taken, and every write rejects with `ENGRAM_STORE_READ_ONLY`; a missing or
   * empty file is `ENGRAM_STORE_NOT_ENGRAM`, a file of an older schema `ENGRAM_STORE_SCHEMA_TOO_OLD`. Either
   * way a file that is not an Engram store is refused before anything is written.
   */
  readonly access?: StoreAccess;
  /** SQLite busy timeout, default 5000 ms. */
  readonly busyTimeoutMs?: number;
  /**
   * Bytes of an unencrypted database file SQLite reads through memory-mapped I/O (`PRAGMA mmap_size`), default
   * {@link DEFAULT_MMAP_SIZE} (2 GiB); 0 turns it off. Ignored for `:memory:` and for encrypted files (their
   * pages are decrypted on every read, so a map cannot serve them). Reads of a mapped page skip a copy out of
   * the OS page cache (the vector arm's k-NN reads every vector of the agent: measured about a third faster).
   * The trade-off, from SQLite's documentation: an I/O error on a mapped page (a failing disk, a network file
   * system going away, the file truncated by another program) cannot be returned as an error and raises a signal
   * (SIGBUS) that ends the process; with 0 the same fault is `ENGRAM_STORE_IO`.
   */
  readonly mmapSize?: number;
  /** Maximum content length in UTF-16 code units, default 65,536. */
  readonly maxContentLength?: number;
  /** The clock (epoch milliseconds), `Date.now` by default. */
  readonly now?: () => number;
  /** Statement counts and vector gauges; no-op by default. */
  readonly observer?: StoreObserver;
  /** Ids of new memories without a caller id; a time-ordered UUID (version 7, `timeOrderedId`) by default. */
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
  /**
   * BM25 settings of the lexical search (`any` mode): `k1` (term-frequency saturation, 0..10, default 0.9)
   * and `b` (length normalisation, 0..1, default 0.4). They apply at query time, so changing them needs no
   * re-index.
   */
  readonly lexical?: { readonly k1?: number; readonly b?: number };
  /**
   * What forgetting a memory (`forgetMemory`, `deleteAll`) does. `erase` (default): the row, its index
   * entries, vectors and the text its history kept are removed; a tombstone with who, when and why stays.
   * `keep`: the row stays with its content, archived and marked forgotten (`forgottenAt`), never returned by
   * search; events and skills stay too.
   */
  readonly forget?: ForgetMode;
  /**
   * Many processes draining one file: listing pending embeddings claims the rows it returns for this long
   * (ms, 100..3,600,000, on the store clock), and the other stores skip them until their claimant commits them
   * or the lease runs out (a claimant that died loses its rows to the next drain). Needs access `write`.
   * Omitted: no claims (one drain at a time). See `claims.ts`.
   */
  readonly claimLeaseMs?: number;
  /**
   * The vector index (opt-in quantisation). `quantization`: `none` (exact float k-NN), `int8` or `bit` (a
   * coarse k-NN on quantised copies of the vectors, then the exact float distance of `k × rescore`
   * candidates). Omitted: the file's recorded setting is adopted (a new file, or one from before schema 8,
   * records the one asked for, `none` by default). Another setting than the recorded one is
   * `ENGRAM_STORE_VECTOR_INDEX_MISMATCH` (the embedder's is `ENGRAM_STORE_FINGERPRINT_MISMATCH`); changing it is an explicit `resetVectorIndex`. `rescore` applies at
   * query time and is not recorded. When another connection (another store object, another process) changes the
   * recorded setting while this store is open, the store does what an open would: with an explicit
   * `quantization` that no longer matches, its later vector writes and searches fail with
   * `ENGRAM_STORE_VECTOR_INDEX_MISMATCH` and write nothing (reopen it with the file's setting), while its deletes
   * still remove the file's quantised copies; without one it adopts the file's setting. Checked with one
   * `PRAGMA data_version` read per vector search and per write transaction that writes or deletes a vector.
   */
  readonly vectorIndex?: VectorIndexOptions;
  /**
   * Runs the k-NN of `searchVector` on a worker thread with its own read-only connection to the file (the same
   * memory map, sqlite-vec, and cipher and key when encrypted), so a hybrid search's vector arm runs while its
   * FTS arm runs on the store's connection. Default: on for a file when the machine has a second core
   * (`os.availableParallelism() >= 2`); always off for `:memory:`, a `file:` URI and a custom `driver`. The
   * answer is the same either way. Costs one more connection (its page cache) and one thread (a few MB); the
   * thread starts with the second search (searches run on the store's connection until it is ready), never
   * keeps the process alive, and ends with `close()`. A worker that fails degrades to the store's connection.
   */
  readonly vectorWorker?: boolean;
  /**
   * Progress of a quantised vector index build (see `vectorIndex`): called once before the first step (`step`
   * 0, `done` = what an interrupted build already did), after each bounded step and at the end (`done ===
   * total`), from the store's own thread, during the open that finishes a pending build or during
   * `resetVectorIndex`. If another process resets the index to another kind meanwhile, this build stops and its
   * last report says how far it got (no `done === total`). Counts only, never content. What the callback throws
   * (or an async callback rejects with) is ignored: the build goes on. Not called when there is nothing to build.
   */
  readonly onIndexProgress?: (progress: VectorIndexProgress) => void;
}

/**
 * The default `mmapSize`: 2 GiB less 64 KiB, SQLite's own ceiling (`SQLITE_MAX_MMAP_SIZE`, 0x7fff0000, in
 * better-sqlite3's build; a larger value is cut to it). A file up to that size is read entirely through the map;
 * past it the rest is read as without one. SQLite maps no more than the file's size, so a small file costs a
 * small map. A smaller map leaves the vectors past it unmapped, and their k-NN reads each page with a system
 * call, so the agents stored late in a large file would search slower than the others.
 */
export const DEFAULT_MMAP_SIZE = 2_147_418_112;

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

const fnSchema = z.custom<(...args: never[]) => unknown>((v) => typeof v === 'function');

const profileSchema = z.object({
  id: z
    .string()
    .min(1)
    .max(128)
    .regex(/^[^\u0000-\u001f]+$/),
  dimensions: z.number().int().min(1).max(8192),
});

const keyValueSchema = z.union([
  z.string().min(1),
  z.custom<Uint8Array>((v) => v instanceof Uint8Array && v.byteLength > 0),
]);

const configSchema = z.object({
  path: z.string().min(1),
  embedding: profileSchema.nullable().optional(),
  access: z.enum(['read', 'write']).optional(),
  busyTimeoutMs: z.number().int().min(0).max(600_000).optional(),
  mmapSize: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional(),
  maxContentLength: z.number().int().min(1).max(MAX_CONTENT_LENGTH_CAP).optional(),
  now: fnSchema.optional(),
  observer: z.custom<StoreObserver>((v) => typeof v === 'object' && v !== null).optional(),
  idFactory: fnSchema.optional(),
  driver: fnSchema.optional(),
  vectorExtensionPath: z.string().min(1).optional(),
  lexical: z
    .object({ k1: z.number().min(0).max(10).optional(), b: z.number().min(0).max(1).optional() })
    .optional(),
  forget: z.enum(['erase', 'keep']).optional(),
  claimLeaseMs: z.number().int().min(100).max(3_600_000).optional(),
  vectorIndex: z
    .strictObject({
      quantization: z.enum(VECTOR_QUANTIZATIONS as ['none', 'int8', 'bit']).optional(),
      rescore: z.number().int().min(1).max(64).optional(),
    })
    .optional(),
  vectorWorker: z.boolean().optional(),
  onIndexProgress: fnSchema.optional(),
  encryption: z
    .object({
      key: keyValueSchema,
      cipher: z.literal('sqlcipher').optional(),
    })
    .optional(),
});

/** Checks a store configuration; `ENGRAM_STORE_INVALID_INPUT` otherwise. */
export function checkConfig(config: SqliteMemoryStoreConfig): void {
  const parsed = configSchema.safeParse(config);
  if (!parsed.success) throw invalidInput('store configuration', parsed.error);
}

/** Checks vector index options (`resetVectorIndex`); `ENGRAM_STORE_INVALID_INPUT` otherwise. */
export function checkVectorIndex(options: VectorIndexOptions): void {
  const parsed = configSchema.shape.vectorIndex.safeParse(options);
  if (!parsed.success || options === undefined) throw invalidInput('vector index options', parsed.error);
}

/** Checks an embedder profile (or null): a control-free id and 1–8192 dimensions. */
export function checkProfile(profile: EmbeddingProfile | null): void {
  const parsed = profileSchema.nullable().safeParse(profile);
  if (!parsed.success) throw invalidInput('embedding profile', parsed.error);
}

/** True for a usable passphrase: a non-empty string or non-empty bytes. */
export function isValidKey(key: unknown): boolean {
  return keyValueSchema.safeParse(key).success;
}

/** The passphrase bytes of a key (a copy: the caller zero-fills it after use). */
export function keyBytes(key: string | Uint8Array): Buffer {
  return typeof key === 'string' ? Buffer.from(key, 'utf8') : Buffer.from(key);
}
