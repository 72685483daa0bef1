/**
 * The one seam that loads native code: the better-sqlite3 driver (or an injected compatible constructor such
 * as better-sqlite3-multiple-ciphers) and the sqlite-vec extension. Nothing is loaded at import time, so the
 * package's pure parts can be imported where no binding exists.
 */
import { createRequire } from 'node:module';
import { EngramStoreError } from './errors.js';

const require = createRequire(import.meta.url);

/** One prepared statement, as the store uses it (the subset of better-sqlite3's `Statement`). */
export interface SqliteStatement {
  run(...params: unknown[]): { changes: number; lastInsertRowid: number | bigint };
  get(...params: unknown[]): unknown;
  all(...params: unknown[]): unknown[];
}

/** A database connection, as the store uses it (the subset of better-sqlite3's `Database`). */
export interface SqliteDatabase {
  prepare(sql: string): SqliteStatement;
  exec(sql: string): unknown;
  loadExtension(path: string): unknown;
  close(): unknown;
  readonly open: boolean;
  readonly inTransaction: boolean;
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
  /** Load sqlite-vec (default true). */
  readonly loadVectorExtension?: boolean;
  /** Path of the sqlite-vec loadable extension; `sqliteVec.getLoadablePath()` by default. */
  readonly vectorExtensionPath?: string;
}

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

/** Opens a connection with the (injectable) driver and loads sqlite-vec into it. */
export function openDatabase(path: string, options: OpenDatabaseOptions = {}): SqliteDatabase {
  const Driver = options.driver ?? loadDefaultDriver();
  let db: SqliteDatabase;
  try {
    db = new Driver(path, { timeout: options.busyTimeoutMs ?? 5000 });
  } catch (cause) {
    const code = (cause as { code?: unknown } | null)?.code;
    if (typeof code === 'string' && code.startsWith('SQLITE_')) {
      throw new EngramStoreError('ENGRAM_STORE_IO', 'the database file could not be opened', { cause });
    }
    throw new EngramStoreError(
      'ENGRAM_STORE_NATIVE_UNAVAILABLE',
      `the SQLite driver could not open a database on ${platformName()}`,
      { cause },
    );
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
 * (contentless with `contentless_delete`, SQLite ≥ 3.43), JSON1, the trigram tokenizer and sqlite-vec
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
      },
      'the JSON1 functions are required',
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
