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

it('both stores give the same whole-memory scores to the same long and short memories', async () => {
  const paragraph = (i: number, extra: string): string =>
    `Paragraph ${i} of the travel diary: trains, rain and a long walk by the river.${extra}`.padEnd(
      400,
      ' .',
    );
  const long = Array.from({ length: 8 }, (_, i) =>
    paragraph(i, i === 1 ? ' The quartz museum was closed.' : i === 6 ? ' A basalt cliff, then lunch.' : ''),
  ).join('\n\n');
  const rows = [
    { id: 'long', agentId: 'a', kind: 'fact' as const, content: long },
    {
      id: 'short',
      agentId: 'a',
      kind: 'fact' as const,
      content: 'Quartz and more quartz in the shop window.',
    },
    { id: 'plain', agentId: 'a', kind: 'fact' as const, content: 'A basalt paving stone by the door.' },
  ];
  const pgStore = await freshPostgresStore({ embedding: null });
  await pgStore.insertMemories(rows);
  const dir = mkdtempSync(join(tmpdir(), 'engram-whole-'));
  const sqlite = createSqliteMemoryStore({ path: join(dir, 'x.db'), embedding: null });
  try {
    await sqlite.insertMemories(rows);
    const query = { agentId: 'a', terms: ['quartz', 'basalt'], limit: 5 };
    const scores = (hits: readonly { id: string; score: number; memoryScore?: number }[]) =>
      Object.fromEntries(hits.map((h) => [h.id, [h.score, h.memoryScore]]));
    const fromSqlite = scores((await sqlite.searchLexical(query)).hits);
    const fromPg = scores((await pgStore.searchLexical(query)).hits);
    expect(Object.keys(fromSqlite).sort()).toEqual(['long', 'plain', 'short']);
    for (const id of Object.keys(fromSqlite)) {
      const [score, whole] = fromSqlite[id] as [number, number];
      const [pgScore, pgWhole] = fromPg[id] as [number, number];
      expect(whole).toBeGreaterThan(0);
      expect(pgScore).toBeCloseTo(score, 9);
      expect(pgWhole).toBeCloseTo(whole, 9);
    }
  } finally {
    sqlite.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
