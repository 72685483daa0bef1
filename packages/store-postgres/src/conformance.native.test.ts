// The store port's conformance suite (shared with the SQLite store) on PostgreSQL: PGlite over the wire
// protocol, or the server named by ENGRAM_PG_URL.
import { CONFORMANCE_DIMENSIONS, describeStoreConformance } from '@engram/test-support';
import { freshPostgresStore } from './testing/fresh.js';

describeStoreConformance('postgres', async () => {
  const store = await freshPostgresStore({
    embedding: { id: 'conformance-v1', dimensions: CONFORMANCE_DIMENSIONS },
  });
  return { store, close: () => store.close() };
});
