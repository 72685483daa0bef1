/**
 * The work of a quantised vector search, counted (no clock): the exact float distance is computed for the
 * coarse pass's `k × rescore` candidates only, never for the rest of the agent's partition. The count comes
 * from the SQL function itself: the test's driver replaces sqlite-vec's `vec_distance_cosine` with a counting
 * copy after the extension loads (the exact float k-NN of vec0 computes its distances inside the table and
 * never calls it).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { SqliteDriver } from './native.js';
import { createSqliteMemoryStore, type SqliteMemoryStore, type VectorQuantization } from './sqlite-store.js';

const DIMS = 128;
const ROWS = 3000;
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
  let a = seed >>> 0;
  const random = (): number => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
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
    vectors(ROWS, 4).map((vector, i) => ({
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
    ['int8', undefined, 8],
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

  it('a k × rescore larger than the partition rescores each of its rows once', async () => {
    const store = await storeWith('bit', 64);
    distances = 0;
    await store.searchVector({ agentId: 'a', vector: vectors(1, 9)[0] as Float32Array, k: 60 });
    // 60 × 64 = 3,840 asked for; the agent has 3,000 rows.
    expect(distances).toBe(ROWS);
  });
});
