// Schema 6 → 7 on PostgreSQL (a failed embedding keeps its error code and time): a schema-6 database, whose
// failed rows kept no code, opens with those rows listed as failed, code `unknown` and no time; a failure
// committed after the migration keeps the embedder's code and when it failed.
import { afterEach, expect, it } from 'vitest';
import { PG_SCHEMA_VERSION } from './schema.js';
import { createPostgresMemoryStore, type PostgresMemoryStore } from './store.js';
import { freshPostgresStore, testPgUrl, testSql } from './testing/fresh.js';

const opened: PostgresMemoryStore[] = [];
afterEach(async () => {
  for (const s of opened.splice(0)) await s.close();
});

it('migrates a schema-6 database: earlier failures read unknown, later ones keep their code', async () => {
  const first = await freshPostgresStore({});
  opened.push(first);
  await first.insertMemories([
    { id: 'old-fail', agentId: 'a', kind: 'fact', content: 'failed under schema 6' },
    { id: 'later', agentId: 'a', kind: 'fact', content: 'fails after the migration', userId: 'alice' },
  ]);
  await first.commitEmbeddings([{ id: 'old-fail', revision: 1, state: 'error' }]);
  for (const s of opened.splice(0)) await s.close();
  await testSql(`DROP INDEX memories_embedding_failed;
    ALTER TABLE memories DROP COLUMN embedding_error;
    ALTER TABLE memories DROP COLUMN embedding_failed_at;
    UPDATE engram_meta SET value = '6' WHERE key = 'schema_version'`);

  expect(PG_SCHEMA_VERSION).toBe(11);
  const s = await createPostgresMemoryStore({ connectionString: testPgUrl(), poolSize: 2 });
  opened.push(s);
  expect(s.info.schemaVersion).toBe(11);
  expect(await s.listFailedEmbeddings('a')).toEqual([
    { id: 'old-fail', agentId: 'a', userId: null, errorCode: 'unknown', attempts: 1, failedAt: null },
  ]);
  await s.commitEmbeddings([{ id: 'later', revision: 1, state: 'error', code: 'ENGRAM_PROVIDER_TIMEOUT' }]);
  const failed = await s.listFailedEmbeddings('a');
  expect(failed.map((f) => [f.id, f.errorCode, f.userId])).toEqual([
    ['later', 'ENGRAM_PROVIDER_TIMEOUT', 'alice'],
    ['old-fail', 'unknown', null],
  ]);
  expect(typeof failed[0]?.failedAt).toBe('number');
  // Another user's failure is not listed for Bob.
  expect((await s.listFailedEmbeddings('a', { forUser: 'bob' })).map((f) => f.id)).toEqual(['old-fail']);
});
