/**
 * The PostgreSQL the tests run on, started by the tests themselves: PGlite (PostgreSQL 18 in WebAssembly) with
 * pgvector, served over the wire protocol (`wire-server.ts`), so `pg` talks to it exactly as to a
 * server. When `ENGRAM_PG_URL` is set, that server is used instead (a scratch server: the suites drop and
 * recreate the `public` schema of the database they use). A suite that names its `database` gets a database of
 * its own on that server (created when missing, which needs the CREATEDB privilege), so the suites of several
 * packages, run at once by turbo, never reset each other's tables.
 */
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import pg from 'pg';
import { serveWire } from './wire-server.js';

/** A running test server: its URL and how to stop it. */
export interface TestPostgres {
  readonly url: string;
  /** `pglite` (started here) or `external` (`ENGRAM_PG_URL`). */
  readonly kind: 'pglite' | 'external';
  stop(): Promise<void>;
}

/** Starts PGlite behind the wire front (on `port`, default a free one), or returns the server named by `ENGRAM_PG_URL`. */
export async function startTestPostgres(
  options: { readonly port?: number; readonly database?: string } = {},
): Promise<TestPostgres> {
  const external = process.env.ENGRAM_PG_URL;
  if (external !== undefined && external.length > 0) {
    const url = options.database === undefined ? external : await ownDatabase(external, options.database);
    return { url, kind: 'external', stop: async () => {} };
  }
  const db = await PGlite.create({ extensions: { vector } });
  const server = await serveWire(db, options.port ?? 0);
  return {
    url: `postgres://postgres@${server.address}/postgres`,
    kind: 'pglite',
    stop: async () => {
      await server.stop();
      await db.close();
    },
  };
}

/** Empties a test database: drops and recreates its `public` schema (every Engram table with it). */
export async function resetTestPostgres(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('DROP SCHEMA IF EXISTS public CASCADE; CREATE SCHEMA public;');
  } finally {
    await client.end();
  }
}

const DATABASE_NAME = /^[a-z][a-z0-9_]{0,62}$/;

/** The URL of `name` on the server of `url`, creating that database when it does not exist. */
async function ownDatabase(url: string, name: string): Promise<string> {
  if (!DATABASE_NAME.test(name)) throw new Error('test database names are lower-case identifiers');
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (found.rowCount === 0) {
      try {
        await client.query(`CREATE DATABASE ${name}`);
      } catch (error) {
        // Another package's suite created it at the same moment.
        if ((error as { code?: string }).code !== '42P04') throw error;
      }
    }
  } finally {
    await client.end();
  }
  const own = new URL(url);
  own.pathname = `/${name}`;
  return own.toString();
}
