// The per-agent document frequencies of PostgreSQL's BM25 (`lexical_terms`, schema 10): every write that adds or
// removes BM25 units keeps them equal to the postings they count, the integrity check compares the two, and a
// schema-9 database gains them (counted from its postings) when it opens.
import { afterEach, expect, it } from 'vitest';
import { PG_SCHEMA_VERSION } from './schema.js';
import { createPostgresMemoryStore, type PostgresMemoryStore } from './store.js';
import { freshPostgresStore, testPgUrl, testSql } from './testing/fresh.js';

const opened: PostgresMemoryStore[] = [];
afterEach(async () => {
  for (const s of opened.splice(0)) await s.close();
});

/** Terms whose stored frequency differs from their postings' count (nothing, when they agree). */
const MISMATCHED = `SELECT coalesce(p.agent_id, t.agent_id) AS agent, coalesce(p.term, t.term) AS term
  FROM (SELECT agent_id, term, count(*) AS df FROM lexical_postings GROUP BY agent_id, term) p
  FULL JOIN (SELECT * FROM lexical_terms WHERE df <> 0) t ON t.agent_id = p.agent_id AND t.term = p.term
  WHERE coalesce(p.df, 0) <> coalesce(t.df, 0)`;

const long = Array.from({ length: 6 }, (_, i) =>
  `Part ${i} of the river walk, stone and rain.`.padEnd(400, ' .'),
).join('\n\n');

it('inserts, edits, deletes and forgets keep the frequencies equal to the postings', async () => {
  const s = await freshPostgresStore({});
  opened.push(s);
  await s.insertMemories([
    { id: 'm1', agentId: 'a', kind: 'fact', content: 'The river floods after rain' },
    { id: 'm2', agentId: 'a', kind: 'fact', content: 'Rain, rain and more rain by the river' },
    { id: 'm3', agentId: 'b', kind: 'fact', content: 'The river is calm' },
    { id: 'long', agentId: 'a', kind: 'fact', content: long },
  ]);
  expect(await testSql(MISMATCHED)).toEqual([]);
  const [river] = await testSql<{ df: string }>(
    "SELECT df FROM lexical_terms WHERE agent_id = 'a' AND term = 'river'",
  );
  // m1, m2 and each of the long memory's chunks.
  expect(Number(river?.df)).toBeGreaterThanOrEqual(4);
  await s.updateMemory('a', 'm1', 1, { content: 'The lake freezes in winter' });
  await s.deleteMemory('a', 'm2');
  await s.forgetMemory('a', 'long');
  await s.insertMemory({ agentId: 'b', kind: 'fact', content: 'A second river note' });
  expect(await testSql(MISMATCHED)).toEqual([]);
  expect((await s.checkIntegrity()).state).toBe('ok');
  const hits = (await s.searchLexical({ agentId: 'a', terms: ['river', 'lake'], limit: 5 })).hits;
  expect(hits.map((h) => h.id)).toEqual(['m1']);
});

it('the integrity check fails when a frequency disagrees with the postings', async () => {
  const s = await freshPostgresStore({});
  opened.push(s);
  await s.insertMemory({ agentId: 'a', kind: 'fact', content: 'counted words here' });
  expect((await s.checkIntegrity()).state).toBe('ok');
  await testSql("UPDATE lexical_terms SET df = df + 1 WHERE agent_id = 'a' AND term = 'count'");
  expect((await s.checkIntegrity()).state).toBe('failed');
  await testSql("UPDATE lexical_terms SET df = df - 1 WHERE agent_id = 'a' AND term = 'count'");
  expect((await s.checkIntegrity()).state).toBe('ok');
});

it('migrates a schema-9 database: frequencies counted from its postings, search ranks as before', async () => {
  const first = await freshPostgresStore({});
  opened.push(first);
  await first.insertMemories([
    { id: 'm1', agentId: 'a', kind: 'fact', content: 'The office opens at nine on weekdays' },
    { id: 'm2', agentId: 'a', kind: 'fact', content: 'The office office closes early' },
    { id: 'm3', agentId: 'a', kind: 'fact', content: 'Lunch is served at noon' },
    { id: 'long', agentId: 'a', kind: 'fact', content: long },
  ]);
  const query = { agentId: 'a', terms: ['office', 'nine', 'river'], limit: 10 };
  const before = (await first.searchLexical(query)).hits;
  for (const s of opened.splice(0)) await s.close();
  await testSql(`DROP TRIGGER lexical_docs_terms_insert ON lexical_docs;
    DROP TRIGGER lexical_docs_terms_delete ON lexical_docs;
    DROP FUNCTION engram_lexical_terms();
    DROP TABLE lexical_terms;
    UPDATE engram_meta SET value = '9' WHERE key = 'schema_version'`);

  expect(PG_SCHEMA_VERSION).toBe(11);
  const s = await createPostgresMemoryStore({ connectionString: testPgUrl(), poolSize: 2 });
  opened.push(s);
  expect(s.info.schemaVersion).toBe(11);
  expect(await testSql(MISMATCHED)).toEqual([]);
  expect((await s.searchLexical(query)).hits).toEqual(before);
  await s.insertMemory({ agentId: 'a', kind: 'fact', content: 'The office moved' });
  expect(await testSql(MISMATCHED)).toEqual([]);
});
