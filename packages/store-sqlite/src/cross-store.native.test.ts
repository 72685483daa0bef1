// Between the two adapters of the store port, where a test needs both: a SQLite store's export imports into
// PostgreSQL, and the documented difference of all-mode CJK lexical search. PostgreSQL is PGlite over the wire
// protocol started here, or the scratch server named by ENGRAM_PG_URL. (These lived in @engram/store-postgres's
// tests, which no longer load SQLite.)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ExportRecord } from '@engram/store';
import { createPostgresMemoryStore, type PostgresMemoryStore } from '@engram/store-postgres';
import { resetTestPostgres, startTestPostgres, type TestPostgres } from '@engram/test-support';
import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from 'vitest';
import { createSqliteMemoryStore } from './index.js';

let server: TestPostgres;
beforeAll(async () => {
  server = await startTestPostgres({ database: 'engram_test_store_sqlite' });
});
beforeEach(async () => {
  await resetTestPostgres(server.url);
});
afterAll(async () => {
  await server.stop();
});

const opened: PostgresMemoryStore[] = [];
afterEach(async () => {
  for (const s of opened.splice(0)) await s.close();
});
async function freshPostgresStore(
  config: Omit<Parameters<typeof createPostgresMemoryStore>[0], 'connectionString'> = {},
): Promise<PostgresMemoryStore> {
  const store = await createPostgresMemoryStore({ ...config, connectionString: server.url, poolSize: 4 });
  opened.push(store);
  return store;
}

async function collect(it: AsyncIterable<ExportRecord>): Promise<ExportRecord[]> {
  const out: ExportRecord[] = [];
  for await (const r of it) out.push(r);
  return out;
}

it('a SQLite store export imports into a PostgreSQL store (the shared format)', async () => {
  const t = await freshPostgresStore({ embedding: { id: 't', dimensions: 3 } });
  const sqlite = createSqliteMemoryStore({ path: ':memory:', embedding: null });
  try {
    const m = await sqlite.insertMemory({
      agentId: 'b',
      kind: 'fact',
      content: 'from sqlite',
      userId: 'u',
      metadata: { k: 'v' },
    });
    const fromSqlite = await collect(sqlite.exportRecords());
    expect((await t.importRecords(fromSqlite)).imported.memories).toBe(1);
    expect(await t.getMemory('b', m.id)).toMatchObject({
      content: 'from sqlite',
      userId: 'u',
      metadata: { k: 'v' },
    });
  } finally {
    sqlite.close();
  }
});

it('documented difference: all-mode CJK runs match by shared bigrams in PostgreSQL, as a substring here', async () => {
  const content = '连接和接池的说明';
  const pgStore = await freshPostgresStore({ embedding: null });
  const p = await pgStore.insertMemory({ agentId: 'a', kind: 'fact', content });
  const dir = mkdtempSync(join(tmpdir(), 'engram-diff-'));
  const sqlite = createSqliteMemoryStore({ path: join(dir, 'x.db'), embedding: null });
  try {
    await sqlite.insertMemory({ agentId: 'a', kind: 'fact', content });
    const query = { agentId: 'a', terms: ['连接池'], limit: 5, mode: 'all' as const };
    expect((await pgStore.searchLexical(query)).hits.map((h) => h.id)).toEqual([p.id]);
    expect((await sqlite.searchLexical(query)).hits).toEqual([]);
    // In `any` mode, the arm retrieval uses, both stores find it through the shared bigrams.
    expect((await sqlite.searchLexical({ ...query, mode: 'any' })).hits).toHaveLength(1);
    expect((await pgStore.searchLexical({ ...query, mode: 'any' })).hits).toHaveLength(1);
  } finally {
    sqlite.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
