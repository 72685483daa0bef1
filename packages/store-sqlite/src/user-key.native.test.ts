/**
 * The user key of the search indexes (`sqlite/user-key.ts`): a 31-bit hash of the user id, 0 for the agent's own
 * rows. Two users may share a key; the index then lets the other user's rows into the scan, and the candidate
 * query still drops them: a search for one of them never shows the other's memories and still fills its top k.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NewMemory } from '@engram/store/port-kit';
import { mulberry32 } from '@engram/test-support/prng';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase } from './native.js';
import { NO_USER_KEY, userKey } from './sqlite/user-key.js';
import { createSqliteMemoryStore, type SqliteMemoryStore } from './sqlite-store.js';

const DIMS = 8;
const open: SqliteMemoryStore[] = [];

afterEach(() => {
  for (const s of open.splice(0)) s.close();
});

/** Two user ids with one key: the first pair of `user-<n>` found (a 31-bit key: some 60,000 ids in). */
function collidingUsers(): [string, string] {
  const seen = new Map<number, string>();
  for (let i = 0; ; i += 1) {
    const id = `user-${i}`;
    const key = userKey(id);
    const other = seen.get(key);
    if (other !== undefined) return [other, id];
    seen.set(key, id);
  }
}

describe('the user key', () => {
  it('is 0 for the agent’s own rows and a positive 31-bit integer for a user, the same for the same id', () => {
    expect(userKey(null)).toBe(NO_USER_KEY);
    expect(userKey(undefined)).toBe(NO_USER_KEY);
    for (const id of ['alice', 'bob@example.com', 'ユーザー', 'x'.repeat(200)]) {
      const key = userKey(id);
      expect(Number.isInteger(key) && key > 0 && key < 2 ** 31).toBe(true);
      expect(userKey(id)).toBe(key);
    }
    expect(userKey('alice')).not.toBe(userKey('bob'));
  });

  it('two users sharing a key: a search for one never shows the other’s memories and fills its top k', async () => {
    const [first, second] = collidingUsers();
    expect(userKey(first)).toBe(userKey(second));
    const store = createSqliteMemoryStore({
      path: ':memory:',
      embedding: { id: 'p8', dimensions: DIMS },
      vectorWorker: false,
    });
    open.push(store);
    const random = mulberry32(31);
    const owners = [null, first, second] as const;
    const rows: NewMemory[] = Array.from({ length: 90 }, (_, i) => {
      const user = owners[i % 3] ?? null;
      return {
        agentId: 'a',
        kind: 'fact' as const,
        content: `shared lantern note ${i}`,
        vector: Float32Array.from({ length: DIMS }, () => random() - 0.5),
        ...(user === null ? {} : { userId: user }),
      };
    });
    const stored = await store.insertMemories(rows);
    const ownerOf = new Map(stored.map((r) => [r.id, r.userId]));
    for (const k of [10, 60]) {
      const hits = await store.searchVector({
        agentId: 'a',
        vector: Float32Array.from({ length: DIMS }, () => random() - 0.5),
        k,
        filter: { forUser: first },
      });
      expect(hits).toHaveLength(k);
      expect(hits.every((h) => ownerOf.get(h.id) !== second)).toBe(true);
    }
    const only = await store.searchVector({
      agentId: 'a',
      vector: Float32Array.from({ length: DIMS }, () => random() - 0.5),
      k: 40,
      filter: { userId: first },
    });
    expect(only).toHaveLength(30);
    expect(only.every((h) => ownerOf.get(h.id) === first)).toBe(true);
    const lexical = await store.searchLexical({
      agentId: 'a',
      terms: ['lantern'],
      limit: 100,
      filter: { forUser: first },
    });
    expect(lexical.hits).toHaveLength(60);
    expect(lexical.hits.every((h) => ownerOf.get(h.id) !== second)).toBe(true);
  });

  it('two users sharing a key do not share BM25 statistics: one’s writes never move the other’s scores', async () => {
    const [first, second] = collidingUsers();
    const store = createSqliteMemoryStore({ path: ':memory:', embedding: null });
    open.push(store);
    const filler = ' The members talked at length about tomatoes, compost and the new fence.'.repeat(40);
    await store.insertMemories([
      { agentId: 'a', kind: 'fact', content: 'The kettle is for green tea' },
      { agentId: 'a', kind: 'fact', content: 'jasmine tea after lunch', userId: first },
      { agentId: 'a', kind: 'fact', content: `A diary.${filler} Some jasmine tea.${filler}`, userId: first },
    ]);
    const query = { agentId: 'a', terms: ['jasmine', 'tea'], limit: 10 };
    const scores = async (filter: { forUser: string } | { userId: string }) =>
      (await store.searchLexical({ ...query, filter })).hits.map((h) => [h.id, h.score, h.memoryScore]);
    const before = [await scores({ forUser: first }), await scores({ userId: first })];
    expect(before[0]?.some((h) => typeof h[2] === 'number')).toBe(true);
    // The other user of the same key writes the words, long and short.
    const theirs = await store.insertMemories([
      ...Array.from({ length: 8 }, (_, i) => ({
        agentId: 'a',
        kind: 'fact' as const,
        content: `jasmine tea number ${i}, jasmine again`,
        userId: second,
      })),
      { agentId: 'a', kind: 'fact', content: `Notes.${filler} jasmine.${filler}`, userId: second },
    ]);
    expect([await scores({ forUser: first }), await scores({ userId: first })]).toEqual(before);
    for (const r of theirs) await store.deleteMemory('a', r.id);
    expect([await scores({ forUser: first }), await scores({ userId: first })]).toEqual(before);
  });

  it('damaged per-user statistics never make a user’s search throw or drift another row', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'engram-user-stats-'));
    try {
      const path = join(dir, 'm.db');
      const store = createSqliteMemoryStore({ path, embedding: null });
      open.push(store);
      await store.insertMemories([
        { agentId: 'a', kind: 'fact', content: 'green tea in the kettle' },
        { id: 'a1', agentId: 'a', kind: 'fact', content: 'jasmine tea after lunch', userId: 'alice' },
        { id: 'a2', agentId: 'a', kind: 'fact', content: 'oolong tea on Sunday', userId: 'alice' },
      ]);
      const raw = openDatabase(path, { loadVectorExtension: false });
      try {
        // Another tool writes an out-of-range count: the sum of the visible rows would overflow.
        raw.exec("UPDATE lexical_user_stats SET docs = 9223372036854775807 WHERE user_id = ''");
        // And a unit's user as a blob.
        raw.exec(
          "UPDATE lexical_docs SET user_id = CAST('alice' AS BLOB) WHERE user_id = 'alice' AND rid = (SELECT rid FROM memories WHERE id = 'a1')",
        );
      } finally {
        raw.close();
      }
      const found = await store.searchLexical({
        agentId: 'a',
        terms: ['tea'],
        limit: 5,
        filter: { forUser: 'alice' },
      });
      expect(found.hits.length).toBeGreaterThan(0);
      const repaired = openDatabase(path, { loadVectorExtension: false });
      try {
        repaired.exec("UPDATE lexical_user_stats SET docs = 1 WHERE user_id = ''");
      } finally {
        repaired.close();
      }
      // Forgetting the unit whose user is a blob lowers Alice's row, not the agent's own.
      await store.deleteMemory('a', 'a1');
      const check = openDatabase(path, { loadVectorExtension: false, readonly: true });
      try {
        expect(check.prepare('SELECT user_id, docs FROM lexical_user_stats ORDER BY user_id').all()).toEqual([
          { user_id: '', docs: 1 },
          { user_id: 'alice', docs: 1 },
        ]);
      } finally {
        check.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
