/**
 * PostgreSQL, loaded only for a PostgreSQL database: `@engram/store-postgres` brings the `pg` driver, which a
 * one-shot command on a SQLite file would otherwise load for nothing (a large share of its start-up). Opening
 * the database by its recorded binding is the store package's own (`@engram/store-postgres/open`).
 */

/** The PostgreSQL store package. */
export type PostgresModule = typeof import('@engram/store-postgres');
/** The store package's opening helpers. */
export type PostgresOpen = typeof import('@engram/store-postgres/open');

/** The store package and its opening helpers when `db` is a PostgreSQL URL (the package's rule decides), else null. */
export async function postgresFor(
  db: string,
): Promise<{ readonly postgres: PostgresModule; readonly open: PostgresOpen } | null> {
  // Every URL that rule accepts starts so: anything else is a file path, and nothing is loaded.
  if (!db.startsWith('postgres')) return null;
  const open = await import('@engram/store-postgres/open');
  const postgres = await open.postgresFor(db);
  return postgres === null ? null : { postgres, open };
}

/** The path as it may be shown: a PostgreSQL URL with its password masked, a file path as is. */
export async function displayPath(path: string): Promise<string> {
  if (!path.startsWith('postgres')) return path;
  return (await import('@engram/store-postgres/open')).redactPostgresUrl(path);
}
