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

it('a query with a common word ranks alike in both stores, whichever way PostgreSQL finds its units', async () => {
  // Agent `a`: 240 short memories, `river` in four of five, `rain` in two of three, `quartz` and `basalt` in a
  // few; agent `c` the same plus three long (chunked) memories. PostgreSQL leaves the common words out of
  // candidate generation and checks that the answer is exact (else it scores every unit); SQLite always
  // scores every unit. Both must give the same memories, scores and chunks.
  const filler = ['stone', 'path', 'hill', 'bridge', 'lamp', 'garden', 'door', 'field', 'tower'];
  const short = (agentId: string, i: number) => {
    const words = [`note${i}`];
    if (i % 5 !== 0) words.push(i % 3 === 0 ? 'river river' : 'river');
    if (i % 3 !== 0) words.push('rain');
    if (i % 24 === 1) words.push('quartz');
    if (i % 40 === 3) words.push('basalt');
    for (let f = 0; f < i % 9; f += 1) words.push(filler[(i + f) % filler.length] as string);
    return {
      id: `${agentId}${i}`,
      agentId,
      kind: i % 4 === 0 ? ('event' as const) : ('fact' as const),
      content: words.join(' '),
    };
  };
  const paragraph = (i: number) =>
    `Part ${i}: a walk along the river past the ${filler[i % filler.length]}${i === 5 ? ', quartz in the rocks' : ''}.`.padEnd(
      400,
      ' .',
    );
  const rows = [
    ...Array.from({ length: 240 }, (_, i) => short('a', i)),
    ...Array.from({ length: 240 }, (_, i) => short('c', i)),
    ...[0, 1, 2].map((n) => ({
      id: `long${n}`,
      agentId: 'c',
      kind: 'fact' as const,
      content: Array.from({ length: 6 + n }, (_, i) => paragraph(i + n)).join('\n\n'),
    })),
  ];
  const archived = Array.from({ length: 60 }, (_, i) => ({
    id: `d${i}`,
    agentId: 'd',
    kind: 'fact' as const,
    content: `note${i} river${i % 20 === 0 ? ' quartz' : ''} ${filler[i % filler.length]}`,
  }));
  rows.push(...archived);
  let fts = 0;
  const pgStore = await freshPostgresStore({
    embedding: null,
    observer: {
      onStatement: (k) => {
        if (k === 'fts') fts += 1;
      },
    },
  });
  await pgStore.insertMemories(rows);
  const dir = mkdtempSync(join(tmpdir(), 'engram-prune-'));
  const sqlite = createSqliteMemoryStore({ path: join(dir, 'x.db'), embedding: null });
  try {
    await sqlite.insertMemories(rows);
    for (const m of archived.filter((_, i) => i % 20 !== 0 && i % 6 !== 0)) {
      await pgStore.archiveMemory('d', m.id);
      await sqlite.archiveMemory('d', m.id);
    }
    type Q = { terms: string[]; limit: number; kinds?: ('event' | 'fact')[]; tags?: string[] };
    const same = async (agentId: string, q: Q): Promise<number> => {
      const query = { agentId, ...q };
      const expected = (await sqlite.searchLexical(query)).hits;
      fts = 0;
      const got = (await pgStore.searchLexical(query)).hits;
      const statements = fts;
      expect(got.map((h) => h.id)).toEqual(expected.map((h) => h.id));
      for (const [i, h] of got.entries()) {
        const e = expected[i] as (typeof expected)[number];
        expect(h.score).toBeCloseTo(e.score, 9);
        expect(h.chunk).toEqual(e.chunk);
        if (e.memoryScore !== undefined) expect(h.memoryScore).toBeCloseTo(e.memoryScore, 9);
      }
      return statements;
    };
    // Agent `a` (no chunked memory): the statistics, then one BM25 statement when the pruned answer is exact,
    // two when it is not.
    // One common word left out; the rare words' units fill the answer and outscore every unit left out.
    expect(await same('a', { terms: ['quartz', 'basalt', 'river'], limit: 5 })).toBe(2);
    // The common word's best units fill the answer; with this limit none is left out.
    expect(await same('a', { terms: ['quartz', 'river'], limit: 150 })).toBe(2);
    // Two common words left out: the rare words' units outscore what the common words can add.
    expect(await same('a', { terms: ['river', 'rain', 'quartz', 'basalt'], limit: 5 })).toBe(2);
    // A scoped call (here some kinds only) is scored in full at once.
    expect(await same('a', { terms: ['quartz', 'river'], limit: 40, kinds: ['event'] })).toBe(2);
    // Agent `d`: most of the common word's units belong to archived memories, so the pruned answer is short
    // and every unit is scored.
    expect(await same('d', { terms: ['quartz', 'river'], limit: 10 })).toBe(3);
    for (const q of [
      { terms: ['quartz', 'river'], limit: 40 },
      { terms: ['quartz', 'river'], limit: 10 },
      { terms: ['river', 'rain', 'basalt'], limit: 12 },
      { terms: ['river', 'quartz', 'stone path'], limit: 8 },
      { terms: ['river'], limit: 20 },
    ])
      await same('a', q);
    // Agent `c`: chunked memories, whose best chunk and whole-memory score must match too.
    for (const q of [
      { terms: ['quartz', 'basalt', 'river'], limit: 5 },
      { terms: ['quartz', 'river'], limit: 40 },
      { terms: ['river', 'rain', 'quartz'], limit: 6 },
      { terms: ['walk', 'river', 'quartz'], limit: 10 },
    ])
      await same('c', q);
  } finally {
    sqlite.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
