/**
 * A fresh store on the test server: the `public` schema is dropped and recreated first (the test files of this
 * package run one at a time, so no two stores share it).
 */
import { resetTestPostgres } from '@engram/test-support';
import pg from 'pg';
import {
  createPostgresMemoryStore,
  type PostgresMemoryStore,
  type PostgresMemoryStoreConfig,
} from '../store.js';

/** The URL of the test server (set by the tier's global setup). */
export function testPgUrl(): string {
  const url = process.env.ENGRAM_PG_TEST_URL;
  if (url === undefined) throw new Error('ENGRAM_PG_TEST_URL is not set: run through the native tier config');
  return url;
}

/** Empties the test database (drops and recreates the `public` schema). */
export function resetTestDatabase(url: string = testPgUrl()): Promise<void> {
  return resetTestPostgres(url);
}

/** A store over an emptied test database. */
export async function freshPostgresStore(
  config: Omit<PostgresMemoryStoreConfig, 'connectionString' | 'pool'> = {},
): Promise<PostgresMemoryStore> {
  await resetTestDatabase();
  return createPostgresMemoryStore({ ...config, connectionString: testPgUrl(), poolSize: 4 });
}

/**
 * Runs SQL on the test server over a connection of its own, outside any store (to set up or inspect what a
 * store wrote); returns the rows of a single statement.
 */
export async function testSql<T = Record<string, unknown>>(text: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: testPgUrl() });
  await client.connect();
  try {
    return ((await client.query(text)) as unknown as { rows?: T[] }).rows ?? [];
  } finally {
    await client.end();
  }
}
