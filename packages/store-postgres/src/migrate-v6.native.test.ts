// Schema 5 → 6 on PostgreSQL (each history row names its memory's user): a schema-5 database, whose history
// rows carried no user, opens with the rows of the memories still stored filled in from those rows (null for the
// agent's own) and the rows of memories erased before left unknown (''): their tombstones show to a whole-agent
// history only. What is written after the migration names its user, so a user's own erased memory keeps its
// tombstone for that user only.
import type { MemoryHistory } from '@engram/store';
import { afterEach, expect, it } from 'vitest';
import { PG_SCHEMA_VERSION } from './schema.js';
import { createPostgresMemoryStore, type PostgresMemoryStore } from './store.js';
import { freshPostgresStore, testPgUrl, testSql } from './testing/fresh.js';

const opened: PostgresMemoryStore[] = [];
afterEach(async () => {
  for (const s of opened.splice(0)) await s.close();
});

const actions = (h: MemoryHistory): string[] => h.entries.map((e) => `${e.memoryId} ${e.action}`);

it('migrates a schema-5 database: stored memories’ history gets its user, erased ones stay unknown', async () => {
  const first = await freshPostgresStore({});
  opened.push(first);
  await first.insertMemories([
    { id: 'own-1', agentId: 'a', kind: 'fact', content: 'The office opens at nine' },
    { id: 'alice-1', agentId: 'a', kind: 'fact', content: 'Alice has an office key', userId: 'alice' },
    { id: 'bob-gone', agentId: 'a', kind: 'fact', content: 'Bob has an office plant', userId: 'bob' },
  ]);
  for (const id of ['own-1', 'alice-1', 'bob-gone']) {
    await first.updateMemory('a', id, 1, { content: `${id} corrected` });
  }
  await first.forgetMemory('a', 'bob-gone', { forUser: 'bob', reason: 'he moved desks' });
  for (const s of opened.splice(0)) await s.close();
  await testSql(`ALTER TABLE memory_history DROP COLUMN user_id;
    UPDATE engram_meta SET value = '5' WHERE key = 'schema_version'`);

  expect(PG_SCHEMA_VERSION).toBe(11);
  const s = await createPostgresMemoryStore({ connectionString: testPgUrl(), poolSize: 2 });
  opened.push(s);
  expect(s.info.schemaVersion).toBe(11);
  const rows = await testSql<{ memory_id: string; action: string; user_id: string | null }>(
    'SELECT memory_id, action, user_id FROM memory_history ORDER BY seq',
  );
  expect(rows.map((r) => [r.memory_id, r.action, r.user_id])).toEqual([
    ['own-1', 'updated', null],
    ['alice-1', 'updated', 'alice'],
    ['bob-gone', 'updated', ''],
    ['bob-gone', 'forgotten', ''],
  ]);
  // Whose the erased memory was is not known: the whole agent sees its tombstone, no user does.
  expect(actions(await s.history('a', 'bob-gone'))).toEqual(['bob-gone updated', 'bob-gone forgotten']);
  for (const forUser of ['alice', 'bob']) {
    expect((await s.history('a', 'bob-gone', { forUser })).entries).toEqual([]);
  }
  expect(actions(await s.history('a', 'own-1', { forUser: 'bob' }))).toEqual([
    'own-1 created',
    'own-1 updated',
  ]);

  // Erased after the migration: the tombstone names Alice; she and the agent still see the lineage.
  await s.forgetMemory('a', 'alice-1', { forUser: 'alice', reason: 'she left' });
  expect(actions(await s.history('a', 'alice-1', { forUser: 'alice' }))).toEqual([
    'alice-1 updated',
    'alice-1 forgotten',
  ]);
  expect((await s.history('a', 'alice-1', { forUser: 'bob' })).entries).toEqual([]);
});
