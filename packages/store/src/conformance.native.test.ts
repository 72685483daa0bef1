// The store port's conformance suite (shared with the PostgreSQL store) on a real SQLite file.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CONFORMANCE_DIMENSIONS, describeStoreConformance } from '@engram/test-support';
import { createSqliteMemoryStore } from './sqlite-store.js';

describeStoreConformance('sqlite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'engram-conformance-'));
  const store = createSqliteMemoryStore({
    path: join(dir, 'store.db'),
    embedding: { id: 'conformance-v1', dimensions: CONFORMANCE_DIMENSIONS },
  });
  return {
    store,
    close: () => {
      store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});
