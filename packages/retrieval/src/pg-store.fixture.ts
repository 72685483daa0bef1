// The store the native tests of this package run on: the PostgreSQL adapter of the store port over PGlite
// (PostgreSQL in WebAssembly, served over the wire protocol in this test process; no native addon), or the
// scratch server named by ENGRAM_PG_URL. One server per test file, started on first use; every store opened
// here starts on an emptied database and is closed after its test. (Tests about SQLite itself live in
// @engram/reliability.)
import { createPostgresMemoryStore, type PostgresMemoryStore } from '@engram/store-postgres';
import { pgStoreOpener } from '@engram/test-support';

type StoreConfig = Omit<Parameters<typeof createPostgresMemoryStore>[0], 'connectionString' | 'pool'>;

/** Opens a real store over an emptied test database, closed after the test. */
export const openPgStore: (config?: StoreConfig) => Promise<PostgresMemoryStore> = pgStoreOpener(
  'retrieval',
  (url: string, config: StoreConfig = {}) =>
    createPostgresMemoryStore({ poolSize: 4, ...config, connectionString: url }),
);
