/**
 * `@engram/store-postgres/open`: opening the database a composition root is given as a string — a CLI's
 * `--db`, a facade's `path` — when that string is a PostgreSQL URL. Nothing here loads `pg`: the store package
 * is imported only for a URL, so a process that opens a SQLite file never loads the driver.
 */
import { redactConnectionUrl } from '@engram/contracts';
import type { EmbeddingProfile, StoreObserver } from '@engram/store';
import type { PostgresMemoryStore } from './store.js';

/** The PostgreSQL store package. */
export type PostgresModule = typeof import('./index.js');

/** What a database records: `'new'` (no Engram schema yet), null (no vector index) or its embedder profile. */
export type PostgresBinding = EmbeddingProfile | null | 'new';

/** The PostgreSQL store package when `db` is a PostgreSQL URL (`isPostgresUrl` decides), else null. */
export async function postgresFor(db: string): Promise<PostgresModule | null> {
  // Every URL that rule accepts starts so: anything else is a file path, and nothing is loaded.
  if (typeof db !== 'string' || !db.startsWith('postgres')) return null;
  const module = await import('./index.js');
  return module.isPostgresUrl(db) ? module : null;
}

/**
 * How long a drain's claim on the pending rows it listed lasts in a store opened here (one embedder call per
 * batch must finish within it; a process that dies holding claims gives them up when it runs out).
 */
const COMPOSITION_CLAIM_LEASE_MS = 60_000;

/** Construction of {@link openBoundPostgres}. */
export interface OpenBoundPostgresConfig<T> {
  readonly url: string;
  /**
   * Picks the embedder from what the database records, before anything is created or migrated; throws the
   * caller's own error to refuse. `profile` binds a new database (ignored for an existing one).
   */
  readonly choose: (recorded: PostgresBinding) => {
    readonly choice: T;
    readonly profile: EmbeddingProfile | null;
  };
  readonly observer?: StoreObserver;
  /** The id of each new memory (default: the store's time-ordered UUID). */
  readonly idFactory?: () => string;
}

/**
 * Opens a PostgreSQL database with the embedder its recorded binding calls for: reads the binding without
 * migrating (`readPostgresBinding`), lets `choose` pick (or refuse), then opens the store — bound to the chosen
 * profile when the database is new, adopting the recorded one otherwise. Rejects with `EngramStoreError`
 * (`ENGRAM_STORE_FINGERPRINT_MISMATCH` when another process bound a new database in between) or what `choose`
 * throws; the URL is never put in an error.
 */
export async function openBoundPostgres<T>(
  postgres: PostgresModule,
  config: OpenBoundPostgresConfig<T>,
): Promise<{ readonly store: PostgresMemoryStore; readonly choice: T }> {
  const recorded = await postgres.readPostgresBinding(config.url);
  const { choice, profile } = config.choose(recorded);
  const store = await postgres.createPostgresMemoryStore({
    connectionString: config.url,
    // Omitted for an existing database: the store adopts the profile it records.
    ...(recorded !== 'new' || profile === null
      ? {}
      : { embedding: { id: profile.id, dimensions: profile.dimensions } }),
    ...(config.observer === undefined ? {} : { observer: config.observer }),
    ...(config.idFactory === undefined ? {} : { idFactory: config.idFactory }),
    // A composition root's store is one of possibly many processes on the database: its drain claims the rows
    // it embeds, so each row is embedded by one of them only (see the README's "Many workers").
    claimLeaseMs: COMPOSITION_CLAIM_LEASE_MS,
  });
  return { store, choice };
}

/**
 * The URL with its password replaced by `***`, for a label a user may see; a string that is not a URL (a file
 * path) is returned as is, an unparsable URL as its scheme only. The one rule is `@engram/contracts`'
 * `redactConnectionUrl`.
 */
export function redactPostgresUrl(db: string): string {
  return redactConnectionUrl(db);
}
