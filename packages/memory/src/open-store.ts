/**
 * Opening the store under the facade and choosing its embedder: a SQLite file (its directory created when
 * missing) or, for a `postgres://` / `postgresql://` URL, a PostgreSQL database — its store package is loaded
 * only then, so a SQLite user never loads `pg`. Either way a new database gets the embedder asked for (else
 * USE-lite) and an existing one keeps the one it records.
 */
import { mkdirSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import type { DiagnosticsCollector } from '@engram/diagnostics';
import { DETERMINISTIC_PROFILE } from '@engram/embedder-deterministic';
import { USE_LITE_PROFILE } from '@engram/embedder-use';
import type {
  EmbeddingProfile,
  VectorIndexOptions,
  VectorIndexProgress,
  VectorQuantization,
} from '@engram/store';
import type { PostgresMemoryStore } from '@engram/store-postgres';
import { createSqliteMemoryStore, type SqliteMemoryStore } from '@engram/store-sqlite';
import type { EmbedderOption } from './engine.js';
import { EngramMemoryError, engramErrorCode } from './errors.js';
import { postgresFor } from './postgres-module.js';

/** The store under the facade: a SQLite file's or a PostgreSQL database's. */
export type EngineStore = SqliteMemoryStore | PostgresMemoryStore;

/** What {@link openEngineStore} needs of the engine's configuration. */
export interface StoreOptions {
  readonly path: string;
  /** `read`: a read-only open that creates, converts and migrates nothing (default `write`). */
  readonly access?: 'read' | 'write';
  readonly encryptionKey?: string | Uint8Array;
  readonly vectorIndex?: VectorIndexOptions;
  readonly onIndexProgress?: (progress: VectorIndexProgress) => void;
  readonly idFactory?: () => string;
}

/** The vector index kinds an error may name. */
const KINDS: ReadonlySet<string> = new Set<VectorQuantization>(['none', 'int8', 'bit']);

/** What holds the memories, as errors name it. */
export type Noun = 'file' | 'database';

const BUILT_IN: { readonly use: EmbeddingProfile; readonly deterministic: EmbeddingProfile } = {
  use: USE_LITE_PROFILE,
  deterministic: DETERMINISTIC_PROFILE,
};

function sameProfile(a: EmbeddingProfile, b: EmbeddingProfile): boolean {
  return a.id === b.id && a.dimensions === b.dimensions;
}

function label(profile: EmbeddingProfile): string {
  return `${profile.id} (${profile.dimensions} d)`;
}

/** The profile an embedder option embeds with. */
export function profileOf(option: EmbedderOption): EmbeddingProfile {
  return typeof option === 'string' ? BUILT_IN[option] : option.profile;
}

/**
 * How a store picks its embedder: from the profile an existing file or database records (`'new'` for a new
 * one), the choice and its profile; and the error for a store another process bound to another embedder
 * between the check and the open.
 */
export interface EmbedderRule<C> {
  choose(recorded: EmbeddingProfile | null | 'new', noun: Noun): C;
  profile(choice: C): EmbeddingProfile;
  mismatch(error: unknown, noun: Noun, profile: EmbeddingProfile | undefined): unknown;
  /** How its errors word a file's missing directory and a key given for a PostgreSQL database (default: the facade's). */
  readonly wording?: { readonly noDirectory: string; readonly postgresKey: string };
}

/** The rule of an embedder option (`openEngine({ embedder })`): see {@link chooseEngineEmbedder}. */
export function optionRule(requested: EmbedderOption | undefined): EmbedderRule<EmbedderOption> {
  return {
    choose: (recorded, noun) => chooseEngineEmbedder(recorded, requested, noun),
    profile: profileOf,
    mismatch: (error, noun) => embedderMismatchOr(error, noun),
  };
}

/** True when a non-empty file exists at the path (an empty file is a new database to SQLite). */
function hasDatabase(path: string): boolean {
  try {
    return statSync(path).size > 0;
  } catch {
    return false;
  }
}

/**
 * The embedder of a file or database: a new one gets the one asked for (default USE-lite); an existing one
 * keeps the one it records — `ENGRAM_MEMORY_EMBEDDER_MISMATCH` when another one was asked for,
 * `ENGRAM_MEMORY_EMBEDDER_UNAVAILABLE` when it records one that is not built in and none was given.
 */
export function chooseEngineEmbedder(
  recorded: EmbeddingProfile | null | 'new',
  requested: EmbedderOption | undefined,
  noun: Noun = 'file',
): EmbedderOption {
  const elsewhere = noun === 'file' ? 'another path' : 'another database';
  if (recorded === 'new') return requested ?? 'use';
  if (recorded === null) {
    throw new EngramMemoryError(
      'ENGRAM_MEMORY_EMBEDDER_UNAVAILABLE',
      `the ${noun} records no embedder (it was made without a vector index); use ${elsewhere}`,
    );
  }
  if (requested !== undefined) {
    if (!sameProfile(profileOf(requested), recorded)) {
      throw new EngramMemoryError(
        'ENGRAM_MEMORY_EMBEDDER_MISMATCH',
        `the ${noun} was made with the embedder ${label(recorded)}, not ${label(profileOf(requested))}; open it with that embedder or use ${elsewhere}`,
      );
    }
    return requested;
  }
  if (sameProfile(recorded, BUILT_IN.use)) return 'use';
  if (sameProfile(recorded, BUILT_IN.deterministic)) return 'deterministic';
  throw new EngramMemoryError(
    'ENGRAM_MEMORY_EMBEDDER_UNAVAILABLE',
    `the ${noun} was made with the embedder ${label(recorded)}; pass an embedder with that profile`,
  );
}

/**
 * The facade's error for a SQLite file whose vector index quantization is not the `asked` one: at open (`open`),
 * or after another connection's `resetVectorIndex` (`changed`: the store refuses its vector writes and searches
 * until it is reopened). Any other error as is. Names the kind only (the store's error, kept as `cause`, names
 * both).
 */
export function vectorIndexOr(
  error: unknown,
  asked: VectorQuantization | undefined,
  when: 'open' | 'changed',
): unknown {
  if (engramErrorCode(error) !== 'ENGRAM_STORE_VECTOR_INDEX_MISMATCH') return error;
  // A kind the store knows (it validated the option before comparing it), never an arbitrary string.
  const kind = KINDS.has(asked as string) ? ` '${asked}'` : '';
  const message =
    when === 'open'
      ? `the file's vector index uses another quantization than the vectorIndex.quantization${kind} asked for; open it without vectorIndex to adopt the file's setting, or with its quantization (the store's resetVectorIndex rebuilds the index as another)`
      : `another connection changed the file's vector index quantization since this memory was opened with vectorIndex.quantization${kind}; its vector writes and searches are refused until it is reopened without vectorIndex (adopting the file's setting) or with the file's quantization`;
  return new EngramMemoryError('ENGRAM_MEMORY_VECTOR_INDEX_MISMATCH', message, { cause: error });
}

/** The facade's error for a store bound to another embedder in between; any other error as is. */
function embedderMismatchOr(error: unknown, noun: Noun): unknown {
  // Another process created the file or database with another embedder between the check and the open.
  if (engramErrorCode(error) !== 'ENGRAM_STORE_FINGERPRINT_MISMATCH') return error;
  return new EngramMemoryError(
    'ENGRAM_MEMORY_EMBEDDER_MISMATCH',
    `the ${noun} was made with another embedder; open it with that embedder or use ${noun === 'file' ? 'another path' : 'another database'}`,
    { cause: error },
  );
}

/**
 * The claim lease of a composition root's SQLite store (ms): long beside a drain batch (one embedder call and
 * its commit), so a batch slowed down is not taken over and embedded twice; a process that died frees its rows
 * after it. The PostgreSQL store's is the same.
 */
const COMPOSITION_CLAIM_LEASE_MS = 60_000;

function openSqlite<C>(
  options: StoreOptions,
  rule: EmbedderRule<C>,
  profile: EmbeddingProfile | undefined,
  collector: DiagnosticsCollector,
): SqliteMemoryStore {
  const access = options.access ?? 'write';
  if (access === 'write') {
    try {
      mkdirSync(dirname(options.path), { recursive: true });
    } catch (error) {
      const message = rule.wording?.noDirectory ?? 'cannot create the directory of the file';
      throw new EngramMemoryError('ENGRAM_MEMORY_STORE_FAILED', message, { cause: error });
    }
  }
  try {
    return createSqliteMemoryStore({
      path: options.path,
      access,
      // Omitted for an existing file: the store adopts the profile the file records.
      ...(profile === undefined ? {} : { embedding: { id: profile.id, dimensions: profile.dimensions } }),
      observer: collector.storeObserver,
      ...(options.encryptionKey === undefined ? {} : { encryption: { key: options.encryptionKey } }),
      ...(options.vectorIndex === undefined ? {} : { vectorIndex: options.vectorIndex }),
      ...(options.onIndexProgress === undefined ? {} : { onIndexProgress: options.onIndexProgress }),
      ...(options.idFactory === undefined ? {} : { idFactory: options.idFactory }),
      // A composition root's writable store is one of possibly many processes on the file: its drain claims the
      // rows it embeds, so each row is embedded by one of them only (as on PostgreSQL; see the store's README).
      ...(access === 'write' ? { claimLeaseMs: COMPOSITION_CLAIM_LEASE_MS } : {}),
    });
  } catch (error) {
    // A vector index quantization other than the file's (only when one is asked for).
    if (engramErrorCode(error) === 'ENGRAM_STORE_VECTOR_INDEX_MISMATCH') {
      throw vectorIndexOr(error, options.vectorIndex?.quantization, 'open');
    }
    throw rule.mismatch(error, 'file', profile);
  }
}

/** A SQLite-only option given with a PostgreSQL URL. */
function sqliteOnly(option: string, why: string): EngramMemoryError {
  return new EngramMemoryError(
    'ENGRAM_MEMORY_INVALID_CONFIG',
    `${option} is a SQLite file option; a PostgreSQL database takes none (${why})`,
  );
}

/** Where a store is and whether it is new: a missing or empty file, a PostgreSQL database without Engram's schema. */
export async function probeStore(
  path: string,
): Promise<{ readonly kind: 'sqlite' | 'postgres'; readonly fresh: boolean }> {
  const postgres = await postgresFor(path);
  if (postgres === null) return { kind: 'sqlite', fresh: !hasDatabase(path) };
  return { kind: 'postgres', fresh: (await postgres.postgres.readPostgresBinding(path)) === 'new' };
}

/**
 * Opens the store at `options.path` (a file path or a PostgreSQL URL) and chooses its embedder by `rule`. Throws
 * a typed error, with nothing created, for a SQLite-only option given with a URL or an embedder that is not the
 * one the store records; the URL is never put in an error. `@engram/store-postgres` (and `pg`) load only for a URL.
 */
export async function openEngineStore<C>(
  options: StoreOptions,
  rule: EmbedderRule<C>,
  collector: DiagnosticsCollector,
): Promise<{ readonly store: EngineStore; readonly choice: C }> {
  const postgres = await postgresFor(options.path);
  if (postgres !== null) {
    if (options.encryptionKey !== undefined) {
      const worded = rule.wording?.postgresKey;
      throw worded === undefined
        ? sqliteOnly('encryptionKey', 'encryption at rest is the server’s; TLS with sslmode in the URL')
        : new EngramMemoryError('ENGRAM_MEMORY_INVALID_CONFIG', worded);
    }
    if (options.vectorIndex !== undefined) {
      throw sqliteOnly('vectorIndex', 'pgvector indexes the vectors');
    }
    try {
      return await postgres.open.openBoundPostgres(postgres.postgres, {
        url: options.path,
        choose: (recorded) => {
          const choice = rule.choose(recorded, 'database');
          return { choice, profile: rule.profile(choice) };
        },
        observer: collector.storeObserver,
        ...(options.idFactory === undefined ? {} : { idFactory: options.idFactory }),
      });
    } catch (error) {
      throw rule.mismatch(error, 'database', undefined);
    }
  }
  if (hasDatabase(options.path)) {
    const store = openSqlite(options, rule, undefined, collector);
    try {
      return { store, choice: rule.choose(store.embeddingProfile, 'file') };
    } catch (error) {
      await store.close();
      throw error;
    }
  }
  const choice = rule.choose('new', 'file');
  return { store: openSqlite(options, rule, rule.profile(choice), collector), choice };
}
