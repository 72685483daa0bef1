/**
 * The work of a quantised vector search, counted (no clock): when the coarse pass runs, the exact float distance
 * is computed for its `k × rescore` candidates only, never for the rest of the agent's partition; when the
 * planner expects the exact float scan to be cheaper (`chooseKnnPlan`: a coarse pass as wide as the partition,
 * an `int8` index, a wide k), the exact scan runs and nothing is rescored. The count comes from the SQL function
 * itself: the test's driver replaces sqlite-vec's `vec_distance_cosine` with a counting copy after the extension
 * loads (the exact float k-NN of vec0 computes its distances inside the table and never calls it).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mulberry32 } from '@engram/test-support/prng';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { SqliteDriver } from './native.js';
import { chooseKnnPlan, exactPlanBound, knnPlanTestHook } from './sqlite/vector-quant.js';
import {
  createSqliteMemoryStore,
  type SqliteMemoryStore,
  type VectorQuantization,
  vectorWorkerProbe,
} from './sqlite-store.js';

// 1,536-d: where a narrow `bit` pass is cheaper than the exact scan (at 128-d the planner always scans exactly).
const DIMS = 1536;
const ROWS = 3000;
const OTHER_ROWS = 500;
let dir: string;
const open: SqliteMemoryStore[] = [];
let distances = 0;

function cosineDistance(a: Buffer, b: Buffer): number {
  const x = new Float32Array(new Uint8Array(a).buffer);
  const y = new Float32Array(new Uint8Array(b).buffer);
  let dot = 0;
  let nx = 0;
  let ny = 0;
  for (let i = 0; i < x.length; i += 1) {
    dot += (x[i] as number) * (y[i] as number);
    nx += (x[i] as number) ** 2;
    ny += (y[i] as number) ** 2;
  }
  return 1 - dot / Math.sqrt(nx * ny);
}

/** better-sqlite3 with a counting `vec_distance_cosine` (registered after sqlite-vec, so it wins). */
class CountingDatabase extends Database {
  override loadExtension(path: string): this {
    super.loadExtension(path);
    this.function('vec_distance_cosine', { deterministic: true }, (a: unknown, b: unknown) => {
      distances += 1;
      return cosineDistance(a as Buffer, b as Buffer);
    });
    return this;
  }
}

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'engram-quant-perf-'));
  distances = 0;
});

afterEach(() => {
  for (const s of open.splice(0)) s.close();
  rmSync(dir, { recursive: true, force: true });
});

function vectors(count: number, seed: number): Float32Array[] {
  const random = mulberry32(seed);
  return Array.from({ length: count }, () => Float32Array.from({ length: DIMS }, () => random() - 0.5));
}

async function storeWith(quantization: VectorQuantization, rescore?: number): Promise<SqliteMemoryStore> {
  const store = createSqliteMemoryStore({
    path: join(dir, `${quantization}-${rescore ?? 'default'}.db`),
    embedding: { id: 'counted', dimensions: DIMS },
    driver: CountingDatabase as unknown as SqliteDriver,
    vectorIndex: { quantization, ...(rescore === undefined ? {} : { rescore }) },
  });
  open.push(store);
  await store.insertMemories(
    vectors(ROWS, 3).map((vector, i) => ({
      id: `m${i}`,
      agentId: 'a',
      kind: 'fact' as const,
      content: `note ${i}`,
      vector,
    })),
  );
  // Another agent's partition: never scanned, never rescored.
  await store.insertMemories(
    vectors(OTHER_ROWS, 4).map((vector, i) => ({
      id: `b${i}`,
      agentId: 'b',
      kind: 'fact' as const,
      content: `note ${i}`,
      vector,
    })),
  );
  return store;
}

describe('quantised vector search: rescoring work', () => {
  it.each([
    ['bit', undefined, 16],
    ['bit', 4, 4],
  ] as const)(
    '%s (rescore %s): k × rescore exact distances per search, out of 3,000 rows',
    async (quantization, rescore, factor) => {
      const store = await storeWith(quantization, rescore);
      for (const [i, q] of vectors(5, 9).entries()) {
        const k = 5 + i * 5;
        distances = 0;
        const hits = await store.searchVector({ agentId: 'a', vector: q, k });
        expect(hits).toHaveLength(k);
        expect(distances).toBe(k * factor);
      }
    },
  );

  it('without quantisation, the exact k-NN computes no rescoring distance', async () => {
    const store = await storeWith('none');
    distances = 0;
    const hits = await store.searchVector({ agentId: 'a', vector: vectors(1, 9)[0] as Float32Array, k: 10 });
    expect(hits).toHaveLength(10);
    expect(distances).toBe(0);
  });

  it('a k × rescore as large as the partition runs the exact scan: nothing rescored, the exact answer', async () => {
    const store = await storeWith('bit', 64);
    const exact = await storeWith('none');
    const q = vectors(1, 9)[0] as Float32Array;
    distances = 0;
    // 60 × 64 = 3,840 asked for; the agent has 3,000 rows: the old plan rescored every one of them.
    const hits = await store.searchVector({ agentId: 'a', vector: q, k: 60 });
    expect(distances).toBe(0);
    expect(hits.map((h) => h.id)).toEqual(
      (await exact.searchVector({ agentId: 'a', vector: q, k: 60 })).map((h) => h.id),
    );
  });

  it("bit at the hybrid retriever's k = 128 (2,048 candidates) and int8 at any k run the exact scan", async () => {
    for (const quantization of ['bit', 'int8'] as const) {
      const store = await storeWith(quantization);
      for (const k of quantization === 'bit' ? [128] : [10, 128]) {
        distances = 0;
        const hits = await store.searchVector({ agentId: 'a', vector: vectors(1, 9)[0] as Float32Array, k });
        expect(hits).toHaveLength(k);
        // The old plan computed k × rescore (2,048 for bit, 80 and 1,024 for int8) float distances here.
        expect(distances).toBe(0);
      }
    }
  });
});

describe("the vector worker's dispatch sizes the scan the search runs", () => {
  it('a filtered search whose first round runs the exact scan is sized as that scan, not as a coarse pass', async () => {
    // bit at 1,536-d: k = 10 unfiltered asks for 10 (the coarse pass past 539 vectors: 3,000 × 192 bytes, under
    // the worker's 2 MiB), k = 10 filtered for 40 (the exact scan up to 4,455: 3,000 × 6 KiB).
    expect(exactPlanBound({ quantization: 'bit', dimensions: DIMS, kk: 40, kq: 640 })).toBeGreaterThan(ROWS);
    await storeWith('bit');
    // The default driver (a store with its own driver has no worker); the plans are counted by the test hook.
    const store = createSqliteMemoryStore({
      path: join(dir, 'bit-default.db'),
      embedding: { id: 'counted', dimensions: DIMS },
      vectorWorker: true,
    });
    open.push(store);
    // The probe is a snapshot: read again after each search.
    const local = (): number | undefined => vectorWorkerProbe(store)?.local;
    const q = vectors(1, 9)[0] as Float32Array;
    const plans = { ...knnPlanTestHook };
    await store.searchVector({ agentId: 'a', vector: q, k: 10 });
    expect(knnPlanTestHook.quantised - plans.quantised).toBe(1);
    expect(local()).toBe(1);
    // The filtered search runs the exact scan and is not kept on the store's connection (the first such search
    // of a store runs here without counting as kept: the thread starts with the next one).
    expect(await store.searchVector({ agentId: 'a', vector: q, k: 10, kinds: ['fact'] })).toHaveLength(10);
    expect(knnPlanTestHook.exact - plans.exact).toBe(1);
    expect(local()).toBe(1);
  });
});

describe('the k-NN plan follows the partition', () => {
  const rows = (agentId: string, count: number, seed: number) =>
    vectors(count, seed).map((vector, i) => ({
      id: `${agentId}${seed}-${i}`,
      agentId,
      kind: 'fact' as const,
      content: `note ${i}`,
      vector,
    }));

  it('a partition that grows past the bound (by this store or another connection) gets the coarse pass', async () => {
    // bit at k = 10 and 1,536-d: the exact scan up to 539 vectors (128-vector chunks: 512 hold 400 rows).
    expect(exactPlanBound({ quantization: 'bit', dimensions: DIMS, kk: 10, kq: 160 })).toBe(539);
    const path = join(dir, 'grow.db');
    const store = createSqliteMemoryStore({
      path,
      embedding: { id: 'counted', dimensions: DIMS },
      driver: CountingDatabase as unknown as SqliteDriver,
      vectorIndex: { quantization: 'bit' },
    });
    open.push(store);
    const q = vectors(1, 9)[0] as Float32Array;
    const searched = async (agentId: string): Promise<number> => {
      distances = 0;
      expect(await store.searchVector({ agentId, vector: q, k: 10 })).toHaveLength(10);
      return distances;
    };
    // Its own writes.
    await store.insertMemories(rows('g', 400, 21));
    expect(await searched('g')).toBe(0);
    expect(await searched('g')).toBe(0);
    await store.insertMemories(rows('g', 600, 22));
    expect(await searched('g')).toBe(160);
    // Another connection's commit.
    await store.insertMemories(rows('h', 400, 23));
    expect(await searched('h')).toBe(0);
    const other = createSqliteMemoryStore({ path, embedding: { id: 'counted', dimensions: DIMS } });
    open.push(other);
    await other.insertMemories(rows('h', 600, 24));
    expect(await searched('h')).toBe(160);
  });
});

describe('the k-NN planner', () => {
  const plan = (
    quantization: 'bit' | 'int8',
    dimensions: number,
    kk: number,
    vectors: number,
    rescore = 16,
  ) => chooseKnnPlan({ quantization, dimensions, kk, kq: Math.min(kk * rescore, 4096) }, vectors);

  it('int8 always scans exactly: its coarse distance costs more than the float one', () => {
    for (const dimensions of [128, 384, 768, 1536, 3072]) {
      for (const kk of [1, 10, 128]) expect(plan('int8', dimensions, kk, 1_000_000, 8)).toBe('exact');
    }
  });

  it('bit takes the coarse pass for a narrow k over a large partition at 384-d and 1,536-d', () => {
    for (const dimensions of [384, 1536]) {
      expect(plan('bit', dimensions, 10, 100_000)).toBe('quantised');
      expect(plan('bit', dimensions, 10, 10_000)).toBe('quantised');
      // A partition no larger than the candidates: the exact scan.
      expect(plan('bit', dimensions, 10, 160)).toBe('exact');
      // 2,048 candidates: selecting them in every chunk costs about what the float scan saves.
      expect(plan('bit', dimensions, 128, 10_000)).toBe('exact');
    }
    expect(plan('bit', 384, 128, 1_000_000)).toBe('exact');
    // At 1,536-d a large partition still pays for the rescoring of 2,048 candidates (the plans cost about the same).
    expect(plan('bit', 1536, 128, 100_000)).toBe('quantised');
    // At 128-d the float distance is as cheap as selecting 160 candidates: always exact.
    expect(exactPlanBound({ quantization: 'bit', dimensions: 128, kk: 10, kq: 160 })).toBe(
      Number.POSITIVE_INFINITY,
    );
  });

  it('the bound grows with the candidates and shrinks with a cheaper coarse pass', () => {
    const at = (kk: number, kq: number) => exactPlanBound({ quantization: 'bit', dimensions: 1536, kk, kq });
    expect(at(10, 160)).toBeGreaterThan(at(10, 40));
    expect(at(10, 40)).toBeGreaterThan(at(10, 10));
    expect(at(10, 10)).toBeGreaterThan(0);
  });
});
