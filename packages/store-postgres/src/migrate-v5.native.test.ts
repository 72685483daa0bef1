// Schema 4 → 5 on PostgreSQL (users are boundaries): a schema-4 database, whose duplicate rule was keyed by
// agent, kind and hash only, opens with every row as it was, and then the rule holds inside a user: the text
// Alice stored is stored again for Bob, while Alice's second copy is still found as a duplicate. Its events get
// a user column (null for the events logged before).
import { afterEach, expect, it } from 'vitest';
import { ACTIVE_CONTENT_WHERE, PG_SCHEMA_VERSION } from './schema.js';
import { createPostgresMemoryStore, type PostgresMemoryStore } from './store.js';
import { freshPostgresStore, testPgUrl, testSql } from './testing/fresh.js';

const opened: PostgresMemoryStore[] = [];
afterEach(async () => {
  for (const s of opened.splice(0)) await s.close();
});

const PEANUTS = 'I am allergic to peanuts';

it('migrates a schema-4 database: rows unchanged, the duplicate rule then keyed by user, events with a user', async () => {
  const first = await freshPostgresStore({});
  opened.push(first);
  // What schema 4 could hold: Alice's fact, the agent's own note, an event (and Bob's copy, below).
  await first.insertMemories([
    { id: 'alice-1', agentId: 'a', kind: 'fact', content: PEANUTS, userId: 'alice' },
    { id: 'own-1', agentId: 'a', kind: 'fact', content: 'The office opens at nine' },
  ]);
  await first.appendEvents('a', 's1', [{ seq: 1, type: 'message', role: 'user', content: 'hello' }]);
  // Bob's copy of the text, kept superseded (the old rule allowed one active row per text for the whole
  // agent); then turn the database back into what schema 4 wrote: the rule's index without the user, events
  // without it.
  const bobOld = await first.insertMemory({
    id: 'bob-old',
    agentId: 'a',
    kind: 'fact',
    content: PEANUTS,
    userId: 'bob',
  });
  await first.setLifecycle('a', 'bob-old', bobOld.revision, 'superseded');
  const before = await first.listMemories('a');
  for (const s of opened.splice(0)) await s.close();
  await testSql(`DROP INDEX memories_active_content;
    CREATE UNIQUE INDEX memories_active_content ON memories(agent_id, kind, content_hash) WHERE ${ACTIVE_CONTENT_WHERE};
    DROP INDEX events_agent_user; ALTER TABLE events DROP COLUMN user_id;
    UPDATE engram_meta SET value = '4' WHERE key = 'schema_version'`);

  expect(PG_SCHEMA_VERSION).toBe(11);
  const s = await createPostgresMemoryStore({ connectionString: testPgUrl(), poolSize: 2 });
  opened.push(s);
  expect(s.info.schemaVersion).toBe(11);
  const after = await s.listMemories('a');
  expect(after).toEqual(before);
  expect((await s.getMemory('a', 'bob-old'))?.lifecycle).toBe('superseded');
  expect((await s.readEvents('a', 's1', 1, 1))[0]?.userId).toBeNull();

  // The rule inside a user: Bob's text is his own memory now; Alice's second copy is still hers.
  const bob = await s.insertUniqueMemory({ agentId: 'a', kind: 'fact', content: PEANUTS, userId: 'bob' });
  expect(bob.created).toBe(true);
  expect(bob.record.userId).toBe('bob');
  const alice = await s.insertUniqueMemory({ agentId: 'a', kind: 'fact', content: PEANUTS, userId: 'alice' });
  expect(alice).toMatchObject({ created: false, record: { id: 'alice-1' } });
  // Bob's superseded copy cannot come back beside his new active one.
  await expect(s.setLifecycle('a', 'bob-old', 2, 'active')).rejects.toMatchObject({
    code: 'ENGRAM_STORE_CONFLICT',
  });
  await s.appendEvents('a', 's1', [{ seq: 2, type: 'message', role: 'user', content: 'hi', userId: 'bob' }]);
  expect((await s.readEvents('a', 's1', 2, 2))[0]?.userId).toBe('bob');
});
