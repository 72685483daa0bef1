// The store port's conformance suite (shared with the PostgreSQL store) on a real SQLite file.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CONFORMANCE_PROFILE, describeStoreConformance } from '@engram/test-support';
import { openDatabase } from './native.js';
import { createSqliteMemoryStore } from './sqlite-store.js';

describeStoreConformance('sqlite', async ({ now, idFactory, vectors, forget }) => {
  const dir = mkdtempSync(join(tmpdir(), 'engram-conformance-'));
  const open = () =>
    createSqliteMemoryStore({
      path: join(dir, 'store.db'),
      embedding: vectors ? CONFORMANCE_PROFILE : null,
      now,
      idFactory,
      forget,
    });
  const store = open();
  return {
    store,
    // Another connection to the same file: another worker.
    openSecond: async () => {
      const second = open();
      return { store: second, close: () => second.close() };
    },
    // A row written behind the store's back (another tool, or by hand).
    corrupt: async (sql: string) => {
      const db = openDatabase(join(dir, 'store.db'));
      try {
        db.exec(sql);
      } finally {
        db.close();
      }
    },
    close: () => {
      store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});
