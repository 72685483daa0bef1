/**
 * The one seam that loads native code: the better-sqlite3 driver (or an injected compatible constructor such
 * as better-sqlite3-multiple-ciphers) and the sqlite-vec extension. Nothing is loaded at import time, so the
 * package's pure parts can be imported where no binding exists.
 */
import { createRequire } from 'node:module';
import { EngramStoreError } from '@engram/store/port-kit';
import { classifySqliteError } from './sqlite/classify.js';

const require = createRequire(import.meta.url);

/** One prepared statement, as the store uses it (the subset of better-sqlite3's `Statement`). */
export interface SqliteStatement {
  run(...params: unknown[]): { changes: number; lastInsertRowid: number | bigint };
  get(...params: unknown[]): unknown;
  all(...params: unknown[]): unknown[];
  /** Rows as arrays of column values (`true`) or as objects (`false`, the default). */
  raw(toggle?: boolean): unknown;
}

/** A database connection, as the store uses it (the subset of better-sqlite3's `Database`). */
export interface SqliteDatabase {
  prepare(sql: string): SqliteStatement;
  exec(sql: string): unknown;
  loadExtension(path: string): unknown;
  close(): unknown;
  readonly open: boolean;
  readonly inTransaction: boolean;
  /** Sets the encryption key of the connection (better-sqlite3-multiple-ciphers only; `sqlite3_key`). */
  key?(key: Buffer): unknown;
  /** Changes the encryption key of the database (better-sqlite3-multiple-ciphers only; `sqlite3_rekey`). */
  rekey?(key: Buffer): unknown;
}

/** Options passed to the driver's constructor. */
export interface SqliteDriverOptions {
  readonly timeout?: number;
  readonly readonly?: boolean;
  readonly fileMustExist?: boolean;
}

/** A better-sqlite3 compatible `Database` constructor (better-sqlite3, better-sqlite3-multiple-ciphers …). */
export type SqliteDriver = new (filename: string, options?: SqliteDriverOptions) => SqliteDatabase;

/** Options of `openDatabase`. */
export interface OpenDatabaseOptions {
  /** The driver constructor; better-sqlite3 by default. */
  readonly driver?: SqliteDriver;
  /** Busy timeout in milliseconds (default 5000). */
  readonly busyTimeoutMs?: number;
  /** Open a read-only connection to an existing file (default false: read-write, created when missing). */
  readonly readonly?: boolean;
  /** Load sqlite-vec (default true). */
  readonly loadVectorExtension?: boolean;
  /** Path of the sqlite-vec loadable extension; `sqliteVec.getLoadablePath()` by default. */
  readonly vectorExtensionPath?: string;
  /**
   * Open an encrypted database: the cipher is configured and the key applied before anything is read, then one
   * read proves the key (a wrong key is `ENGRAM_STORE_ENCRYPTION_KEY`). The driver must support `key()`.
   */
  readonly encryption?: DatabaseEncryption;
}

/** The ciphers an encrypted store can use. `sqlcipher`: SQLCipher 4 compatible (`PRAGMA cipher='sqlcipher'; PRAGMA legacy=4`). */
export const ENCRYPTION_CIPHERS = ['sqlcipher'] as const;
/** One supported cipher. */
export type EncryptionCipher = (typeof ENCRYPTION_CIPHERS)[number];

/** The key material of an encrypted connection (the passphrase bytes) and its cipher. */
export interface DatabaseEncryption {
  /** Passphrase bytes, handed to `sqlite3_key` (never rendered into SQL text, errors or logs). */
  readonly key: Uint8Array;
  readonly cipher: EncryptionCipher;
}

/** The npm package of the optional encryption driver. */
export const CIPHER_DRIVER_PACKAGE = 'better-sqlite3-multiple-ciphers';

function platformName(): string {
  return `${process.platform}-${process.arch} (node ${process.versions.node})`;
}

let cachedDriver: SqliteDriver | undefined;

/** Loads the default driver (better-sqlite3); throws `ENGRAM_STORE_NATIVE_UNAVAILABLE` naming the platform. */
export function loadDefaultDriver(): SqliteDriver {
  if (cachedDriver !== undefined) return cachedDriver;
  try {
    const mod = require('better-sqlite3') as SqliteDriver | { default: SqliteDriver };
    cachedDriver = typeof mod === 'function' ? mod : mod.default;
    return cachedDriver;
  } catch (cause) {
    throw new EngramStoreError(
      'ENGRAM_STORE_NATIVE_UNAVAILABLE',
      `better-sqlite3 could not be loaded on ${platformName()}`,
      { cause },
    );
  }
}

let cachedCipherDriver: SqliteDriver | undefined;

/**
 * Loads a driver module through `load` (the module loader; `require` by default) and returns its constructor;
 * throws `ENGRAM_STORE_NATIVE_UNAVAILABLE` naming the package and the platform.
 */
export function loadDriverModule(
  packageName: string,
  load: (id: string) => unknown = require,
  purpose = 'open a database',
): SqliteDriver {
  try {
    const mod = load(packageName) as SqliteDriver | { default: SqliteDriver } | null;
    const ctor = typeof mod === 'function' ? mod : mod?.default;
    if (typeof ctor !== 'function') throw new TypeError('the module does not export a constructor');
    return ctor;
  } catch (cause) {
    throw new EngramStoreError(
      'ENGRAM_STORE_NATIVE_UNAVAILABLE',
      `${packageName} could not be loaded on ${platformName()}; it is needed to ${purpose} (install it next to @engram/store)`,
      { cause },
    );
  }
}

/**
 * Loads the optional encryption driver (better-sqlite3-multiple-ciphers, an optional peer dependency);
 * throws `ENGRAM_STORE_NATIVE_UNAVAILABLE` naming the package when it is not installed.
 */
export function loadCipherDriver(): SqliteDriver {
  if (cachedCipherDriver !== undefined) return cachedCipherDriver;
  cachedCipherDriver = loadDriverModule(CIPHER_DRIVER_PACKAGE, require, 'open an encrypted database');
  return cachedCipherDriver;
}

function sqliteCode(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : '';
}

/** Configures the cipher, applies the key and proves it with one read; closes nothing (the caller does). */
function applyEncryption(db: SqliteDatabase, encryption: DatabaseEncryption): void {
  if (typeof db.key !== 'function') {
    throw new EngramStoreError(
      'ENGRAM_STORE_INVALID_INPUT',
      `invalid input: the SQLite driver does not support encryption (use ${CIPHER_DRIVER_PACKAGE})`,
    );
  }
  // Fixed SQL only: the key never becomes SQL text. SQLCipher 4 defaults (PBKDF2-HMAC-SHA512, 256,000
  // iterations, 4096-byte pages, HMAC-SHA512), as SQLite3MultipleCiphers documents for `legacy=4`.
  db.exec("PRAGMA cipher = 'sqlcipher'");
  db.exec('PRAGMA legacy = 4');
  // Temporary files (sorts, large transactions) stay in memory, so no plaintext spills to disk.
  db.exec('PRAGMA temp_store = MEMORY');
  const key = Buffer.from(encryption.key);
  try {
    db.key(key);
  } finally {
    key.fill(0);
  }
  try {
    db.prepare('SELECT count(*) AS n FROM sqlite_master').get();
  } catch (cause) {
    const code = sqliteCode(cause);
    if (code === 'SQLITE_NOTADB' || code.startsWith('SQLITE_CORRUPT')) {
      throw new EngramStoreError(
        'ENGRAM_STORE_ENCRYPTION_KEY',
        'the encryption key does not open this database (a wrong key, or the file is not encrypted)',
        { cause },
      );
    }
    throw cause;
  }
}

/** The path of the sqlite-vec loadable extension for this platform; a typed error naming the platform otherwise. */
export function sqliteVecLoadablePath(): string {
  try {
    const mod = require('sqlite-vec') as { getLoadablePath(): string };
    return mod.getLoadablePath();
  } catch (cause) {
    throw new EngramStoreError(
      'ENGRAM_STORE_NATIVE_UNAVAILABLE',
      `sqlite-vec has no loadable extension for ${platformName()}`,
      { cause },
    );
  }
}

/** Loads sqlite-vec into a connection; throws `ENGRAM_STORE_NATIVE_UNAVAILABLE` naming the platform. */
export function loadSqliteVec(db: SqliteDatabase, path?: string): void {
  const file = path ?? sqliteVecLoadablePath();
  try {
    db.loadExtension(file);
  } catch (cause) {
    throw new EngramStoreError(
      'ENGRAM_STORE_NATIVE_UNAVAILABLE',
      `sqlite-vec could not be loaded into SQLite on ${platformName()}`,
      { cause },
    );
  }
}

/**
 * Opens a connection with the (injectable) driver — the encryption driver when `encryption` is given and no
 * driver is — applies the key, and loads sqlite-vec into it.
 */
export function openDatabase(path: string, options: OpenDatabaseOptions = {}): SqliteDatabase {
  const Driver =
    options.driver ?? (options.encryption === undefined ? loadDefaultDriver() : loadCipherDriver());
  let db: SqliteDatabase;
  try {
    db = new Driver(path, {
      timeout: options.busyTimeoutMs ?? 5000,
      ...(options.readonly === true ? { readonly: true, fileMustExist: true } : {}),
    });
  } catch (cause) {
    const code = (cause as { code?: unknown } | null)?.code;
    if (typeof code === 'string' && code.startsWith('SQLITE_')) {
      throw classifySqliteError(cause, 'open');
    }
    throw new EngramStoreError(
      'ENGRAM_STORE_NATIVE_UNAVAILABLE',
      `the SQLite driver could not open a database on ${platformName()}`,
      { cause },
    );
  }
  if (options.encryption !== undefined) {
    try {
      applyEncryption(db, options.encryption);
    } catch (err) {
      db.close();
      if (err instanceof EngramStoreError) throw err;
      const code = sqliteCode(err);
      throw new EngramStoreError(
        code.startsWith('SQLITE_') ? 'ENGRAM_STORE_IO' : 'ENGRAM_STORE_UNKNOWN',
        'the encrypted database could not be opened',
        { cause: err },
      );
    }
  }
  if (options.loadVectorExtension !== false) {
    try {
      loadSqliteVec(db, options.vectorExtensionPath);
    } catch (err) {
      db.close();
      throw err;
    }
  }
  return db;
}

/** The native capabilities the store needs. */
export const NATIVE_CAPABILITIES = ['better-sqlite3', 'fts5', 'json1', 'trigram', 'sqlite-vec'] as const;
/** One native capability. */
export type NativeCapability = (typeof NATIVE_CAPABILITIES)[number];

/** The result of probing the native capabilities. */
export interface NativeCapabilityReport {
  readonly ok: boolean;
  /** Names of the missing capabilities, from `NATIVE_CAPABILITIES`. */
  readonly missing: NativeCapability[];
  /** One human-readable line per capability (and versions), for a gate's failure message. */
  readonly details: string[];
}

function firstLine(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  const line = message.split('\n')[0] ?? '';
  return line.length > 200 ? `${line.slice(0, 200)}…` : line;
}

/**
 * Probes each native capability by using it on an in-memory database: the better-sqlite3 binding, FTS5
 * (contentless with `contentless_delete`, SQLite ≥ 3.43), JSON1 with JSONB (SQLite ≥ 3.45), the trigram
 * tokenizer and sqlite-vec
 * (a `vec0` table with an agent partition key and cosine distance). Never throws.
 */
export function checkNativeCapabilities(
  options: { readonly driver?: SqliteDriver } = {},
): NativeCapabilityReport {
  const missing: NativeCapability[] = [];
  const details: string[] = [`platform: ${platformName()}`];
  let db: SqliteDatabase | undefined;
  try {
    const Driver = options.driver ?? loadDefaultDriver();
    db = new Driver(':memory:');
    const row = db.prepare('SELECT sqlite_version() AS v').get() as { v: string };
    details.push(`better-sqlite3: ok (SQLite ${row.v})`);
  } catch (err) {
    missing.push(...NATIVE_CAPABILITIES);
    details.push(`better-sqlite3: MISSING (${firstLine(err instanceof EngramStoreError ? err.cause : err)})`);
    details.push('fts5, json1, trigram, sqlite-vec: not probed (no driver)');
    return { ok: false, missing, details };
  }
  const conn = db;
  const probe = (name: NativeCapability, fn: () => void, hint: string): void => {
    try {
      fn();
      details.push(`${name}: ok`);
    } catch (err) {
      missing.push(name);
      const cause = err instanceof EngramStoreError ? err.cause : err;
      details.push(`${name}: MISSING — ${hint} (${firstLine(cause)})`);
    }
  };
  try {
    probe(
      'fts5',
      () => {
        conn.exec("CREATE VIRTUAL TABLE probe_fts USING fts5(a, b, content='', contentless_delete=1)");
        conn.prepare('INSERT INTO probe_fts(rowid, a, b) VALUES (1, ?, ?)').run('x', 'hello world');
        conn.prepare('DELETE FROM probe_fts WHERE rowid = 1').run();
      },
      'FTS5 with contentless_delete (SQLite ≥ 3.43) is required',
    );
    probe(
      'json1',
      () => {
        const r = conn.prepare('SELECT count(*) AS n FROM json_each(?)').get('["a","b"]') as { n: number };
        if (r.n !== 2) throw new Error('json_each returned a wrong count');
        const b = conn.prepare('SELECT value ->> 1 AS v FROM jsonb_each(?)').get('[["a",7]]') as {
          v: number;
        };
        if (b.v !== 7) throw new Error('jsonb_each returned a wrong value');
      },
      'the JSON1 functions, with JSONB (SQLite ≥ 3.45), are required',
    );
    probe(
      'trigram',
      () => {
        conn.exec("CREATE VIRTUAL TABLE probe_tri USING fts5(b, tokenize='trigram')");
        conn.prepare('INSERT INTO probe_tri(rowid, b) VALUES (1, ?)').run('数据库连接池');
        const r = conn
          .prepare('SELECT count(*) AS n FROM probe_tri WHERE probe_tri MATCH ?')
          .get('"据库连"') as {
          n: number;
        };
        if (r.n !== 1) throw new Error('the trigram tokenizer did not match a substring');
      },
      'the FTS5 trigram tokenizer (SQLite ≥ 3.34) is required',
    );
    probe(
      'sqlite-vec',
      () => {
        loadSqliteVec(conn);
        conn.exec(
          'CREATE VIRTUAL TABLE probe_vec USING vec0(agent_id text partition key, embedding float[2] distance_metric=cosine)',
        );
        conn
          .prepare('INSERT INTO probe_vec(rowid, agent_id, embedding) VALUES (?, ?, ?)')
          .run(1n, 'a', new Float32Array([1, 0]));
        const r = conn
          .prepare('SELECT rowid FROM probe_vec WHERE embedding MATCH ? AND k = 1 AND agent_id = ?')
          .all(new Float32Array([1, 0.1]), 'a');
        if (r.length !== 1) throw new Error('vec0 k-NN returned no row');
        const v = conn.prepare('SELECT vec_version() AS v').get() as { v: string };
        details.push(`sqlite-vec version: ${v.v}`);
      },
      'the sqlite-vec extension (vec0 with partition keys and cosine distance) is required',
    );
  } finally {
    try {
      conn.close();
    } catch {
      // ignore
    }
  }
  return { ok: missing.length === 0, missing, details };
}
