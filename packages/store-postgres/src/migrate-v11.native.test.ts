// Schema 10 → 11 on PostgreSQL (BM25 statistics per user): a schema-10 database, whose units named no user and
// whose statistics were the agent's only, opens with each unit naming its memory's user and the statistics and
// term frequencies per user counted from its units; a whole-agent search ranks as before, a user's search with
// the statistics of what that user sees, and another user's later writes do not move that user's scores.
import type { LexicalHit } from '@engram/store';
import { afterEach, expect, it } from 'vitest';
import { MIGRATIONS, PG_SCHEMA_VERSION } from './schema.js';
import { createPostgresMemoryStore, type PostgresMemoryStore } from './store.js';
import { freshPostgresStore, testPgUrl, testSql } from './testing/fresh.js';

const opened: PostgresMemoryStore[] = [];
afterEach(async () => {
  for (const s of opened.splice(0)) await s.close();
});

/**
 * The statistics functions of schema 10 (the agent's rows only), from the migrations that defined them: the
 * per-row one of version 1 and the whole of version 10 (which only creates what is missing, and its function).
 */
function schema10Functions(): string {
  const sql = (version: number): string => MIGRATIONS.find((m) => m.version === version)?.sql ?? '';
  const stats = /CREATE FUNCTION engram_lexical_stats\(\)[\s\S]*?END \$\$;/.exec(sql(1))?.[0];
  if (stats === undefined || !sql(10).includes('engram_lexical_terms'))
    throw new Error('schema 10 not found');
  return `${stats.replace('CREATE FUNCTION', 'CREATE OR REPLACE FUNCTION')}\n${sql(10)}`;
}

/** Users' statistics or term frequencies that differ from the units and postings they count. */
const MISMATCHED = `SELECT 1 FROM (SELECT agent_id, user_id, count(*) AS n, sum(length) AS l FROM lexical_docs
    GROUP BY agent_id, user_id) d
  FULL JOIN lexical_user_stats s ON s.agent_id = d.agent_id AND s.user_id = d.user_id
  WHERE d.n IS DISTINCT FROM s.docs OR d.l IS DISTINCT FROM s.total_length
  UNION ALL
  SELECT 1 FROM (SELECT d.agent_id, d.user_id, p.term, count(*) AS df FROM lexical_postings p
    JOIN lexical_docs d ON d.key = p.key GROUP BY d.agent_id, d.user_id, p.term) p
  FULL JOIN (SELECT * FROM lexical_user_terms WHERE df <> 0) t
    ON t.agent_id = p.agent_id AND t.user_id = p.user_id AND t.term = p.term
  WHERE p.df IS DISTINCT FROM t.df`;

const filler = ' The members talked at length about tomatoes, compost and the new fence.'.repeat(40);

const scores = (hits: readonly LexicalHit[]): [string, number, number | undefined][] =>
  hits.map((h) => [h.id, h.score, h.memoryScore]);

it('migrates a schema-10 database: units name their user, per-user statistics, users stay apart', async () => {
  const first = await freshPostgresStore({});
  opened.push(first);
  await first.insertMemories([
    { id: 'own', agentId: 'a', kind: 'fact', content: 'The office kettle is for green tea' },
    { id: 'alice', agentId: 'a', kind: 'fact', content: 'Alice drinks jasmine tea', userId: 'alice' },
    {
      id: 'alice-long',
      agentId: 'a',
      kind: 'fact',
      content: `Alice keeps a diary.${filler} She brews jasmine tea.${filler}`,
      userId: 'alice',
    },
    {
      id: 'bob',
      agentId: 'a',
      kind: 'fact',
      content: 'Bob likes jasmine rice and jasmine tea',
      userId: 'bob',
    },
    { id: 'other', agentId: 'b', kind: 'fact', content: 'jasmine tea for agent b', userId: 'alice' },
  ]);
  const query = { agentId: 'a', terms: ['jasmine', 'tea'], limit: 10 };
  const forAlice = { ...query, filter: { forUser: 'alice' } };
  const agentBefore = scores((await first.searchLexical(query)).hits);
  const aliceBefore = scores((await first.searchLexical(forAlice)).hits);
  expect(aliceBefore.find((h) => h[0] === 'alice-long')?.[2]).toBeGreaterThan(0);
  for (const s of opened.splice(0)) await s.close();
  await testSql(`DROP TABLE lexical_user_stats; DROP TABLE lexical_user_terms;
    ALTER TABLE lexical_docs DROP COLUMN user_id;
    DROP TRIGGER lexical_docs_user ON lexical_docs;
    DROP FUNCTION engram_lexical_user();
    ${schema10Functions()}
    INSERT INTO lexical_terms(agent_id, term, df) VALUES ('a', 'forgotten', 0);
    UPDATE engram_meta SET value = '10' WHERE key = 'schema_version'`);

  expect(PG_SCHEMA_VERSION).toBe(11);
  const s = await createPostgresMemoryStore({ connectionString: testPgUrl(), poolSize: 2 });
  opened.push(s);
  expect(s.info.schemaVersion).toBe(11);
  const users = await testSql<{ id: string; users: string[] }>(
    `SELECT m.id, array_agg(DISTINCT d.user_id) AS users FROM lexical_docs d JOIN memories m ON m.rid = d.rid
     GROUP BY m.id ORDER BY m.id`,
  );
  expect(users).toEqual([
    { id: 'alice', users: ['alice'] },
    { id: 'alice-long', users: ['alice'] },
    { id: 'bob', users: ['bob'] },
    { id: 'other', users: ['alice'] },
    { id: 'own', users: [''] },
  ]);
  expect(await testSql(MISMATCHED)).toEqual([]);
  // A frequency an older version left at zero (the word of an erased memory) is gone.
  expect(await testSql("SELECT df FROM lexical_terms WHERE term = 'forgotten'")).toEqual([]);
  // Both searches score as on a database made by schema 11; Alice's statistics leave Bob's unit out.
  expect(scores((await s.searchLexical(query)).hits)).toEqual(agentBefore);
  const alice = scores((await s.searchLexical(forAlice)).hits);
  expect(alice).toEqual(aliceBefore);
  const inAgent = agentBefore.find((h) => h[0] === 'alice');
  expect(alice.find((h) => h[0] === 'alice')?.[1]).not.toBe(inAgent?.[1]);
  // Bob writes the words again and deletes his memory: Alice's scores do not move, the counts stay exact.
  await s.insertMemory({ agentId: 'a', kind: 'fact', content: 'jasmine jasmine tea', userId: 'bob' });
  await s.deleteMemory('a', 'bob');
  expect(scores((await s.searchLexical(forAlice)).hits)).toEqual(alice);
  expect(await testSql(MISMATCHED)).toEqual([]);
  expect((await s.checkIntegrity()).state).toBe('ok');
  await testSql(
    "UPDATE lexical_user_terms SET df = df + 1 WHERE agent_id = 'a' AND user_id = 'alice' AND term = 'tea'",
  );
  expect((await s.checkIntegrity()).state).toBe('failed');
  await testSql(
    "UPDATE lexical_user_terms SET df = df - 1 WHERE agent_id = 'a' AND user_id = 'alice' AND term = 'tea'",
  );
  expect((await s.checkIntegrity()).state).toBe('ok');
});

it('a unit written without its user (an older writer) takes its memory’s; an erased user leaves no rows', async () => {
  const s = await freshPostgresStore({});
  opened.push(s);
  await s.insertMemories([
    { id: 'own', agentId: 'a', kind: 'fact', content: 'The kettle is for green tea' },
    { id: 'alice', agentId: 'a', kind: 'fact', content: 'Alice had a biopsy on Monday', userId: 'alice' },
  ]);
  // What a writer of schema 10 sends: no user column.
  await testSql(`DELETE FROM lexical_docs WHERE rid = (SELECT rid FROM memories WHERE id = 'alice');
    INSERT INTO lexical_docs(agent_id, key, rid, length, tokens)
      SELECT agent_id, rid, rid, 2, ARRAY['biopsi', 'monday'] FROM memories WHERE id = 'alice';
    INSERT INTO lexical_postings(agent_id, term, key, tf, length)
      SELECT agent_id, t, rid, 1, 2 FROM memories, unnest(ARRAY['biopsi', 'monday']) t WHERE id = 'alice'`);
  const unitUser =
    "SELECT d.user_id FROM lexical_docs d JOIN memories m ON m.rid = d.rid WHERE m.id = 'alice'";
  expect(await testSql(unitUser)).toEqual([{ user_id: 'alice' }]);
  expect(await testSql(MISMATCHED)).toEqual([]);
  expect((await s.checkIntegrity()).state).toBe('ok');
  // A unit filed under another user fails the integrity check.
  await testSql("UPDATE lexical_docs SET user_id = 'bob' WHERE agent_id = 'a' AND user_id = 'alice'");
  expect((await s.checkIntegrity()).state).toBe('failed');
  await testSql("UPDATE lexical_docs SET user_id = 'alice' WHERE agent_id = 'a' AND user_id = 'bob'");
  expect((await s.checkIntegrity()).state).toBe('ok');
  // Erasing the user leaves no statistics or terms of theirs, and erasing the agent none of its own.
  await s.deleteAll('a', { userId: 'alice' });
  expect(await testSql("SELECT term FROM lexical_user_terms WHERE user_id = 'alice'")).toEqual([]);
  expect(await testSql("SELECT docs FROM lexical_user_stats WHERE user_id = 'alice'")).toEqual([]);
  expect(await testSql("SELECT term FROM lexical_terms WHERE agent_id = 'a' AND term = 'biopsi'")).toEqual(
    [],
  );
  expect(await testSql(MISMATCHED)).toEqual([]);
  await s.deleteAll('a');
  for (const table of ['lexical_terms', 'lexical_stats', 'lexical_user_terms', 'lexical_user_stats']) {
    expect(await testSql(`SELECT agent_id FROM ${table} WHERE agent_id = 'a'`)).toEqual([]);
  }
  expect((await s.checkIntegrity()).state).toBe('ok');
});
