/**
 * Schema v19 → v20 (BM25 statistics per user): a file made by schema 19, whose units named no user and whose
 * statistics were the agent's only, opens for writing with each unit naming its memory's user and the
 * statistics per user counted from the units; a whole-agent search answers as before, a user's search with the
 * statistics of what that user sees, and another user's later writes do not move that user's scores.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LexicalHit } from '@engram/store/port-kit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase } from './native.js';
import { SCHEMA_VERSION } from './schema.js';
import { userKey } from './sqlite/user-key.js';
import { createSqliteMemoryStore, type SqliteMemoryStore } from './sqlite-store.js';

let dir: string;
const open: SqliteMemoryStore[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'engram-v20-'));
});

afterEach(() => {
  for (const s of open.splice(0)) s.close();
  rmSync(dir, { recursive: true, force: true });
});

function openStore(path: string, access: 'read' | 'write' = 'write'): SqliteMemoryStore {
  const store = createSqliteMemoryStore({ path, embedding: null, access });
  open.push(store);
  return store;
}

function closeAll(): void {
  for (const s of open.splice(0)) s.close();
}

function raw<T>(path: string, fn: (db: ReturnType<typeof openDatabase>) => T): T {
  const db = openDatabase(path, { loadVectorExtension: false });
  try {
    return fn(db);
  } finally {
    db.close();
  }
}

/** Turns a file back into what schema 19 wrote: units without their key, the agent's statistics only. */
function backToV19(path: string): void {
  raw(path, (db) => {
    db.exec('DROP TABLE lexical_user_stats');
    db.exec('ALTER TABLE lexical_docs DROP COLUMN user_id');
    db.prepare("UPDATE meta SET value = '19' WHERE key = 'schema_version'").run();
  });
}

/** Per-key statistics that differ from the units they count (none, when they agree). */
const STATS_MISMATCH = `SELECT 1 FROM (SELECT agent_id, coalesce(user_id, '') AS user_id, count(*) AS n,
    sum(length) AS l FROM lexical_docs GROUP BY agent_id, coalesce(user_id, '')) d
  FULL JOIN lexical_user_stats s ON s.agent_id = d.agent_id AND s.user_id = d.user_id
  WHERE d.n IS NOT s.docs OR d.l IS NOT s.total_length`;

const filler = ' The members talked at length about tomatoes, compost and the new fence.'.repeat(40);

const scores = (hits: readonly LexicalHit[]): [string, number, number | undefined][] =>
  hits.map((h) => [h.id, h.score, h.memoryScore]);

describe('schema v19 → v20', () => {
  it('a v19 file gets its units keyed and per-user statistics; scores hold, and users stay apart', async () => {
    const path = join(dir, 'v19.db');
    const first = openStore(path);
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
    closeAll();
    backToV19(path);

    expect(() => openStore(path, 'read')).toThrow(
      expect.objectContaining({ code: 'ENGRAM_STORE_SCHEMA_TOO_OLD' }),
    );
    expect(SCHEMA_VERSION).toBe(20);
    const store = openStore(path);
    expect(store.info.schemaVersion).toBe(20);
    // Every unit names its memory's user (the long memory's chunks too), and the statistics count them per user.
    const named = raw(path, (db) =>
      db
        .prepare(
          `SELECT m.id AS id, count(*) AS units, count(DISTINCT coalesce(d.user_id, '')) AS users,
             max(d.user_id) AS user FROM lexical_docs d
           JOIN memories m ON m.rid = d.rid % 1099511627776 GROUP BY m.id ORDER BY m.id`,
        )
        .all(),
    ) as { id: string; units: number; users: number; user: string | null }[];
    expect(named.map((r) => [r.id, r.users, r.user])).toEqual([
      ['alice', 1, 'alice'],
      ['alice-long', 1, 'alice'],
      ['bob', 1, 'bob'],
      ['other', 1, 'alice'],
      ['own', 1, null],
    ]);
    expect(named.find((r) => r.id === 'alice-long')?.units).toBeGreaterThan(1);
    const mismatched = raw(path, (db) => db.prepare(STATS_MISMATCH).all());
    // Each user's row keeps the user's key (0 for the agent's own).
    const keys = raw(path, (db) =>
      db
        .prepare("SELECT user_id, user_key FROM lexical_user_stats WHERE agent_id = 'a' ORDER BY user_id")
        .all(),
    );
    expect(keys).toEqual([
      { user_id: '', user_key: 0 },
      { user_id: 'alice', user_key: userKey('alice') },
      { user_id: 'bob', user_key: userKey('bob') },
    ]);
    expect(mismatched).toEqual([]);
    // Both searches score as on a file made by schema 20: the whole agent's with every unit, Alice's with the
    // statistics of her units and the agent's own, which leave Bob's out (so her memory scores otherwise there).
    expect(scores((await store.searchLexical(query)).hits)).toEqual(agentBefore);
    const alice = scores((await store.searchLexical(forAlice)).hits);
    expect(alice).toEqual(aliceBefore);
    const inAgent = agentBefore.find((h) => h[0] === 'alice');
    expect(alice.find((h) => h[0] === 'alice')?.[1]).not.toBe(inAgent?.[1]);
    // Bob writes the words again and forgets his memory: Alice's scores do not move.
    await store.insertMemory({ agentId: 'a', kind: 'fact', content: 'jasmine jasmine tea', userId: 'bob' });
    await store.deleteMemory('a', 'bob');
    expect(scores((await store.searchLexical(forAlice)).hits)).toEqual(alice);
    expect(raw(path, (db) => db.prepare(STATS_MISMATCH).all())).toEqual([]);
    expect((await store.checkIntegrity()).state).toBe('ok');
    // Erasing Alice leaves no statistics row of hers.
    await store.deleteAll('a', { userId: 'alice' });
    const aliceRows = raw(path, (db) =>
      db.prepare("SELECT docs FROM lexical_user_stats WHERE agent_id = 'a' AND user_id = 'alice'").all(),
    );
    expect(aliceRows).toEqual([]);
    expect(raw(path, (db) => db.prepare(STATS_MISMATCH).all())).toEqual([]);
  });
});
