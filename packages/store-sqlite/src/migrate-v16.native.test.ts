/**
 * Schema v15 → v16 (each history row names its memory's user): a file made by schema 15, whose history rows
 * carried no user, opens with the rows of the memories still stored filled in from those rows (null for the
 * agent's own), and the rows of memories erased before the migration left unknown: their tombstones show to a
 * whole-agent history only, never to a user-scoped one (whose user the store cannot tell). What is written after
 * the migration names its user, so a user's own memory erased then keeps its tombstone for that user only. An
 * export of the migrated file carries the column and imports again with the same answers.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ExportRecord, MemoryHistory } from '@engram/store/port-kit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase } from './native.js';
import { SCHEMA_VERSION } from './schema.js';
import { createSqliteMemoryStore, type SqliteMemoryStore } from './sqlite-store.js';

let dir: string;
const open: SqliteMemoryStore[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'engram-v16-'));
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

/** The history rows of the file as `memory_id action user_id` (the user column absent: `-`). */
function historyUsers(path: string): string[] {
  const db = openDatabase(path, { loadVectorExtension: false });
  try {
    const has = db
      .prepare("SELECT 1 AS x FROM pragma_table_info('memory_history') WHERE name = 'user_id'")
      .get();
    const rows = db
      .prepare(
        `SELECT memory_id, action, ${has === undefined ? "'-'" : 'user_id'} AS u FROM memory_history ORDER BY seq`,
      )
      .all() as { memory_id: string; action: string; u: string | null }[];
    return rows.map((r) => `${r.memory_id} ${r.action} ${r.u === null ? 'null' : JSON.stringify(r.u)}`);
  } finally {
    db.close();
  }
}

/** Turns a file back into what schema 15 wrote: `memory_history` without `user_id`. */
function backToV15(path: string): void {
  const raw = openDatabase(path, { loadVectorExtension: false });
  try {
    raw.exec('ALTER TABLE memory_history DROP COLUMN user_id');
    raw.prepare("UPDATE meta SET value = '15' WHERE key = 'schema_version'").run();
  } finally {
    raw.close();
  }
}

const actions = (h: MemoryHistory): string[] => h.entries.map((e) => `${e.memoryId} ${e.action}`);

/** What each scope sees of each memory's history. */
async function views(store: SqliteMemoryStore, agentId: string): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const id of ['own-1', 'alice-1', 'bob-gone', 'own-gone']) {
    for (const forUser of [undefined, 'alice', 'bob']) {
      const h = await store.history(agentId, id, forUser === undefined ? undefined : { forUser });
      out[`${id} for ${forUser ?? 'agent'}`] = actions(h);
    }
  }
  return out;
}

describe('schema v15 → v16', () => {
  it('fills in the user of the stored memories’ history; erased ones stay unknown, for whole-agent calls only', async () => {
    const path = join(dir, 'v15.db');
    const first = openStore(path);
    await first.insertMemories([
      { id: 'own-1', agentId: 'a', kind: 'fact', content: 'The office opens at nine' },
      { id: 'alice-1', agentId: 'a', kind: 'fact', content: 'Alice has an office key', userId: 'alice' },
      { id: 'bob-gone', agentId: 'a', kind: 'fact', content: 'Bob has an office plant', userId: 'bob' },
      { id: 'own-gone', agentId: 'a', kind: 'fact', content: 'The canteen closes at two' },
    ]);
    for (const id of ['own-1', 'alice-1', 'bob-gone']) {
      await first.updateMemory('a', id, 1, { content: `${id} corrected` });
    }
    // Erased before the migration (the store's default forget mode): only their history rows are left.
    await first.forgetMemory('a', 'bob-gone', { forUser: 'bob', reason: 'he moved desks' });
    await first.forgetMemory('a', 'own-gone');
    closeAll();
    backToV15(path);
    expect(historyUsers(path)).toEqual([
      'own-1 updated "-"',
      'alice-1 updated "-"',
      'bob-gone updated "-"',
      'bob-gone forgotten "-"',
      'own-gone forgotten "-"',
    ]);

    expect(SCHEMA_VERSION).toBe(20);
    const store = openStore(path);
    expect(store.info.schemaVersion).toBe(20);
    // The stored memories' rows name their user; the erased ones' stay unknown ('').
    expect(historyUsers(path)).toEqual([
      'own-1 updated null',
      'alice-1 updated "alice"',
      'bob-gone updated ""',
      'bob-gone forgotten ""',
      'own-gone forgotten ""',
    ]);
    const before = await views(store, 'a');
    expect(before).toEqual({
      'own-1 for agent': ['own-1 created', 'own-1 updated'],
      'own-1 for alice': ['own-1 created', 'own-1 updated'],
      'own-1 for bob': ['own-1 created', 'own-1 updated'],
      'alice-1 for agent': ['alice-1 created', 'alice-1 updated'],
      'alice-1 for alice': ['alice-1 created', 'alice-1 updated'],
      'alice-1 for bob': [],
      // Whose it was is not known: the whole agent sees the tombstone, no user does.
      'bob-gone for agent': ['bob-gone updated', 'bob-gone forgotten'],
      'bob-gone for alice': [],
      'bob-gone for bob': [],
      'own-gone for agent': ['own-gone forgotten'],
      'own-gone for alice': [],
      'own-gone for bob': [],
    });

    // Erased after the migration: the tombstone names Alice, so she (and the agent) still see the lineage.
    await store.forgetMemory('a', 'alice-1', { forUser: 'alice', reason: 'she left' });
    expect(actions(await store.history('a', 'alice-1', { forUser: 'alice' }))).toEqual([
      'alice-1 updated',
      'alice-1 forgotten',
    ]);
    expect((await store.history('a', 'alice-1', { forUser: 'bob' })).entries).toEqual([]);
    expect(historyUsers(path).slice(-1)).toEqual(['alice-1 forgotten "alice"']);

    // The export carries the column, unknown users included, and imports into a new file with the same answers.
    const records: ExportRecord[] = [];
    for await (const r of store.exportRecords()) records.push(r);
    const copy = openStore(join(dir, 'copy.db'));
    await copy.importRecords(records);
    expect(await views(copy, 'a')).toEqual(await views(store, 'a'));
    expect((await store.checkIntegrity()).state).toBe('ok');
  });
});
