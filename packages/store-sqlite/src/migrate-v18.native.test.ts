/**
 * Schema v17 → v18 (process beats): a file made by schema 17 opens for writing with the `process_beats` table
 * and its memories as they were (read-only, it is refused as too old and left as it was, as every read of an
 * older file is). A read-only store reads beats and never writes one; a file that lost the table (edited by
 * hand) lists no beats rather than failing, so a health page still renders.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase } from './native.js';
import { SCHEMA_VERSION } from './schema.js';
import { createSqliteMemoryStore, type SqliteMemoryStore } from './sqlite-store.js';

let dir: string;
const open: SqliteMemoryStore[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'engram-v18-'));
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

function hasBeatTable(path: string): boolean {
  const raw = openDatabase(path, { loadVectorExtension: false, readonly: true });
  try {
    return (
      raw
        .prepare("SELECT 1 AS x FROM sqlite_master WHERE type = 'table' AND name = 'process_beats'")
        .get() !== undefined
    );
  } finally {
    raw.close();
  }
}

/** Turns a file back into what schema 17 wrote: no `process_beats`. */
function backToV17(path: string): void {
  const raw = openDatabase(path, { loadVectorExtension: false });
  try {
    raw.exec('DROP TABLE process_beats');
    raw.prepare("UPDATE meta SET value = '17' WHERE key = 'schema_version'").run();
  } finally {
    raw.close();
  }
}

const SNAPSHOT = { schemaVersion: 1, agentId: null, agent: { tracked: false } };
const ID = 'f'.repeat(32);

describe('schema v17 → v18', () => {
  it('a v17 file read-only lists no beats and stays v17; opened for writing it gets the table', async () => {
    const path = join(dir, 'v17.db');
    const first = openStore(path);
    await first.insertMemory({ id: 'm1', agentId: 'a', kind: 'fact', content: 'The office opens at nine' });
    closeAll();
    backToV17(path);

    expect(() => openStore(path, 'read')).toThrow(
      expect.objectContaining({ code: 'ENGRAM_STORE_SCHEMA_TOO_OLD' }),
    );
    expect(hasBeatTable(path)).toBe(false);

    expect(SCHEMA_VERSION).toBe(20);
    const writer = openStore(path);
    expect(writer.info.schemaVersion).toBe(20);
    expect(hasBeatTable(path)).toBe(true);
    expect((await writer.getMemory('a', 'm1'))?.content).toBe('The office opens at nine');
    await writer.publishProcessBeat({ processId: ID, startedAt: 1, ttlMs: 60_000, snapshot: SNAPSHOT });

    // A read-only store on the migrated file reads the beat and refuses to remove it.
    const reader2 = openStore(path, 'read');
    expect((await reader2.listProcessBeats()).beats.map((b) => b.processId)).toEqual([ID]);
    await expect(reader2.removeProcessBeat(ID)).rejects.toMatchObject({ code: 'ENGRAM_STORE_READ_ONLY' });
    await expect(
      reader2.publishProcessBeat({ processId: ID, startedAt: 1, ttlMs: 1000, snapshot: SNAPSHOT }),
    ).rejects.toMatchObject({ code: 'ENGRAM_STORE_READ_ONLY' });
    closeAll();

    // The table dropped by hand, the version kept: the beats list is empty, not an error.
    const raw = openDatabase(path, { loadVectorExtension: false });
    raw.exec('DROP TABLE process_beats');
    raw.close();
    expect(await openStore(path, 'read').listProcessBeats()).toEqual({ beats: [], skipped: 0 });
  });
});
