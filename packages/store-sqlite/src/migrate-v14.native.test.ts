/**
 * Schema v13 → v14 (users are boundaries): a file made by schema 13, whose exact-duplicate rule was keyed by
 * agent, hash and kind only, opens with every row as it was; then the rule holds inside a user (the text Alice
 * stored is stored again for Bob, Alice's second copy is still her first), and its events carry a user (null
 * for those logged before).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase } from './native.js';
import { CONTENT_HASH_INDEXES_SQL, SCHEMA_VERSION } from './schema.js';
import { createSqliteMemoryStore, type SqliteMemoryStore } from './sqlite-store.js';

let dir: string;
const open: SqliteMemoryStore[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'engram-v14-'));
});

afterEach(() => {
  for (const s of open.splice(0)) s.close();
  rmSync(dir, { recursive: true, force: true });
});

function openStore(path: string): SqliteMemoryStore {
  const store = createSqliteMemoryStore({ path, embedding: null });
  open.push(store);
  return store;
}

function closeAll(): void {
  for (const s of open.splice(0)) s.close();
}

const PEANUTS = 'I am allergic to peanuts';

/** The SQL of the rule's index as the file holds it. */
function ruleIndexSql(path: string): string {
  const db = openDatabase(path, { loadVectorExtension: false });
  try {
    const row = db.prepare("SELECT sql FROM sqlite_master WHERE name = 'memories_active_hash'").get() as
      | { sql: string }
      | undefined;
    return row?.sql ?? '';
  } finally {
    db.close();
  }
}

describe('schema v13 → v14', () => {
  it('keeps every row, then holds the duplicate rule inside a user; events get a user column', async () => {
    const path = join(dir, 'v13.db');
    const first = openStore(path);
    await first.insertMemories([
      { id: 'alice-1', agentId: 'a', kind: 'fact', content: PEANUTS, userId: 'alice', createdAt: 1_000 },
      { id: 'own-1', agentId: 'a', kind: 'fact', content: 'The office opens at nine', createdAt: 1_000 },
      { id: 'b-1', agentId: 'b', kind: 'fact', content: PEANUTS, createdAt: 1_000 },
    ]);
    // Bob's copy of Alice's text: schema 13 held it only as a row that is no longer active.
    const bobOld = await first.insertMemory({
      id: 'bob-old',
      agentId: 'a',
      kind: 'fact',
      content: PEANUTS,
      userId: 'bob',
      createdAt: 2_000,
    });
    await first.setLifecycle('a', 'bob-old', bobOld.revision, 'superseded');
    await first.appendEvents('a', 's1', [{ seq: 1, type: 'message', role: 'user', content: 'hello' }]);
    const before = JSON.stringify(await first.listMemories('a'));
    closeAll();
    // Turn the file back into what version 13 wrote: the rule's index keyed (agent, hash, kind), no event user.
    const raw = openDatabase(path, { loadVectorExtension: false });
    try {
      raw.exec(`DROP INDEX memories_active_hash; DROP INDEX memories_other_hash_prefix; ${CONTENT_HASH_INDEXES_SQL}
        DROP INDEX events_agent_user; ALTER TABLE events DROP COLUMN user_id;`);
      raw.prepare("UPDATE meta SET value = '13' WHERE key = 'schema_version'").run();
    } finally {
      raw.close();
    }
    expect(ruleIndexSql(path)).not.toContain('user_id');

    expect(SCHEMA_VERSION).toBe(20);
    const store = openStore(path);
    expect(store.info.schemaVersion).toBe(20);
    expect(ruleIndexSql(path)).toContain("coalesce(user_id, '')");
    expect(JSON.stringify(await store.listMemories('a'))).toBe(before);
    expect((await store.readEvents('a', 's1', 1, 1))[0]?.userId).toBeNull();

    // Bob's text is his own memory now; Alice's second copy and the agent's own are found as before.
    const bob = await store.insertUniqueMemory({
      agentId: 'a',
      kind: 'fact',
      content: PEANUTS,
      userId: 'bob',
    });
    expect(bob.created).toBe(true);
    expect(bob.record.userId).toBe('bob');
    expect(
      await store.insertUniqueMemory({ agentId: 'a', kind: 'fact', content: PEANUTS, userId: 'alice' }),
    ).toMatchObject({ created: false, record: { id: 'alice-1' } });
    expect(await store.insertUniqueMemory({ agentId: 'b', kind: 'fact', content: PEANUTS })).toMatchObject({
      created: false,
      record: { id: 'b-1' },
    });
    // Bob's old copy cannot come back beside his new one, not even by a raw write.
    await expect(store.setLifecycle('a', 'bob-old', 2, 'active')).rejects.toMatchObject({
      code: 'ENGRAM_STORE_CONFLICT',
    });
    await store.appendEvents('a', 's1', [
      { seq: 2, type: 'message', role: 'user', content: 'hi', userId: 'bob' },
    ]);
    expect((await store.readEvents('a', 's1', 2, 2))[0]?.userId).toBe('bob');
    closeAll();
    const db = openDatabase(path, { loadVectorExtension: false });
    try {
      expect(() => db.prepare("UPDATE memories SET lifecycle = 'active' WHERE id = 'bob-old'").run()).toThrow(
        /UNIQUE/,
      );
    } finally {
      db.close();
    }
  });
});
