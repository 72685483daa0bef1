/**
 * The k-NN planner of a quantised store (`chooseKnnPlan`): a search whose coarse pass would be as wide as the
 * agent's partition (or wider than the float scan is slow) runs the exact float scan instead, and answers what a
 * store without quantisation answers, id for id, in order, with the same similarities; a narrow search still
 * takes the coarse pass. Both plans run on the vector worker's connection too, with the same answers as on the
 * store's own.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mulberry32 } from '@engram/test-support/prng';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { SqliteDriver } from './native.js';
import { exactPlanBound } from './sqlite/vector-quant.js';
import {
  createSqliteMemoryStore,
  type SqliteMemoryStore,
  type VectorQuantization,
  vectorWorkerProbe,
} from './sqlite-store.js';

const DIMS = 384;
const ROWS = 600;
const PROFILE = { id: 'clustered', dimensions: DIMS };
let dir: string;
const open: SqliteMemoryStore[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'engram-plan-'));
});

afterEach(() => {
  for (const s of open.splice(0)) s.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Unit vectors around 8 centres (as text embeddings cluster by topic), deterministic. */
function clustered(count: number, seed: number): Float32Array[] {
  const random = mulberry32(seed);
  const gauss = (): number => Math.sqrt(-2 * Math.log(random() + 1e-12)) * Math.cos(2 * Math.PI * random());
  const centres = Array.from({ length: 8 }, () => Float32Array.from({ length: DIMS }, gauss));
  return Array.from({ length: count }, () => {
    const c = centres[Math.floor(random() * centres.length)] as Float32Array;
    const v = Float32Array.from({ length: DIMS }, (_, i) => (c[i] as number) + 0.7 * gauss());
    const norm = Math.hypot(...v);
    return v.map((x) => x / norm);
  });
}

/** Calls of the SQL function `vec_distance_cosine`: the coarse pass's rescoring (vec0's own k-NN never calls it). */
let distances = 0;

/** better-sqlite3 with a counting `vec_distance_cosine` (registered after sqlite-vec, so it wins). */
class CountingDatabase extends Database {
  override loadExtension(path: string): this {
    super.loadExtension(path);
    this.function('vec_distance_cosine', { deterministic: true }, (a: unknown, b: unknown) => {
      distances += 1;
      const x = new Float32Array(new Uint8Array(a as Buffer).buffer);
      const y = new Float32Array(new Uint8Array(b as Buffer).buffer);
      let dot = 0;
      let nx = 0;
      let ny = 0;
      for (let i = 0; i < x.length; i += 1) {
        dot += (x[i] as number) * (y[i] as number);
        nx += (x[i] as number) ** 2;
        ny += (y[i] as number) ** 2;
      }
      return 1 - dot / Math.sqrt(nx * ny);
    });
    return this;
  }
}

const VECTORS = clustered(ROWS, 5);
const QUERIES = clustered(12, 77);

async function storeWith(
  name: string,
  quantization: VectorQuantization,
  vectorWorker = false,
  counting = false,
): Promise<SqliteMemoryStore> {
  const store = createSqliteMemoryStore({
    path: join(dir, `${name}.db`),
    embedding: PROFILE,
    vectorWorker,
    vectorIndex: { quantization },
    ...(counting ? { driver: CountingDatabase as unknown as SqliteDriver } : {}),
  });
  open.push(store);
  await store.insertMemories(
    VECTORS.map((vector, i) => ({
      id: `m${i}`,
      agentId: 'a',
      kind: 'fact' as const,
      content: `n ${i}`,
      vector,
    })),
  );
  // Another agent at the same places: never part of agent a's answers.
  await store.insertMemories(
    VECTORS.slice(0, 100).map((vector, i) => ({
      id: `b${i}`,
      agentId: 'b',
      kind: 'fact' as const,
      content: `o ${i}`,
      vector,
    })),
  );
  return store;
}

describe('quantised store: the k-NN plan per search', () => {
  it('a search whose candidates cover the agent answers as the exact store does (ids in order, similarities)', async () => {
    const exact = await storeWith('exact', 'none');
    // The agent's 600 vectors sit in two 512-vector float chunks: at most 1,024, under both plans' bounds.
    expect(exactPlanBound({ quantization: 'bit', dimensions: DIMS, kk: 10, kq: 160 })).toBeGreaterThan(1024);
    for (const quantization of ['bit', 'int8'] as const) {
      const store = await storeWith(quantization, quantization);
      for (const [i, vector] of QUERIES.entries()) {
        const k = i % 2 === 0 ? 10 : 40;
        const want = await exact.searchVector({ agentId: 'a', vector, k });
        const got = await store.searchVector({ agentId: 'a', vector, k });
        expect(got.map((h) => h.id)).toEqual(want.map((h) => h.id));
        expect(got.map((h) => h.similarity)).toEqual(want.map((h) => h.similarity));
        // Filtered searches plan the same way and answer the same.
        const filtered = { agentId: 'a', vector, k, kinds: ['fact' as const] };
        expect((await store.searchVector(filtered)).map((h) => h.id)).toEqual(
          (await exact.searchVector(filtered)).map((h) => h.id),
        );
      }
    }
  });

  it('a narrow search over the same partition still takes the coarse pass', async () => {
    // k = 1 with bit: 16 candidates, a bound far under the partition: the coarse pass, approximate (these
    // queries sit between clusters, where the sign bits say little), with the exact similarity of what it finds.
    expect(exactPlanBound({ quantization: 'bit', dimensions: DIMS, kk: 1, kq: 16 })).toBeLessThan(ROWS);
    const exact = await storeWith('exact', 'none');
    const store = await storeWith('bit', 'bit', false, true);
    let same = 0;
    for (const vector of QUERIES) {
      const [want] = await exact.searchVector({ agentId: 'a', vector, k: 1 });
      distances = 0;
      const [got] = await store.searchVector({ agentId: 'a', vector, k: 1 });
      // The coarse pass ran: its 16 candidates (k × rescore), and only they, were rescored.
      expect(distances).toBe(16);
      const row = VECTORS[Number(got?.id.slice(1))] as Float32Array;
      let dot = 0;
      for (let i = 0; i < DIMS; i += 1) dot += (row[i] as number) * (vector[i] as number);
      expect(got?.similarity).toBeCloseTo(dot, 5);
      if (got?.id === want?.id) same += 1;
    }
    // The exact scan would have found every one: the coarse pass found most.
    expect(same).toBeLessThan(QUERIES.length);
    expect(same).toBeGreaterThanOrEqual(QUERIES.length / 3);
  });

  it('the vector worker runs both plans with the same answers as the store connection', async () => {
    const here = await storeWith('bit', 'bit');
    const offloaded = createSqliteMemoryStore({
      path: join(dir, 'bit.db'),
      embedding: PROFILE,
      vectorWorker: true,
    });
    open.push(offloaded);
    const probe = vectorWorkerProbe(offloaded);
    probe?.setMinScanBytes(0);
    for (let i = 0; i < 500 && vectorWorkerProbe(offloaded)?.state !== 'ready'; i += 1) {
      await offloaded.searchVector({ agentId: 'a', vector: QUERIES[0] as Float32Array, k: 1 });
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(vectorWorkerProbe(offloaded)?.state).toBe('ready');
    const before = vectorWorkerProbe(offloaded)?.answered ?? 0;
    for (const vector of QUERIES) {
      for (const k of [1, 40]) {
        expect(await offloaded.searchVector({ agentId: 'a', vector, k })).toStrictEqual(
          await here.searchVector({ agentId: 'a', vector, k }),
        );
      }
    }
    expect((vectorWorkerProbe(offloaded)?.answered ?? 0) - before).toBe(QUERIES.length * 2);
    expect(vectorWorkerProbe(offloaded)?.fallbacks).toBe(0);
  });
});
