/**
 * Forgetting as the SQLite file holds it (what a user of any store sees of scopes, filters, validity, history,
 * forgetting and contradiction links is the conformance suite's, in @engram/test-support).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase } from './native.js';
import { createSqliteMemoryStore, type SqliteMemoryStore } from './sqlite-store.js';

let dir: string;
let clock: number;
const open: SqliteMemoryStore[] = [];

function openStore(name = 'facts.db'): SqliteMemoryStore {
  const store = createSqliteMemoryStore({
    path: join(dir, name),
    embedding: null,
    now: () => clock,
  });
  open.push(store);
  return store;
}

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'engram-facts-'));
  clock = 1000;
});

afterEach(() => {
  for (const s of open.splice(0)) s.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('forgetting in the file', () => {
  it('an erased memory leaves no trace of its text in the file, only tombstones', async () => {
    const store = openStore();
    const v1 = await store.insertMemory({ agentId: 'a', kind: 'fact', content: 'my address is 1 Elm St' });
    const v1b = await store.updateMemory('a', v1.id, v1.revision, { content: 'my address is 2 Elm St' });
    const { replacement } = await store.supersedeMemory('a', v1.id, v1b.revision, {
      agentId: 'a',
      kind: 'fact',
      content: 'my address is 3 Oak Ave',
    });
    clock = 5000;
    await store.forgetMemory('a', replacement.id, { actor: 'user', reason: 'asked to forget' });
    const db = openDatabase(join(dir, 'facts.db'));
    try {
      const text = db
        .prepare(
          "SELECT count(*) AS n FROM memory_history WHERE content LIKE '%Elm%' OR content LIKE '%Oak%'",
        )
        .get() as { n: number };
      expect(text.n).toBe(0);
      expect((db.prepare('SELECT count(*) AS n FROM memories').get() as { n: number }).n).toBe(0);
      expect(
        (
          db
            .prepare(
              'SELECT count(*) AS n FROM (SELECT * FROM lexical_postings UNION ALL SELECT * FROM lexical_postings_fresh)',
            )
            .get() as { n: number }
        ).n,
      ).toBe(0);
      expect(
        (
          db.prepare("SELECT count(*) AS n FROM memory_history WHERE action = 'forgotten'").get() as {
            n: number;
          }
        ).n,
      ).toBe(2);
    } finally {
      db.close();
    }
  });
});

describe('metadata as stored', () => {
  it('returns the keys sorted by name (the PostgreSQL store returns jsonb order: shorter keys first)', async () => {
    const store = openStore();
    const m = await store.insertMemory({
      agentId: 'a',
      kind: 'fact',
      content: 'x',
      metadata: { b: 1, aa: 2 },
    });
    expect(Object.keys((await store.getMemory('a', m.id))?.metadata ?? {})).toEqual(['aa', 'b']);
  });
});
