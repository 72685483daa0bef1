/**
 * A file whose sqlite-vec chunk blob another tool rewrote, or whose rows break the schema's CHECKs: writes stay
 * allowed, the transaction that meets a damaged chunk is repaired and runs once (its results counted once), an
 * older file is still migrated, and a rebuild of the quantised index passes over the damaged chunk.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase } from './native.js';
import { SCHEMA_VERSION } from './schema.js';
import { createSqliteMemoryStore, type SqliteMemoryStore } from './sqlite-store.js';

const EMBEDDING = { id: 'chunks-test', dimensions: 4 };
let dir: string;
let n = 0;
const open: SqliteMemoryStore[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'engram-vec-chunks-'));
});

afterEach(() => {
  for (const s of open.splice(0)) s.close();
  rmSync(dir, { recursive: true, force: true });
});

function openStore(path: string, options: { claimLeaseMs?: number } = {}): SqliteMemoryStore {
  const store = createSqliteMemoryStore({ path, embedding: EMBEDDING, ...options });
  open.push(store);
  return store;
}

function closeAll(): void {
  for (const s of open.splice(0)) s.close();
}

/** Runs statements on the closed file, as another tool would. */
function damage(path: string, sql: string): void {
  const raw = openDatabase(path);
  try {
    raw.exec(sql);
  } finally {
    raw.close();
  }
}

/** A file with two embedded facts and one pending one; returns its path. */
async function fileWithVectors(): Promise<string> {
  n += 1;
  const path = join(dir, `f${n}.db`);
  const s = openStore(path);
  await s.insertMemory({ id: 'm1', agentId: 'a', kind: 'fact', content: 'The office opens at nine' });
  await s.insertMemory({ id: 'm2', agentId: 'a', kind: 'fact', content: 'The office closes at six' });
  const pending = await s.listPendingEmbeddings({ limit: 10 });
  await s.commitEmbeddings(
    pending.map((p) => ({
      id: p.id,
      revision: p.revision,
      state: 'ready',
      vector: new Float32Array([1, 0, 0, 0]),
    })),
  );
  await s.insertMemory({ id: 'm3', agentId: 'a', kind: 'fact', content: 'The lift is out of order' });
  closeAll();
  return path;
}

const DAMAGED_CHUNK = `UPDATE memories_vec_vector_chunks00 SET vectors = x'0102'`;

describe('a damaged vector chunk', () => {
  it('is counted by the integrity check, and a commit that meets it counts its outcomes once', async () => {
    const path = await fileWithVectors();
    damage(path, DAMAGED_CHUNK);
    const s = openStore(path);
    expect(s.integrity).toMatchObject({ state: 'failed', damagedVectorChunks: 1 });
    const pending = await s.listPendingEmbeddings({ limit: 10 });
    expect(pending.map((p) => p.id)).toEqual(['m3']);
    const result = await s.commitEmbeddings(
      pending.map((p) => ({
        id: p.id,
        revision: p.revision,
        state: 'ready',
        vector: new Float32Array([0, 1, 0, 0]),
      })),
    );
    expect(result).toEqual({ ready: 1, error: 0, ftsOnly: 0, stale: 0 });
    // The repair dropped the damaged chunk's vectors: their memories wait for the drain again.
    expect((await s.listPendingEmbeddings({ limit: 10 })).map((p) => p.id).sort()).toEqual(['m1', 'm2']);
    expect(s.integrity.state).toBe('ok');
    expect(
      await s.appendEvents('a', 's1', [{ seq: 1, type: 'message', role: 'user', content: 'hi' }]),
    ).toEqual({
      appended: 1,
      skipped: 0,
      lastSeq: 1,
    });
  });

  it('leaves a rebuild of the quantised index to pass over it', async () => {
    const path = await fileWithVectors();
    damage(path, DAMAGED_CHUNK);
    const s = openStore(path);
    expect(await s.resetVectorIndex({ quantization: 'int8' })).toEqual({ indexed: 0 });
    expect(await s.deleteMemory('a', 'm1')).toBe(true);
    expect(s.integrity.state).toBe('ok');
  });
});

describe('an older file with rows no reader can use', () => {
  it('is still migrated, and writes to it', async () => {
    const path = await fileWithVectors();
    damage(
      path,
      `DROP TABLE embedding_claims; UPDATE meta SET value = '18' WHERE key = 'schema_version';
       PRAGMA ignore_check_constraints = ON; UPDATE memories SET kind = 'bogus' WHERE id = 'm2';`,
    );
    const s = openStore(path, { claimLeaseMs: 60_000 });
    expect(s.info.schemaVersion).toBe(SCHEMA_VERSION);
    expect(s.integrity).toMatchObject({ state: 'failed', badRows: 1 });
    await s.insertMemory({ id: 'm4', agentId: 'a', kind: 'fact', content: 'The canteen serves soup' });
    expect((await s.listPendingEmbeddings({ limit: 10 })).map((p) => p.id)).toEqual(['m3', 'm4']);
    expect(await s.deleteMemory('a', 'm2')).toBe(true);
  });
});
