/**
 * Export as a point-in-time snapshot and import as all or nothing, on SQLite files: an export streamed slowly
 * while another connection supersedes facts imports to exactly the file as it was when the export began (a copy
 * of the file taken at that moment, row by row); an in-memory store exports on its own connection and refuses its
 * own writes meanwhile; a row another tool wrote with metadata that is not JSON never fails a read and fails the
 * integrity check; an import whose stream fails part-way leaves every row as it was.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ExportRecord } from '@engram/store/port-kit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase } from './native.js';
import { createSqliteMemoryStore, type SqliteMemoryStore } from './sqlite-store.js';

let dir: string;
let open: SqliteMemoryStore[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'engram-snapshot-'));
});
afterEach(() => {
  for (const s of open) s.close();
  open = [];
  rmSync(dir, { recursive: true, force: true });
});

function storeAt(path: string, name: string): SqliteMemoryStore {
  let n = 0;
  const s = createSqliteMemoryStore({ path, embedding: null, idFactory: () => `${name}-${++n}` });
  open.push(s);
  return s;
}

/** Every memory row of a file, by id: the columns a user sees (lifecycle, content, revision, lineage). */
function memoryRows(path: string): Map<string, string> {
  const db = openDatabase(path, { readonly: true });
  try {
    const rows = db
      .prepare(
        'SELECT id, agent_id, kind, lifecycle, content, revision, superseded_by, valid_to FROM memories ORDER BY id',
      )
      .all() as Record<string, unknown>[];
    const history = db.prepare('SELECT count(*) AS n FROM memory_history').get() as { n: number };
    const out = new Map(rows.map((r) => [String(r.id), JSON.stringify(r)]));
    out.set('(history)', String(history.n));
    return out;
  } finally {
    db.close();
  }
}

describe('export is one snapshot (SQLite)', () => {
  it('an export streamed while another connection supersedes facts imports to exactly the file at its start', async () => {
    const path = join(dir, 'live.db');
    const s = storeAt(path, 'src');
    const facts: { id: string; revision: number }[] = [];
    for (let i = 0; i < 20; i += 1) {
      const r = await s.insertMemory({ agentId: 'a', kind: 'fact', content: `fact ${i} version 0` });
      facts.push({ id: r.id, revision: r.revision });
    }
    await s.insertMemories(
      Array.from({ length: 1200 }, (_, i) => ({
        agentId: 'a',
        kind: 'semantic' as const,
        content: `note ${i}`,
      })),
    );
    const writer = storeAt(path, 'w');
    let stop = false;
    let paused = true;
    let round = 0;
    const loop = (async () => {
      while (!stop) {
        if (paused) {
          await sleep(1);
          continue;
        }
        round += 1;
        for (let i = 0; i < facts.length && !stop; i += 1) {
          const f = facts[i] as { id: string; revision: number };
          const out = await writer.supersedeMemory('a', f.id, f.revision, {
            agentId: 'a',
            kind: 'fact',
            content: `fact ${i} version ${round}`,
          });
          facts[i] = { id: out.replacement.id, revision: out.replacement.revision };
          await sleep(0);
        }
      }
    })();
    // The writer is paused: the export's snapshot begins now, and a copy of the file taken now is that moment.
    const stream = s.exportRecords()[Symbol.asyncIterator]();
    const first = await stream.next();
    const copy = join(dir, 'copy.db');
    const db = openDatabase(path, { readonly: true });
    db.exec(`VACUUM INTO '${copy}'`);
    db.close();
    paused = false;
    const records: ExportRecord[] = [first.value as ExportRecord];
    let n = 0;
    try {
      for (;;) {
        const r = await stream.next();
        if (r.done === true) break;
        records.push(r.value);
        n += 1;
        if (n % 50 === 0) await sleep(3);
      }
    } finally {
      stop = true;
      await loop;
    }
    expect(round).toBeGreaterThan(1);
    const target = storeAt(join(dir, 'target.db'), 't');
    await target.importRecords(records);
    const restored = memoryRows(join(dir, 'target.db'));
    expect(restored).toEqual(memoryRows(copy));
    // And the live file moved on meanwhile.
    expect(memoryRows(path).size).toBeGreaterThan(restored.size);
  }, 120_000);

  it('an in-memory store exports on its own connection: its writes wait (ENGRAM_STORE_BUSY) until the export ends', async () => {
    const s = createSqliteMemoryStore({ path: ':memory:', embedding: null });
    open.push(s);
    await s.insertMemory({ agentId: 'a', kind: 'semantic', content: 'first' });
    const stream = s.exportRecords()[Symbol.asyncIterator]();
    await stream.next();
    await expect(s.insertMemory({ agentId: 'a', kind: 'semantic', content: 'second' })).rejects.toMatchObject(
      {
        code: 'ENGRAM_STORE_BUSY',
      },
    );
    // Stopping early ends the read transaction: writes work again.
    await stream.return?.(undefined);
    await s.insertMemory({ agentId: 'a', kind: 'semantic', content: 'second' });
    expect((await s.listMemories('a')).length).toBe(2);
  });

  it('a file store keeps writing during its own export (a reader of its own)', async () => {
    const s = storeAt(join(dir, 'own.db'), 'o');
    await s.insertMemory({ agentId: 'a', kind: 'semantic', content: 'first' });
    const records: ExportRecord[] = [];
    for await (const r of s.exportRecords()) {
      records.push(r);
      if (r.type === 'header') await s.insertMemory({ agentId: 'a', kind: 'semantic', content: 'during' });
    }
    expect(records.filter((r) => r.type === 'memory')).toHaveLength(1);
    expect((await s.listMemories('a')).length).toBe(2);
  });
});

describe('import is all or nothing (SQLite)', () => {
  it('a stream failing part-way leaves every row as it was; the store keeps working', async () => {
    const src = storeAt(join(dir, 'src.db'), 's');
    await src.insertMemories(
      Array.from({ length: 900 }, (_, i) => ({
        agentId: 'b',
        kind: 'semantic' as const,
        content: `row ${i}`,
      })),
    );
    const records: ExportRecord[] = [];
    for await (const r of src.exportRecords()) records.push(r);
    const path = join(dir, 'target.db');
    const target = storeAt(path, 't');
    await target.insertMemory({ agentId: 'a', kind: 'semantic', content: 'kept' });
    const before = memoryRows(path);
    async function* failing(): AsyncGenerator<ExportRecord> {
      yield* records.slice(0, 700);
      throw new Error('the disk went away');
    }
    await expect(target.importRecords(failing())).rejects.toThrow();
    expect(memoryRows(path)).toEqual(before);
    await target.insertMemory({ agentId: 'a', kind: 'semantic', content: 'after' });
    expect((await target.importRecords(records)).imported.memories).toBe(900);
  });
});

describe('a stored row no reader can use (SQLite)', () => {
  it('metadata that is not JSON reads as {}, search and list work, and the integrity check fails naming it', async () => {
    const path = join(dir, 'bad.db');
    const s = storeAt(path, 'b');
    const r = await s.insertMemory({ agentId: 'a', kind: 'semantic', content: 'the harbour is calm' });
    const db = openDatabase(path);
    db.prepare("UPDATE memories SET metadata = 'not json{', valid_from = 'yesterday' WHERE id = ?").run(r.id);
    db.close();
    expect((await s.getMemory('a', r.id))?.metadata).toEqual({});
    expect(Number.isNaN((await s.getMemory('a', r.id))?.validFrom)).toBe(true);
    expect((await s.listMemories('a')).length).toBe(1);
    expect((await s.searchLexical({ agentId: 'a', terms: ['harbour'], limit: 5 })).hits.length).toBe(1);
    expect(await s.checkIntegrity()).toMatchObject({ state: 'failed', badRows: 1 });
    const health = await s.health();
    expect(health.ok && health.health.integrity).toMatchObject({ state: 'failed', badRows: 1 });
    expect(readFileSync(path).length).toBeGreaterThan(0);
  });
});
