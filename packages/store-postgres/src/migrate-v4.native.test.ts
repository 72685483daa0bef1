// Schema 3 → 4 on PostgreSQL (each BM25 posting carries its unit's length; the scoring query no longer joins
// the units): a schema-3 database opens with every posting's length filled from its unit and answers every
// lexical search with the same hits and scores, and later writes keep the lengths right.
import { afterEach, expect, it } from 'vitest';
import { PG_SCHEMA_VERSION } from './schema.js';
import { createPostgresMemoryStore, type PostgresMemoryStore } from './store.js';
import { freshPostgresStore, testPgUrl, testSql } from './testing/fresh.js';

const opened: PostgresMemoryStore[] = [];
afterEach(async () => {
  for (const s of opened.splice(0)) await s.close();
});

const WORDS = ['deploy', 'pipeline', 'walrus', 'ferns', 'cache', 'token', 'retry', 'budget'];
function content(i: number): string {
  const w = (k: number): string => WORDS[(i * 5 + k * 3) % WORDS.length] as string;
  const extra = i % 4 === 0 ? ` ${w(2)} and several more words so this unit is longer` : '';
  return `note ${i} ${w(0)} ${w(1)} ${w(1)} ${w(2)} ${i % 3 === 0 ? '数据库连接池' : 'plain'}${extra}`;
}
const QUERIES: readonly (readonly string[])[] = [
  ['deploy', 'walrus'],
  ['pipeline'],
  ['cache', 'retry', 'budget'],
  ['连接', 'ferns'],
  ['deploy pipeline', 'token'],
];

async function searchAll(s: PostgresMemoryStore): Promise<string> {
  const out: unknown[] = [];
  for (const terms of QUERIES) {
    for (const limit of [3, 40]) {
      const r = await s.searchLexical({ agentId: 'a', terms, limit });
      out.push(r.hits.map((h) => [h.id, h.score, h.chunk ?? null]));
    }
  }
  return JSON.stringify(out);
}

const WRONG_LENGTHS = `SELECT count(*)::int AS n FROM lexical_postings p JOIN lexical_docs d ON d.key = p.key
  WHERE p.length IS DISTINCT FROM d.length`;

it('migrates a schema-3 database: every posting gets its unit length, and BM25 hits and scores are unchanged', async () => {
  const first = await freshPostgresStore({});
  opened.push(first);
  await first.insertMemories(
    Array.from({ length: 50 }, (_, i) => ({
      agentId: 'a',
      kind: 'fact' as const,
      id: `m${i}`,
      // One long memory is chunked: its chunks are units of their own lengths.
      content: i === 7 ? `${content(i)} ${'walrus ferns cache budget. '.repeat(120)}` : content(i),
    })),
  );
  const before = await searchAll(first);
  expect(JSON.parse(before).flat().length).toBeGreaterThan(60);
  for (const s of opened.splice(0)) await s.close();
  // Turn the database back into what schema 3 wrote: postings without their unit's length.
  await testSql(`ALTER TABLE lexical_postings DROP COLUMN length;
    UPDATE engram_meta SET value = '3' WHERE key = 'schema_version'`);

  expect(PG_SCHEMA_VERSION).toBe(11);
  const s = await createPostgresMemoryStore({ connectionString: testPgUrl() });
  opened.push(s);
  expect(s.info.schemaVersion).toBe(11);
  expect(await searchAll(s)).toBe(before);
  expect(await testSql(WRONG_LENGTHS)).toEqual([{ n: 0 }]);

  // Writes after the migration keep each posting's length equal to its unit's.
  await s.insertMemory({ agentId: 'a', kind: 'fact', content: 'zebra zebra pipeline after the migration' });
  const m9 = await s.getMemory('a', 'm9');
  await s.updateMemory('a', 'm9', m9?.revision ?? 0, { content: 'a much shorter zebra' });
  const zebra = await s.searchLexical({ agentId: 'a', terms: ['zebra'], limit: 3 });
  expect(zebra.hits.map((h) => h.id)).toContain('m9');
  expect(await testSql(WRONG_LENGTHS)).toEqual([{ n: 0 }]);
});
