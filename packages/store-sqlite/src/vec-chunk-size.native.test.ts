/**
 * The vector table's vec0 `chunk_size` follows the vector's width (`vec0ChunkSize`): a file made before keeps the
 * table it was created with (vec0's default of 1,024 vectors a chunk), and both find neighbours at the same
 * distances, the same ones except among equally distant vectors that straddle the k-th place; a new
 * file holds many small agents in a fraction of the space the default preallocated.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NewMemory, VectorHit } from '@engram/store/port-kit';
import { mulberry32 } from '@engram/test-support/prng';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase } from './native.js';
import { VEC0_CHUNK_BYTES, VEC0_DEFAULT_CHUNK_SIZE, vec0ChunkSize } from './schema.js';
import { createSqliteMemoryStore, type SqliteMemoryStore } from './sqlite-store.js';

let dir: string;
const open: SqliteMemoryStore[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'engram-vec-chunk-'));
});

afterEach(() => {
  for (const s of open.splice(0)) s.close();
  rmSync(dir, { recursive: true, force: true });
});

function openStore(path: string, dimensions: number): SqliteMemoryStore {
  const store = createSqliteMemoryStore({
    path,
    embedding: { id: `p${dimensions}`, dimensions },
    vectorWorker: false,
  });
  open.push(store);
  return store;
}

/** The vector table's DDL and the sizes of its chunks, read on a connection of its own. */
function vecTable(path: string): { sql: string; sizes: number[] } {
  const db = openDatabase(path);
  try {
    const sql = (
      db.prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'memories_vec'").get() as {
        sql: string;
      }
    ).sql;
    const sizes = (
      db.prepare('SELECT DISTINCT size FROM memories_vec_chunks').all() as { size: number }[]
    ).map((r) => r.size);
    return { sql, sizes };
  } finally {
    db.close();
  }
}

describe('vec0 chunk size', () => {
  it('is the largest power of two up to 1,024 whose chunk fits the byte budget', () => {
    expect(vec0ChunkSize(128 * 4)).toBe(1024);
    expect(vec0ChunkSize(384 * 4)).toBe(512);
    expect(vec0ChunkSize(768 * 4)).toBe(256);
    expect(vec0ChunkSize(1536 * 4)).toBe(128);
    expect(vec0ChunkSize(3072 * 4)).toBe(64);
    // Past the budget at 8 vectors it stays 8 (vec0 needs a multiple of 8).
    expect(vec0ChunkSize(VEC0_CHUNK_BYTES)).toBe(8);
    for (const bytes of [4, 100, 1536, 6144, 40_000]) {
      const size = vec0ChunkSize(bytes);
      expect(size % 8).toBe(0);
      expect(size <= VEC0_DEFAULT_CHUNK_SIZE).toBe(true);
      expect(size === 8 || size * bytes <= VEC0_CHUNK_BYTES).toBe(true);
    }
  });

  it("a file whose table has vec0's default chunk size keeps it and finds neighbours at the same distances as a new file", async () => {
    // 384-d: new files get 512-vector chunks. 1,400 rows in agent a span three of them (two of the old size).
    const DIMS = 384;
    const random = mulberry32(11);
    const unit = (): Float32Array => {
      const v = Float32Array.from({ length: DIMS }, () => random() - 0.5);
      const norm = Math.hypot(...v);
      return v.map((x) => x / norm);
    };
    // 40 distinct vectors, each stored about 35 times: every k-NN ends inside a group of equal distances.
    const bases = Array.from({ length: 40 }, unit);
    const rows = (from: number, to: number, agentId: string): NewMemory[] =>
      Array.from({ length: to - from }, (_, j) => {
        const i = from + j;
        // Ids out of insertion order, so the id tie-break differs from the storage order.
        return {
          id: `${agentId}-${String((i * 7919) % 10_007).padStart(5, '0')}`,
          agentId,
          kind: i % 3 === 0 ? 'fact' : 'event',
          content: `memory ${agentId} ${i}`,
          importance: 0.5,
          vector: bases[(i * 13) % bases.length] as Float32Array,
        };
      });
    const oldPath = join(dir, 'old.db');
    const newPath = join(dir, 'new.db');
    // The old file: its vector table recreated as Engram created it before the chunk size was chosen.
    openStore(oldPath, DIMS).close();
    const db = openDatabase(oldPath);
    db.exec('DROP TABLE memories_vec');
    db.exec(
      `CREATE VIRTUAL TABLE memories_vec USING vec0(agent_id text partition key, embedding float[${DIMS}] distance_metric=cosine)`,
    );
    // A file of that time is of an older schema: the migration to the user key (v15) keeps its chunk size.
    db.prepare("UPDATE meta SET value = '14' WHERE key = 'schema_version'").run();
    db.close();
    const stores = [openStore(oldPath, DIMS), openStore(newPath, DIMS)];
    for (const store of stores) {
      await store.insertMemories(rows(0, 1200, 'a'));
      await store.insertMemories(rows(0, 30, 'b'));
      // Deletions free slots inside chunks; later inserts land after them in each layout.
      for (let i = 0; i < 1200; i += 7) await store.deleteMemory('a', rows(i, i + 1, 'a')[0]?.id as string);
      await store.insertMemories(rows(1200, 1400, 'a'));
    }
    expect(vecTable(oldPath).sql).not.toContain('chunk_size');
    expect(vecTable(oldPath).sizes).toEqual([1024]);
    expect(vecTable(newPath).sql).toContain('chunk_size=512');
    expect(vecTable(newPath).sizes).toEqual([512]);

    // The same queries for both: six stored vectors (each tied with its copies) and two others.
    const queries = [...bases.slice(0, 6), unit(), unit()];
    const answers = async (store: SqliteMemoryStore): Promise<VectorHit[][]> => {
      const out: VectorHit[][] = [];
      for (const [qi, vector] of queries.entries()) {
        for (const k of [1, 10, 33, 100]) {
          out.push([...(await store.searchVector({ agentId: 'a', vector, k }))]);
        }
        out.push([...(await store.searchVector({ agentId: 'a', vector, k: 20, kinds: ['fact'] }))]);
        out.push([...(await store.searchVector({ agentId: qi % 2 === 0 ? 'b' : 'a', vector, k: 5 }))]);
      }
      return out;
    };
    const oldHits = await answers(stores[0] as SqliteMemoryStore);
    const newHits = await answers(stores[1] as SqliteMemoryStore);
    // The same distances at every place, and the same ids wherever a place is not inside a group of equal
    // distances that the k-th place cuts: which of several equally distant vectors straddling the cut vec0 keeps
    // depends on its chunk layout (as it did before the chunk size was chosen), and each answer is ordered by
    // distance, then id.
    expect(newHits.map((hits) => hits.map((h) => h.distance))).toEqual(
      oldHits.map((hits) => hits.map((h) => h.distance)),
    );
    const beforeCut = (hits: VectorHit[]): string[] => {
      const last = hits[hits.length - 1]?.distance;
      return hits.filter((h) => h.distance !== last).map((h) => h.id);
    };
    expect(newHits.map(beforeCut)).toEqual(oldHits.map(beforeCut));
    for (const hits of [...oldHits, ...newHits]) {
      for (let i = 1; i < hits.length; i += 1) {
        const a = hits[i - 1] as VectorHit;
        const b = hits[i] as VectorHit;
        expect(a.distance < b.distance || (a.distance === b.distance && a.id < b.id)).toBe(true);
      }
    }
    // The ties are real: some k-NN ends inside a group of equal distances, ordered by id.
    const k33 = newHits[2] as VectorHit[];
    expect(k33).toHaveLength(33);
    expect(new Set(k33.map((h) => h.distance)).size).toBeLessThan(k33.length);

    // Reopening the old file does not rebuild its table; recreating it (a reset) gives it the new size.
    (stores[0] as SqliteMemoryStore).close();
    const reopened = openStore(oldPath, DIMS);
    expect(vecTable(oldPath).sql).not.toContain('chunk_size');
    await reopened.resetEmbeddings({ id: `p${DIMS}`, dimensions: DIMS });
    expect(vecTable(oldPath).sql).toContain('chunk_size=512');
  });

  it('keeps 40 small agents at 1,536-d to about 1 MiB of vector chunks each', async () => {
    // With vec0's default (1,024 vectors a chunk, 6 MiB at 1,536-d) the first vector of each agent allocated a
    // whole chunk: 40 agents of 2 memories made a file of over 240 MiB. With 128-vector chunks each agent costs
    // 768 KiB, and the file stays under 40 MiB.
    const DIMS = 1536;
    const path = join(dir, 'small-agents.db');
    const store = openStore(path, DIMS);
    const random = mulberry32(5);
    for (let a = 0; a < 40; a += 1) {
      await store.insertMemories(
        [0, 1].map((j) => ({
          id: `m${a}-${j}`,
          agentId: `agent-${a}`,
          kind: 'event' as const,
          content: `agent ${a} memory ${j}`,
          importance: 0.5,
          vector: Float32Array.from({ length: DIMS }, () => random() - 0.5),
        })),
      );
    }
    store.close();
    const db = openDatabase(path);
    try {
      const pages = (db.prepare('PRAGMA page_count').get() as { page_count: number }).page_count;
      const pageSize = (db.prepare('PRAGMA page_size').get() as { page_size: number }).page_size;
      expect(pages * pageSize).toBeLessThan(40 * 1024 * 1024);
      // The old default's chunks alone would be six times that bound: 40 × 1,024 × 6 KiB = 240 MiB.
      expect(40 * VEC0_DEFAULT_CHUNK_SIZE * DIMS * 4).toBe(6 * 40 * 1024 * 1024);
      expect(db.prepare('SELECT count(*) AS n FROM memories_vec_chunks').get()).toEqual({ n: 40 });
    } finally {
      db.close();
    }
  });
});
