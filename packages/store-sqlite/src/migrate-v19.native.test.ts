/**
 * Schema v18 → v19 (embedding claims): a file made by schema 18 opens for writing with the `embedding_claims`
 * table and its memories as they were (read-only, it is refused as too old and left as it was, as every read of
 * an older file is); its pending rows are then claimed by a store with `claimLeaseMs` and skipped by another.
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
  dir = mkdtempSync(join(tmpdir(), 'engram-v19-'));
});

afterEach(() => {
  for (const s of open.splice(0)) s.close();
  rmSync(dir, { recursive: true, force: true });
});

function openStore(
  path: string,
  options: { access?: 'read' | 'write'; claimLeaseMs?: number } = {},
): SqliteMemoryStore {
  const store = createSqliteMemoryStore({ path, embedding: { id: 'v19-test', dimensions: 4 }, ...options });
  open.push(store);
  return store;
}

function closeAll(): void {
  for (const s of open.splice(0)) s.close();
}

function hasClaimTable(path: string): boolean {
  const raw = openDatabase(path, { loadVectorExtension: false, readonly: true });
  try {
    return (
      raw
        .prepare("SELECT 1 AS x FROM sqlite_master WHERE type = 'table' AND name = 'embedding_claims'")
        .get() !== undefined
    );
  } finally {
    raw.close();
  }
}

/** Turns a file back into what schema 18 wrote: no `embedding_claims`. */
function backToV18(path: string): void {
  const raw = openDatabase(path, { loadVectorExtension: false });
  try {
    raw.exec('DROP TABLE embedding_claims');
    raw.prepare("UPDATE meta SET value = '18' WHERE key = 'schema_version'").run();
  } finally {
    raw.close();
  }
}

describe('schema v18 → v19', () => {
  it('a v18 file read-only stays v18; opened for writing it gets the claims table and its rows are claimed', async () => {
    const path = join(dir, 'v18.db');
    const first = openStore(path);
    await first.insertMemory({ id: 'm1', agentId: 'a', kind: 'fact', content: 'The office opens at nine' });
    await first.insertMemory({ id: 'm2', agentId: 'a', kind: 'fact', content: 'The office closes at six' });
    closeAll();
    backToV18(path);

    expect(() => openStore(path, { access: 'read' })).toThrow(
      expect.objectContaining({ code: 'ENGRAM_STORE_SCHEMA_TOO_OLD' }),
    );
    expect(hasClaimTable(path)).toBe(false);

    expect(SCHEMA_VERSION).toBe(20);
    const writer = openStore(path, { claimLeaseMs: 60_000 });
    expect(writer.info.schemaVersion).toBe(20);
    expect(hasClaimTable(path)).toBe(true);
    expect((await writer.getMemory('a', 'm1'))?.content).toBe('The office opens at nine');
    // The rows pending before the migration are claimed by one store and skipped by another.
    expect((await writer.listPendingEmbeddings({ limit: 1 })).map((r) => r.id)).toEqual(['m1']);
    const other = openStore(path, { claimLeaseMs: 60_000 });
    expect((await other.listPendingEmbeddings({ limit: 5 })).map((r) => r.id)).toEqual(['m2']);
    // A read-only store on the migrated file reads as before.
    expect((await openStore(path, { access: 'read' }).getMemory('a', 'm2'))?.embeddingState).toBe('pending');
  });
});
