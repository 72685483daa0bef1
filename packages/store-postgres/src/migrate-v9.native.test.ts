// Schema 8 → 9 on PostgreSQL (covering postings key): a schema-8 database, whose postings key holds the key
// columns only, opens with the key carrying term frequency and unit length, and its lexical search ranks as it
// did before the migration.
import { afterEach, expect, it } from 'vitest';
import { PG_SCHEMA_VERSION } from './schema.js';
import { createPostgresMemoryStore, type PostgresMemoryStore } from './store.js';
import { freshPostgresStore, testPgUrl, testSql } from './testing/fresh.js';

const opened: PostgresMemoryStore[] = [];
afterEach(async () => {
  for (const s of opened.splice(0)) await s.close();
});

const KEY_COLUMNS = `SELECT a.attname AS name FROM pg_index i
  JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
  WHERE i.indexrelid = 'lexical_postings_pkey'::regclass ORDER BY a.attname`;

it('migrates a schema-8 database: the postings key covers tf and length, search ranks as before', async () => {
  const first = await freshPostgresStore({});
  opened.push(first);
  await first.insertMemories([
    { id: 'm1', agentId: 'a', kind: 'fact', content: 'The office opens at nine on weekdays' },
    { id: 'm2', agentId: 'a', kind: 'fact', content: 'The office office closes early' },
    { id: 'm3', agentId: 'a', kind: 'fact', content: 'Lunch is served at noon' },
  ]);
  const query = { agentId: 'a', terms: ['office', 'nine'], limit: 10 };
  const before = (await first.searchLexical(query)).hits.map((h) => [h.id, h.score]);
  for (const s of opened.splice(0)) await s.close();
  await testSql(`ALTER TABLE lexical_postings DROP CONSTRAINT lexical_postings_pkey,
      ADD CONSTRAINT lexical_postings_pkey PRIMARY KEY (agent_id, term, key);
    UPDATE engram_meta SET value = '8' WHERE key = 'schema_version'`);
  expect((await testSql<{ name: string }>(KEY_COLUMNS)).map((r) => r.name)).toEqual([
    'agent_id',
    'key',
    'term',
  ]);

  expect(PG_SCHEMA_VERSION).toBe(11);
  const s = await createPostgresMemoryStore({ connectionString: testPgUrl(), poolSize: 2 });
  opened.push(s);
  expect(s.info.schemaVersion).toBe(11);
  expect((await testSql<{ name: string }>(KEY_COLUMNS)).map((r) => r.name)).toEqual([
    'agent_id',
    'key',
    'length',
    'term',
    'tf',
  ]);
  expect(before.map(([id]) => id)).toEqual(['m1', 'm2']);
  expect((await s.searchLexical(query)).hits.map((h) => [h.id, h.score])).toEqual(before);
});
