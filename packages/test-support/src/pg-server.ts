/**
 * The PostgreSQL the tests run on, started by the tests themselves: PGlite (PostgreSQL 18 in WebAssembly) with
 * pgvector, served over the wire protocol (`wire-server.ts`), so `pg` talks to it exactly as to a
 * server. When `ENGRAM_PG_URL` is set, that server is used instead (it must be a scratch database: the suites
 * drop and recreate its `public` schema).
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
export async function startTestPostgres(options: { readonly port?: number } = {}): Promise<TestPostgres> {
  const external = process.env.ENGRAM_PG_URL;
  if (external !== undefined && external.length > 0) {
    return { url: external, kind: 'external', stop: async () => {} };
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
