// Schema 7 → 8 on PostgreSQL (process beats): a schema-7 database, without the `process_beats` table, opens with
// it and its memories as they were; a beat published then is read back by another store on the database.
import { afterEach, expect, it } from 'vitest';
import { PG_SCHEMA_VERSION } from './schema.js';
import { createPostgresMemoryStore, type PostgresMemoryStore } from './store.js';
import { freshPostgresStore, testPgUrl, testSql } from './testing/fresh.js';

const opened: PostgresMemoryStore[] = [];
afterEach(async () => {
  for (const s of opened.splice(0)) await s.close();
});

const ID = 'e'.repeat(32);

it('migrates a schema-7 database: the beats table is created, memories stay as they were', async () => {
  const first = await freshPostgresStore({});
  opened.push(first);
  await first.insertMemory({ id: 'm1', agentId: 'a', kind: 'fact', content: 'The office opens at nine' });
  for (const s of opened.splice(0)) await s.close();
  await testSql(`DROP TABLE process_beats;
    UPDATE engram_meta SET value = '7' WHERE key = 'schema_version'`);
  expect(await testSql("SELECT 1 FROM pg_tables WHERE tablename = 'process_beats'")).toEqual([]);

  expect(PG_SCHEMA_VERSION).toBe(11);
  const s = await createPostgresMemoryStore({ connectionString: testPgUrl(), poolSize: 2 });
  opened.push(s);
  expect(s.info.schemaVersion).toBe(11);
  expect((await s.getMemory('a', 'm1'))?.content).toBe('The office opens at nine');
  await s.publishProcessBeat({
    processId: ID,
    startedAt: 1,
    ttlMs: 60_000,
    snapshot: { agent: { tracked: true } },
  });
  const other = await createPostgresMemoryStore({ connectionString: testPgUrl(), poolSize: 2 });
  opened.push(other);
  expect((await other.listProcessBeats()).beats.map((b) => [b.processId, b.snapshot])).toEqual([
    [ID, { agent: { tracked: true } }],
  ]);
});
