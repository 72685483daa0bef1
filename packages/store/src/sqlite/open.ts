/**
 * Opening a store: configuration check, directory creation, the driver open (encrypted or not), the
 * connection pragmas, the migration and the vector lease. Returns the connection context the slices use.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { noopStoreObserver } from '@engram/contracts';
import { classifySqliteError, EngramStoreError, invalidInput } from '../errors.js';
import { type Bm25Settings, DEFAULT_BM25 } from '../lexical-index.js';
import { openDatabase, type SqliteDatabase } from '../native.js';
import { DEFAULT_MAX_CONTENT_LENGTH } from '../validate.js';
import { checkConfig, keyBytes, type SqliteMemoryStoreConfig } from './config.js';
import { StoreContext } from './context.js';
import { type MigrationResult, migrate } from './migrate.js';
import { vectorRegistryKey } from './registry.js';

/** Opens the database of `config` and returns its migrated context; throws `EngramStoreError`. */
export function openStoreContext(config: SqliteMemoryStoreConfig): StoreContext {
  checkConfig(config);
  const maxContentLength = config.maxContentLength ?? DEFAULT_MAX_CONTENT_LENGTH;
  const memory = config.path === ':memory:' || config.path === '';
  if (config.encryption !== undefined && (memory || config.path.startsWith('file:'))) {
    throw invalidInput('encryption needs a plain file path (not :memory: or a file: URI)');
  }
  const vectorKey = vectorRegistryKey(memory ? null : resolve(config.path));
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
  const db = openConnection(config, busyTimeoutMs);
  const ctx = new StoreContext({
    db,
    observer: config.observer ?? noopStoreObserver,
    now: config.now ?? Date.now,
    idFactory: config.idFactory ?? randomUUID,
    limits: { maxContentLength },
    vectorKey,
    encrypted: config.encryption !== undefined,
  });
  ctx.bm25 = resolveBm25(config.lexical);
  ctx.forgetMode = config.forget ?? 'erase';
  let opened: MigrationResult;
  try {
    if (!memory) db.exec('PRAGMA journal_mode = WAL');
    db.exec(`PRAGMA busy_timeout = ${busyTimeoutMs}`);
    db.exec('PRAGMA foreign_keys = ON');
    db.exec('PRAGMA synchronous = NORMAL');
    opened = migrate(ctx, config.embedding);
  } catch (err) {
    try {
      db.close();
    } catch {
      // ignore: the open failed already
    }
    throw classifySqliteError(err, 'open');
  }
  ctx.schemaVersion = opened.schemaVersion;
  ctx.bindProfile(opened.profile, opened.fingerprint);
  return ctx;
}

/** The driver open; the key bytes are zero-filled as soon as the driver has them. */
function openConnection(config: SqliteMemoryStoreConfig, busyTimeoutMs: number): SqliteDatabase {
  const key = config.encryption === undefined ? undefined : keyBytes(config.encryption.key);
  try {
    return openDatabase(config.path, {
      busyTimeoutMs,
      ...(config.driver === undefined ? {} : { driver: config.driver }),
      ...(config.vectorExtensionPath === undefined
        ? {}
        : { vectorExtensionPath: config.vectorExtensionPath }),
      ...(key === undefined ? {} : { encryption: { key, cipher: config.encryption?.cipher ?? 'sqlcipher' } }),
    });
  } finally {
    key?.fill(0);
  }
}

/** The store's BM25 settings: the configured k1 and b, or the defaults. */
function resolveBm25(input: SqliteMemoryStoreConfig['lexical']): Bm25Settings {
  return Object.freeze({ k1: input?.k1 ?? DEFAULT_BM25.k1, b: input?.b ?? DEFAULT_BM25.b });
}
