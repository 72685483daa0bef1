// The store port's conformance suite (shared with the SQLite store) on PostgreSQL: PGlite over the wire
// protocol, or the server named by ENGRAM_PG_URL.
import { CONFORMANCE_PROFILE, describeStoreConformance } from '@engram/test-support';
import { freshPostgresStore } from './testing/fresh.js';

describeStoreConformance('postgres', async ({ now, idFactory, vectors, forget }) => {
  const store = await freshPostgresStore({
    embedding: vectors ? CONFORMANCE_PROFILE : null,
    now,
    idFactory,
    forget,
  });
  return { store, close: () => store.close() };
});
