// The store the native and perf tests of this package run on: the PostgreSQL adapter of the store port over
// PGlite (PostgreSQL in WebAssembly, served over the wire protocol in this test process; no native addon), or
// the scratch server named by ENGRAM_PG_URL. One server per test file, started on first use; every store
// opened here starts on an emptied database. (Tests about SQLite itself live in @engram/reliability.)
import { createDeterministicEmbedder, DETERMINISTIC_PROFILE } from '@engram/embedder-deterministic';
import type { StoreObserver } from '@engram/store';
import { createPostgresMemoryStore, type PostgresMemoryStore } from '@engram/store-postgres';
import { resetTestPostgres, startTestPostgres, type TestPostgres } from '@engram/test-support';
import { afterAll } from 'vitest';

/** A real store on an emptied test database, bound to the deterministic embedder's profile. */
export interface TempStore {
  readonly store: PostgresMemoryStore;
  readonly embedder: ReturnType<typeof createDeterministicEmbedder>;
  close(): Promise<void>;
}

let server: Promise<TestPostgres> | undefined;

afterAll(async () => {
  const started = server;
  server = undefined;
  if (started !== undefined) await (await started).stop();
});

/** The file's server; with ENGRAM_PG_URL, a database of this worker's own (files run in parallel). */
function testServer(): Promise<TestPostgres> {
  server ??= startTestPostgres({ database: `engram_test_maintenance_w${process.env.VITEST_POOL_ID ?? '0'}` });
  return server;
}

/** Opens a real store over an emptied test database (native and perf tiers only). */
export async function openTempStore(
  options: {
    readonly observer?: StoreObserver;
    readonly now?: () => number;
    readonly withProfile?: boolean;
  } = {},
): Promise<TempStore> {
  const { url } = await testServer();
  await resetTestPostgres(url);
  const store = await createPostgresMemoryStore({
    connectionString: url,
    poolSize: 4,
    embedding: options.withProfile === false ? null : DETERMINISTIC_PROFILE,
    ...(options.observer === undefined ? {} : { observer: options.observer }),
    ...(options.now === undefined ? {} : { now: options.now }),
  });
  return {
    store,
    embedder: createDeterministicEmbedder(),
    close: () => store.close(),
  };
}
