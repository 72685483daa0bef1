// The store the native tests of this package run on: the PostgreSQL adapter of the store port over PGlite
// (PostgreSQL in WebAssembly, served over the wire protocol in this test process; no native addon), or the
// scratch server named by ENGRAM_PG_URL. One server per test file, started on first use; every store opened
// here starts on an emptied database and is closed after its test. (Tests about SQLite itself live in
// @engram/reliability.)
import { createPostgresMemoryStore, type PostgresMemoryStore } from '@engram/store-postgres';
import { resetTestPostgres, startTestPostgres, type TestPostgres } from '@engram/test-support';
import { afterAll, afterEach } from 'vitest';

let server: Promise<TestPostgres> | undefined;
const opened: PostgresMemoryStore[] = [];

afterEach(async () => {
  for (const store of opened.splice(0)) await store.close();
});

afterAll(async () => {
  const started = server;
  server = undefined;
  if (started !== undefined) await (await started).stop();
});

/** The file's server; with ENGRAM_PG_URL, a database of this worker's own (files run in parallel). */
function testServer(): Promise<TestPostgres> {
  server ??= startTestPostgres({ database: `engram_test_retrieval_w${process.env.VITEST_POOL_ID ?? '0'}` });
  return server;
}

/** Opens a real store over an emptied test database, closed after the test. */
export async function openPgStore(
  config: Omit<Parameters<typeof createPostgresMemoryStore>[0], 'connectionString' | 'pool'> = {},
): Promise<PostgresMemoryStore> {
  const { url } = await testServer();
  await resetTestPostgres(url);
  const store = await createPostgresMemoryStore({ poolSize: 4, ...config, connectionString: url });
  opened.push(store);
  return store;
}
