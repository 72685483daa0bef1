/**
 * Opt-in quantised vector search (`vectorIndex: { quantization: 'int8' | 'bit' }`): the coarse k-NN on the
 * quantised copies rescored by exact float distances finds the exact top 10 on clustered vectors, with the same
 * similarities; the setting is recorded (another one is a vector index mismatch, `resetVectorIndex` changes it);
 * a schema-7 file migrates and gets its quantised index from its stored float vectors; every write, delete,
 * chunk, prune and repair keeps the quantised table in step with the float one.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CHUNK_BUDGET } from '@engram/store/port-kit';
import { mulberry32 } from '@engram/test-support/prng';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase } from './native.js';
import { SCHEMA_VERSION } from './schema.js';
import { knnPlanTestHook } from './sqlite/vector-quant.js';
import { createSqliteMemoryStore, type SqliteMemoryStore, type VectorQuantization } from './sqlite-store.js';

const DIMS = 256;
const PROFILE = { id: 'clustered', dimensions: DIMS };
let dir: string;
const open: SqliteMemoryStore[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'engram-quant-'));
});

afterEach(() => {
  knnPlanTestHook.forced = null;
  for (const s of open.splice(0)) s.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Unit vectors around 12 centres (as text embeddings cluster by topic), deterministic. */
function clustered(count: number, seed: number): Float32Array[] {
  const random = mulberry32(seed);
  const gauss = (): number => Math.sqrt(-2 * Math.log(random() + 1e-12)) * Math.cos(2 * Math.PI * random());
  const centres = Array.from({ length: 12 }, () => Float32Array.from({ length: DIMS }, gauss));
  const centreRandom = mulberry32(seed ^ 0x5bd1);
  return Array.from({ length: count }, () => {
    const c = centres[Math.floor(centreRandom() * centres.length)] as Float32Array;
    const v = Float32Array.from({ length: DIMS }, (_, i) => (c[i] as number) + 0.6 * gauss());
    const norm = Math.hypot(...v);
    return v.map((x) => x / norm);
  });
}

const ROWS = clustered(1000, 7);

/** Queries near stored memories (a question about something remembered): a row plus a little noise. */
function nearRows(count: number, seed: number): Float32Array[] {
  const random = mulberry32(seed);
  const gauss = (): number => Math.sqrt(-2 * Math.log(random() + 1e-12)) * Math.cos(2 * Math.PI * random());
  return Array.from({ length: count }, () => {
    const base = ROWS[Math.floor(random() * ROWS.length)] as Float32Array;
    const v = base.map((x) => x + (0.5 * gauss()) / Math.sqrt(DIMS));
    const norm = Math.hypot(...v);
    return v.map((x) => x / norm);
  });
}

const QUERIES = nearRows(40, 99);

function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i += 1) {
    dot += (a[i] as number) * (b[i] as number);
    na += (a[i] as number) ** 2;
    nb += (b[i] as number) ** 2;
  }
  return dot / Math.sqrt(na * nb);
}

/** The exact top k by brute force: ids and similarities. */
function exactTop(query: Float32Array, k: number): { id: string; similarity: number }[] {
  return ROWS.map((v, i) => ({ id: `m${i}`, similarity: cosine(query, v) }))
    .sort((a, b) => b.similarity - a.similarity)
    .slice(0, k);
}

function openStore(path: string, quantization?: VectorQuantization, rescore?: number): SqliteMemoryStore {
  const store = createSqliteMemoryStore({
    path,
    embedding: PROFILE,
    ...(quantization === undefined
      ? {}
      : { vectorIndex: { quantization, ...(rescore === undefined ? {} : { rescore }) } }),
  });
  open.push(store);
  return store;
}

function closeAll(): void {
  for (const s of open.splice(0)) s.close();
}

async function fill(store: SqliteMemoryStore): Promise<void> {
  await store.insertMemories(
    ROWS.map((vector, i) => ({
      id: `m${i}`,
      agentId: 'a',
      kind: 'fact' as const,
      content: `note ${i}`,
      vector,
    })),
  );
  // Another agent's rows sit at the same places: they must never be found for agent a.
  await store.insertMemories(
    ROWS.slice(0, 50).map((vector, i) => ({
      id: `b${i}`,
      agentId: 'b',
      kind: 'fact' as const,
      content: `other ${i}`,
      vector,
    })),
  );
}

/** Mean Recall@10 of the store's vector arm against the exact top 10; checks the similarities on the way. */
async function recallAt10(store: SqliteMemoryStore): Promise<number> {
  let found = 0;
  for (const q of QUERIES) {
    const exact = exactTop(q, 10);
    const hits = await store.searchVector({ agentId: 'a', vector: q, k: 10 });
    expect(hits).toHaveLength(10);
    const bySim = new Map(exact.map((e) => [e.id, e.similarity]));
    for (const h of hits) {
      expect(h.id.startsWith('m')).toBe(true);
      // The same similarity scale as the exact arm: 1 − the exact cosine distance of the float vectors.
      expect(h.similarity).toBeCloseTo(cosine(q, ROWS[Number(h.id.slice(1))] as Float32Array), 5);
      if (bySim.has(h.id)) found += 1;
    }
  }
  return found / (QUERIES.length * 10);
}

/** The rowids of the float table and of the quantised table (both sorted). */
function tables(path: string): { float: number[]; quant: number[] } {
  const db = openDatabase(path);
  try {
    const ids = (sql: string): number[] =>
      (db.prepare(sql).all() as { rowid: number }[]).map((r) => Number(r.rowid)).sort((a, b) => a - b);
    return {
      float: ids('SELECT rowid FROM memories_vec'),
      quant: ids('SELECT rowid FROM memories_vec_quant'),
    };
  } finally {
    db.close();
  }
}

describe('quantised vector search', () => {
  it.each([
    ['int8', 0.99],
    ['bit', 0.99],
  ] as const)('%s: finds the exact top 10 with the exact similarities', async (quantization, floor) => {
    const path = join(dir, `${quantization}.db`);
    const store = openStore(path, quantization);
    await fill(store);
    expect(store.vectorIndex.quantization).toBe(quantization);
    // At 1,000 vectors of 256-d the planner would scan exactly; the coarse pass (its SQL for this kind) is what
    // is tested here, so it is forced, and counted.
    knnPlanTestHook.forced = 'quantised';
    const coarse = knnPlanTestHook.quantised;
    expect(await recallAt10(store)).toBeGreaterThanOrEqual(floor);
    expect(knnPlanTestHook.quantised - coarse).toBe(QUERIES.length);
    // A filtered search, forced the same way, goes through the same coarse pass and rescoring.
    const tagged = await store.searchVector({
      agentId: 'a',
      vector: QUERIES[0] as Float32Array,
      k: 5,
      kinds: ['fact'],
    });
    expect(tagged.map((h) => h.id)).toEqual(exactTop(QUERIES[0] as Float32Array, 5).map((e) => e.id));
    expect(knnPlanTestHook.quantised - coarse).toBe(QUERIES.length + 1);
    closeAll();
    const t = tables(path);
    expect(t.quant).toEqual(t.float);
    expect(t.float).toHaveLength(1050);
  });

  it('a rescoring factor of 1 (no oversampling) loses neighbours that the default finds', async () => {
    const narrow = openStore(join(dir, 'narrow.db'), 'bit', 1);
    await fill(narrow);
    const wide = openStore(join(dir, 'wide.db'), 'bit');
    await fill(wide);
    expect(wide.vectorIndex.rescore).toBe(16);
    // Both through the coarse pass (the planner would scan exactly for the wide one at this size).
    knnPlanTestHook.forced = 'quantised';
    expect(await recallAt10(narrow)).toBeLessThan(await recallAt10(wide));
  });

  it('records the setting: another one is a vector index mismatch, resetVectorIndex changes it', async () => {
    const path = join(dir, 'fp.db');
    await fill(openStore(path, 'int8'));
    closeAll();
    // Omitted: the recorded setting is adopted.
    expect(openStore(path).vectorIndex).toEqual({ quantization: 'int8', rescore: 8 });
    closeAll();
    // Its own code, not the embedder's FINGERPRINT_MISMATCH: the recovery differs (the message names both kinds).
    for (const other of ['bit', 'none'] as const) {
      expect(() => openStore(path, other)).toThrow(
        expect.objectContaining({
          code: 'ENGRAM_STORE_VECTOR_INDEX_MISMATCH',
          message: expect.stringContaining(`quantization is 'int8', not the '${other}' asked for`),
        }),
      );
    }
    expect(() =>
      createSqliteMemoryStore({ path, access: 'read', vectorIndex: { quantization: 'bit' } }),
    ).toThrow(expect.objectContaining({ code: 'ENGRAM_STORE_VECTOR_INDEX_MISMATCH' }));
    // The explicit change: rebuilt from the stored float vectors, nothing re-embedded.
    const store = openStore(path);
    expect(await store.resetVectorIndex({ quantization: 'bit' })).toEqual({ indexed: 1050 });
    expect(store.vectorIndex).toEqual({ quantization: 'bit', rescore: 16 });
    expect(await store.countEmbeddingBacklog()).toEqual({ total: 0, byAgent: {} });
    expect(await recallAt10(store)).toBeGreaterThanOrEqual(0.99);
    closeAll();
    expect(openStore(path, 'bit').vectorIndex.quantization).toBe('bit');
    closeAll();
    // Back to the exact scan: the quantised table is gone.
    const exact = openStore(path);
    expect(await exact.resetVectorIndex({ quantization: 'none' })).toEqual({ indexed: 0 });
    expect(await recallAt10(exact)).toBe(1);
    closeAll();
    expect(() => tables(path)).toThrow(/no such table/);
  });

  it('refuses bad options with a typed error and changes nothing', async () => {
    const path = join(dir, 'bad.db');
    expect(() =>
      createSqliteMemoryStore({ path, vectorIndex: { quantization: 'pq' as VectorQuantization } }),
    ).toThrow(expect.objectContaining({ code: 'ENGRAM_STORE_INVALID_INPUT' }));
    expect(() => createSqliteMemoryStore({ path, vectorIndex: { rescore: 0 } })).toThrow(
      expect.objectContaining({ code: 'ENGRAM_STORE_INVALID_INPUT' }),
    );
    const store = openStore(path, 'int8');
    await expect(store.resetVectorIndex({ rescore: 1000 })).rejects.toMatchObject({
      code: 'ENGRAM_STORE_INVALID_INPUT',
    });
    expect(store.vectorIndex).toEqual({ quantization: 'int8', rescore: 8 });
  });

  it('migrates a schema-7 file and builds the quantised index from its stored float vectors', async () => {
    const path = join(dir, 'v7.db');
    await fill(openStore(path));
    closeAll();
    // What main's schema 7 wrote: no vector index setting, no quantised table, version 7.
    const raw = openDatabase(path);
    try {
      raw.exec('DROP TABLE IF EXISTS memories_vec_quant');
      raw.prepare("DELETE FROM meta WHERE key = 'vector_index'").run();
      raw.prepare("UPDATE meta SET value = '7' WHERE key = 'schema_version'").run();
    } finally {
      raw.close();
    }
    const store = openStore(path, 'bit');
    expect(SCHEMA_VERSION).toBe(20);
    expect(store.info.schemaVersion).toBe(20);
    expect(store.vectorIndex.quantization).toBe('bit');
    expect(await recallAt10(store)).toBeGreaterThanOrEqual(0.99);
    closeAll();
    const t = tables(path);
    expect(t.quant).toEqual(t.float);
    expect(t.quant).toHaveLength(1050);
  });

  it('keeps the quantised table in step: update, delete, supersede, chunks, forget, reset', async () => {
    const path = join(dir, 'step.db');
    const store = openStore(path, 'int8');
    await fill(store);
    const m1 = await store.getMemory('a', 'm1');
    await store.updateMemory('a', 'm1', m1?.revision ?? 0, { content: 'changed text, vector dropped' });
    expect(await store.deleteMemory('a', 'm2')).toBe(true);
    const m3 = await store.getMemory('a', 'm3');
    await store.supersedeMemory('a', 'm3', m3?.revision ?? 0, {
      id: 'm3b',
      agentId: 'a',
      kind: 'fact',
      content: 'the newer note',
      vector: ROWS[3] as Float32Array,
    });
    await store.forgetMemory('a', 'm4');
    // A chunked memory: one quantised vector per chunk.
    const long = await store.insertMemory({
      id: 'long',
      agentId: 'a',
      kind: 'fact',
      content: 'word '.repeat(CHUNK_BUDGET / 2),
    });
    const pending = await store.listPendingEmbeddings({ agentId: 'a', ids: ['long'], limit: 100 });
    expect(pending.length).toBeGreaterThan(1);
    await store.commitEmbeddings(
      pending.map((p, i) => ({
        id: p.id,
        revision: p.revision,
        state: 'ready' as const,
        vector: ROWS[10 + i] as Float32Array,
        ...(p.chunk === undefined ? {} : { chunk: p.chunk }),
      })),
    );
    const hit = await store.searchVector({ agentId: 'a', vector: ROWS[11] as Float32Array, k: 1 });
    expect(hit[0]?.id).toBe('long');
    expect(hit[0]?.chunk?.index).toBe(1);
    expect(long.id).toBe('long');
    await store.deleteAll('b');
    closeAll();
    const t = tables(path);
    expect(t.quant).toEqual(t.float);
    expect(t.float.length).toBe(1000 - 3 + 1 + pending.length);

    // Rebuilt from a float table with holes (deleted rows, another agent's partition emptied): the same keys,
    // the same float copies.
    const rebuilt = openStore(path);
    expect(await rebuilt.resetVectorIndex({ quantization: 'bit' })).toEqual({ indexed: t.float.length });
    const again1 = await rebuilt.searchVector({ agentId: 'a', vector: ROWS[11] as Float32Array, k: 1 });
    expect(again1[0]?.id).toBe('long');
    expect(again1[0]?.similarity).toBeCloseTo(1, 5);
    closeAll();
    expect(tables(path)).toEqual(t);

    // A profile change drops both tables' vectors; the quantised table is recreated empty with the float one.
    const again = openStore(path);
    await again.resetEmbeddings({ id: 'other', dimensions: 24 });
    closeAll();
    expect(tables(path)).toEqual({ float: [], quant: [] });
  });

  it('prune and repair cover the quantised table', async () => {
    const path = join(dir, 'repair.db');
    await fill(openStore(path, 'bit'));
    closeAll();
    const raw = openDatabase(path);
    try {
      // A quantised vector whose float vector is gone, and a float vector whose quantised copy is gone.
      raw.prepare('DELETE FROM memories_vec WHERE rowid = (SELECT rid FROM memories WHERE id = ?)').run('m5');
      raw
        .prepare('DELETE FROM memories_vec_quant WHERE rowid = (SELECT rid FROM memories WHERE id = ?)')
        .run('m6');
    } finally {
      raw.close();
    }
    const store = openStore(path);
    expect(await store.pruneOrphanedVectors('a')).toEqual({ pruned: 1 });
    // m5 lost its vector (reset to pending) and m6 gets its quantised copy back.
    expect(await store.repairEmbeddingIntegrity('a')).toEqual({ repaired: 2 });
    const hits = await store.searchVector({ agentId: 'a', vector: ROWS[6] as Float32Array, k: 1 });
    expect(hits[0]?.id).toBe('m6');
    closeAll();
    const t = tables(path);
    expect(t.quant).toEqual(t.float);
    expect(t.float).toHaveLength(1049);
  });
});
