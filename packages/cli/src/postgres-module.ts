/**
 * `@engram/store-postgres`, loaded only for a PostgreSQL database: it brings the `pg` driver, which a one-shot
 * command on a SQLite file would otherwise load for nothing (a large share of its start-up).
 */

/** The PostgreSQL store package. */
export type PostgresModule = typeof import('@engram/store-postgres');

/** The PostgreSQL store package when `db` is a PostgreSQL URL (the package's own rule decides), else null. */
export async function postgresFor(db: string): Promise<PostgresModule | null> {
  // Every URL that rule accepts starts so: anything else is a file path, and nothing is loaded.
  if (!db.startsWith('postgres')) return null;
  const module = await import('@engram/store-postgres');
  return module.isPostgresUrl(db) ? module : null;
}
