/**
 * Opening a store: configuration check, the file's presence (a read needs one; a write creates its directory),
 * the driver open (read-only or not, encrypted or not), the file's identification before anything is written,
 * then for a write open the integrity check, the WAL switch and the migration when one is needed; the vector
 * lease. Returns the connection context the slices use.
 */
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { noopStoreObserver } from '@engram/contracts';
import {
  DEFAULT_MAX_CONTENT_LENGTH,
  EngramStoreError,
  integrityAllowsWrites,
  invalidInput,
  timeOrderedId,
} from '@engram/store/port-kit';
import { type Bm25Settings, DEFAULT_BM25 } from '../lexical-index.js';
import { openDatabase, type SqliteDatabase } from '../native.js';
import { SCHEMA_VERSION } from '../schema.js';
import { classifySqliteError } from './classify.js';
import {
  checkConfig,
  DEFAULT_MMAP_SIZE,
  keyBytes,
  type SqliteMemoryStoreConfig,
  type StoreAccess,
} from './config.js';
import { StoreContext } from './context.js';
import { fileState, identify, notEngram, refuseForeignHeader } from './identify.js';
import { type MigrationResult, migrate, readBinding } from './migrate.js';
import { checksAtOpen, quickCheck } from './quick-check.js';
import { vectorRegistryKey } from './registry.js';
import { defaultVectorWorker, VectorWorker } from './vector-dispatch.js';
import { vectorIndexSetting } from './vector-quant.js';
import { finishQuantIndex } from './vector-quant-build.js';

/**
 * Opens the database of `config` and returns its context; throws `EngramStoreError`. The file is identified
 * with plain reads before anything is written (a foreign, damaged or too-new file is refused byte-identical);
 * only then does a write open switch to WAL, and it takes the write lock only when a migration or a binding
 * must be written. A read open uses a read-only connection and writes nothing at all.
 */
export function openStoreContext(config: SqliteMemoryStoreConfig): StoreContext {
  checkConfig(config);
  const access = config.access ?? 'write';
  const maxContentLength = config.maxContentLength ?? DEFAULT_MAX_CONTENT_LENGTH;
  const memory = config.path === ':memory:' || config.path === '';
  if (config.encryption !== undefined && (memory || config.path.startsWith('file:'))) {
    throw invalidInput('encryption needs a plain file path (not :memory: or a file: URI)');
  }
  if (access === 'read' && memory) throw invalidInput('access read needs a database file (not :memory:)');
  if (access === 'read' && config.claimLeaseMs !== undefined) {
    throw invalidInput('claimLeaseMs needs access write (claiming rows writes them)');
  }
  const vectorKey = vectorRegistryKey(memory ? null : resolve(config.path));
  if (!memory && !config.path.startsWith('file:')) prepareFile(resolve(config.path), access, config);
  const busyTimeoutMs = config.busyTimeoutMs ?? 5000;
  const db = openConnection(config, busyTimeoutMs, access === 'read');
  const mmapSize = storeMmapSize(config, memory);
  const ctx = new StoreContext({
    db,
    observer: config.observer ?? noopStoreObserver,
    now: config.now ?? Date.now,
    idFactory: config.idFactory ?? timeOrderedId,
    limits: { maxContentLength },
    vectorKey,
    encrypted: config.encryption !== undefined,
    access,
    busyTimeoutMs,
    mmapSize,
  });
  ctx.bm25 = resolveBm25(config.lexical);
  ctx.forgetMode = config.forget ?? 'erase';
  ctx.claimLeaseMs = config.claimLeaseMs ?? null;
  ctx.onIndexProgress = config.onIndexProgress ?? null;
  const quantization = config.vectorIndex?.quantization;
  let opened: MigrationResult;
  let version = Number.NaN;
  try {
    db.exec(`PRAGMA busy_timeout = ${busyTimeoutMs}`);
    db.exec('PRAGMA foreign_keys = ON');
    if (mmapSize > 0) db.exec(`PRAGMA mmap_size = ${mmapSize}`);
    const identity = identify(db);
    ctx.count('meta');
    // Read before the binding: a commit by another connection after this (a `resetVectorIndex`) moves it, and the
    // store's first write or search then reads the recorded setting again (see `followVectorIndex`). A
    // `:memory:` database is private to this connection: nothing else can change it, so it is never checked.
    if (!memory) version = ctx.dataVersion();
    if (access === 'read') {
      if (identity.kind === 'new') throw notEngram('the database is empty (a read never creates a store)');
      if (identity.version < SCHEMA_VERSION) throw tooOld(identity.version);
      opened = readBinding(ctx, config.embedding, false, identity.stamped, quantization) as MigrationResult;
    } else {
      // A file whose structure is damaged is neither converted nor migrated: it opens for reading and refuses
      // every write.
      const checked = identity.kind === 'engram' && !memory && checksAtOpen(resolve(config.path));
      // A check failed only on rows no reader can use or on damaged vector chunks leaves writes allowed: such a
      // file is migrated and opened as any other.
      if (checked && !integrityAllowsWrites(quickCheck(ctx))) {
        // Throws: a damaged file of an older schema is not migrated.
        if (identity.version < SCHEMA_VERSION) ctx.assertWritable('open');
        opened = readBinding(ctx, config.embedding, false, identity.stamped, quantization) as MigrationResult;
      } else {
        if (!memory) useWal(db);
        db.exec('PRAGMA synchronous = NORMAL');
        const current =
          identity.kind === 'engram' && identity.version === SCHEMA_VERSION
            ? readBinding(ctx, config.embedding, true, identity.stamped, quantization)
            : null;
        opened = current ?? migrate(ctx, config.embedding, quantization);
        // A quantised table created now or left unfinished (a build interrupted part-way) is filled here, in
        // bounded transactions, before the store is handed out.
        if (opened.quantBuildPending && opened.profile !== null) {
          finishQuantIndex(ctx, opened.quantization, opened.profile.dimensions);
          opened = { ...opened, quantBuildPending: false };
        }
        // A file created just now is checked too, so its health says `ok` from the start.
        if (!checked && !memory && identity.kind === 'new') quickCheck(ctx);
      }
    }
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
  ctx.vectorIndex = vectorIndexSetting(opened.quantization, config.vectorIndex);
  // A copy: the caller changing its configuration object later must not change what this store holds to.
  ctx.vectorIndexOption = config.vectorIndex === undefined ? undefined : { ...config.vectorIndex };
  ctx.vectorIndexVersion = memory ? null : version;
  // A build this open could not finish (read-only, or a damaged file): searches stay exact.
  ctx.quantReady = !opened.quantBuildPending;
  if (
    !memory &&
    !config.path.startsWith('file:') &&
    config.driver === undefined &&
    config.encryption === undefined
  ) {
    const path = resolve(config.path);
    const extension = config.vectorExtensionPath;
    ctx.openReader = () => {
      const reader = openDatabase(path, {
        busyTimeoutMs,
        readonly: true,
        ...(extension === undefined ? {} : { vectorExtensionPath: extension }),
      });
      if (mmapSize > 0) reader.exec(`PRAGMA mmap_size = ${mmapSize}`);
      return reader;
    };
  }
  if (usesVectorWorker(config, memory)) {
    ctx.vectorWorker = new VectorWorker(ctx, {
      path: resolve(config.path),
      busyTimeoutMs,
      mmapSize,
      vectorExtensionPath: config.vectorExtensionPath,
      key: config.encryption === undefined ? undefined : keyBytes(config.encryption.key),
    });
  }
  return ctx;
}

/**
 * Whether the store's k-NN may run on the vector worker: asked for (by default when the machine has a second
 * core), on a plain file path (a `:memory:` database is private to its connection, a `file:` URI may name
 * one), with the default driver (a driver given as a constructor cannot be handed to another thread).
 */
function usesVectorWorker(config: SqliteMemoryStoreConfig, memory: boolean): boolean {
  if (memory || config.path.startsWith('file:') || config.driver !== undefined) return false;
  return config.vectorWorker ?? defaultVectorWorker();
}

/**
 * Before the driver opens a file path: a read needs a file with content (`ENGRAM_STORE_NOT_ENGRAM` otherwise);
 * a write creates the parent directories of a missing file. A plain SQLite file whose header names another
 * application is refused here, before any connection (so not even a `-wal` file appears).
 */
function prepareFile(path: string, access: StoreAccess, config: SqliteMemoryStoreConfig): void {
  const state = fileState(path);
  if (access === 'read' && state !== 'present') {
    throw notEngram(`the file is ${state} (a read never creates a store)`);
  }
  if (state === 'present' && config.encryption === undefined) refuseForeignHeader(path);
  if (state !== 'missing') return;
  try {
    mkdirSync(dirname(path), { recursive: true });
  } catch (cause) {
    throw new EngramStoreError('ENGRAM_STORE_IO', 'the database directory could not be created', {
      cause,
    });
  }
}

/**
 * The memory-map size a store's connections use: the configured one (default 2 GiB) for a file, 0 for
 * `:memory:` and for an encrypted file (SQLite3 Multiple Ciphers decrypts every page it reads, so a map of the
 * ciphertext cannot serve a read; checked in `encryption.native.test.ts`).
 */
export function storeMmapSize(config: SqliteMemoryStoreConfig, memory: boolean): number {
  if (memory || config.encryption !== undefined) return 0;
  return config.mmapSize ?? DEFAULT_MMAP_SIZE;
}

/** Switches a write connection to WAL, unless the file is in WAL mode already (then nothing is written). */
function useWal(db: SqliteDatabase): void {
  const mode = (db.prepare('PRAGMA journal_mode').get() as { journal_mode?: string } | undefined)
    ?.journal_mode;
  if (mode !== 'wal') db.exec('PRAGMA journal_mode = WAL');
}

function tooOld(version: number): EngramStoreError {
  return new EngramStoreError(
    'ENGRAM_STORE_SCHEMA_TOO_OLD',
    `the database schema version ${version} is older than this store's (${SCHEMA_VERSION}) and a read never migrates; open it once for writing to upgrade it`,
  );
}

/** The driver open; the key bytes are zero-filled as soon as the driver has them. */
function openConnection(
  config: SqliteMemoryStoreConfig,
  busyTimeoutMs: number,
  readonly: boolean,
): SqliteDatabase {
  const key = config.encryption === undefined ? undefined : keyBytes(config.encryption.key);
  try {
    return openDatabase(config.path, {
      busyTimeoutMs,
      ...(readonly ? { readonly: true } : {}),
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
