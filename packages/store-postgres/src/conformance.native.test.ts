// The store port's conformance suite (shared with the SQLite store) on PostgreSQL: PGlite over the wire
// protocol, or the server named by ENGRAM_PG_URL.
import { CONFORMANCE_PROFILE, describeStoreConformance } from '@engram/test-support';
import pg from 'pg';
import { createPostgresMemoryStore } from './store.js';
import { freshPostgresStore, testPgUrl } from './testing/fresh.js';

describeStoreConformance('postgres', async ({ now, idFactory, vectors, forget }) => {
  const store = await freshPostgresStore({
    embedding: vectors ? CONFORMANCE_PROFILE : null,
    now,
    idFactory,
    forget,
  });
  return {
    store,
    // Another pool on the same database: another worker.
    openSecond: async () => {
      const second = await createPostgresMemoryStore({
        connectionString: testPgUrl(),
        poolSize: 2,
        embedding: vectors ? CONFORMANCE_PROFILE : null,
        now,
        idFactory,
        forget,
      });
      return { store: second, close: () => second.close() };
    },
    // A row written behind the store's back (another tool, or by hand).
    corrupt: async (sql: string) => {
      const client = new pg.Client({ connectionString: testPgUrl() });
      await client.connect();
      try {
        await client.query(sql);
      } finally {
        await client.end();
      }
    },
    close: () => store.close(),
  };
});
