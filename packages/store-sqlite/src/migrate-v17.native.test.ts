/**
 * Schema v16 → v17 (a failed embedding keeps its error code and time): a file made by schema 16, whose failed
 * rows kept no code, opens with those rows listed as failed, code `unknown` and no time, and every other row as
 * it was; a failure committed after the migration keeps the embedder's code and when it failed.
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
  dir = mkdtempSync(join(tmpdir(), 'engram-v17-'));
});

afterEach(() => {
  for (const s of open.splice(0)) s.close();
  rmSync(dir, { recursive: true, force: true });
});

function openStore(path: string): SqliteMemoryStore {
  const store = createSqliteMemoryStore({ path, embedding: { id: 'test-4', dimensions: 4 } });
  open.push(store);
  return store;
}

function closeAll(): void {
  for (const s of open.splice(0)) s.close();
}

/** Turns a file back into what schema 16 wrote: `memories` without the error columns and their index. */
function backToV16(path: string): void {
  const raw = openDatabase(path, { loadVectorExtension: false });
  try {
    raw.exec('DROP INDEX memories_embedding_failed');
    raw.exec('ALTER TABLE memories DROP COLUMN embedding_error');
    raw.exec('ALTER TABLE memories DROP COLUMN embedding_failed_at');
    raw.prepare("UPDATE meta SET value = '16' WHERE key = 'schema_version'").run();
  } finally {
    raw.close();
  }
}

describe('schema v17: failed embeddings keep their error code', () => {
  it('lists the failures a schema-16 file recorded as unknown, and keeps the code of later ones', async () => {
    expect(SCHEMA_VERSION).toBe(20);
    const path = join(dir, 'memory.db');
    const first = openStore(path);
    await first.insertMemories([
      { id: 'old-fail', agentId: 'a', kind: 'fact', content: 'failed under schema 16' },
      {
        id: 'ready',
        agentId: 'a',
        kind: 'fact',
        content: 'embedded',
        vector: new Float32Array([1, 0, 0, 0]),
      },
      { id: 'later', agentId: 'a', kind: 'fact', content: 'fails after the migration' },
    ]);
    await first.commitEmbeddings([{ id: 'old-fail', revision: 1, state: 'error' }]);
    closeAll();
    backToV16(path);

    const store = openStore(path);
    expect(store.info.schemaVersion).toBe(20);
    expect(await store.listFailedEmbeddings('a')).toEqual([
      { id: 'old-fail', agentId: 'a', userId: null, errorCode: 'unknown', attempts: 1, failedAt: null },
    ]);
    expect((await store.getMemory('a', 'ready'))?.embeddingState).toBe('ready');
    await store.commitEmbeddings([
      { id: 'later', revision: 1, state: 'error', code: 'ENGRAM_PROVIDER_TIMEOUT' },
    ]);
    const failed = await store.listFailedEmbeddings('a');
    expect(failed.map((f) => [f.id, f.errorCode])).toEqual([
      ['later', 'ENGRAM_PROVIDER_TIMEOUT'],
      ['old-fail', 'unknown'],
    ]);
    expect(typeof failed[0]?.failedAt).toBe('number');
  });
});
