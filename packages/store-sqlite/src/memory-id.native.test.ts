/**
 * The ids the SQLite store makes when the caller gives none: time-ordered (UUID version 7), so they sort in
 * the order the rows were inserted, within a batch and across batches; a caller's `idFactory` or id wins.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NewMemory } from '@engram/store/port-kit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase } from './native.js';
import { createSqliteMemoryStore } from './sqlite-store.js';

const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

let dir: string;
let path: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'engram-ids-'));
  path = join(dir, 'store.db');
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

function batch(agentId: string, from: number, n: number): NewMemory[] {
  return Array.from({ length: n }, (_, i) => ({
    agentId,
    kind: 'semantic' as const,
    content: `note number ${from + i}`,
  }));
}

describe('generated memory ids', () => {
  it('sort in insertion order within a batch, across batches and single inserts, and are version 7 UUIDs', async () => {
    const store = createSqliteMemoryStore({ path });
    const made: string[] = [];
    try {
      for (const r of await store.insertMemories(batch('a', 0, 500))) made.push(r.id);
      made.push((await store.insertMemory({ agentId: 'b', kind: 'fact', content: 'one alone' })).id);
      for (const r of await store.insertMemories(batch('a', 500, 500))) made.push(r.id);
      made.push((await store.insertMemory({ agentId: 'a', kind: 'fact', content: 'the last one' })).id);
    } finally {
      store.close();
    }
    expect(made).toHaveLength(1002);
    expect(made.filter((id) => !V7.test(id))).toEqual([]);
    expect([...made].sort()).toEqual(made);
    expect(new Set(made).size).toBe(made.length);
    // The file agrees: the rows in insertion order (rowid) carry ascending ids.
    const raw = openDatabase(path);
    try {
      const stored = (raw.prepare('SELECT id FROM memories ORDER BY rid').all() as { id: string }[]).map(
        (row) => row.id,
      );
      expect(stored).toEqual(made);
    } finally {
      raw.close();
    }
  });

  it("uses the caller's idFactory, and a caller's id over both", async () => {
    let n = 0;
    const store = createSqliteMemoryStore({
      path,
      idFactory: () => {
        n += 1;
        return `mine-${n}`;
      },
    });
    try {
      const rows = await store.insertMemories([
        ...batch('a', 0, 2),
        { agentId: 'a', kind: 'fact', content: 'named', id: 'chosen' },
      ]);
      expect(rows.map((r) => r.id)).toEqual(['mine-1', 'mine-2', 'chosen']);
    } finally {
      store.close();
    }
  });
});
