/**
 * The work the vector worker takes off the store's connection, counted (no clock): once the thread is ready,
 * every k-NN of a hybrid search — asked for first, then the lexical search while it runs, as the retriever
 * does — is answered by the worker, none falls back, and the store's observer sees the same statements as
 * without the worker (the worker's are reported to it).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StatementKind } from '@engram/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSqliteMemoryStore, type SqliteMemoryStore, vectorWorkerProbe } from './sqlite-store.js';

const DIMS = 128;
const AGENTS = ['agent-0', 'agent-1'];
const ROWS = 1000;
const SEARCHES = 200;
const profile = { id: 'perf', dimensions: DIMS };
const WORDS = [
  'deploy',
  'release',
  'database',
  'cache',
  'login',
  'queue',
  'metrics',
  'backup',
  'schema',
  'token',
];
let dir: string;
let path: string;

function vectorOf(seed: number): Float32Array {
  const v = new Float32Array(DIMS);
  for (let i = 0; i < DIMS; i += 1)
    v[i] = Math.sin(seed * 0.618 + i * 1.37) + Math.cos(seed * (i + 1) * 0.011);
  return v;
}

function open(vectorWorker: boolean, counts: Map<StatementKind, number>): SqliteMemoryStore {
  return createSqliteMemoryStore({
    path,
    embedding: profile,
    vectorWorker,
    observer: { onStatement: (kind) => counts.set(kind, (counts.get(kind) ?? 0) + 1) },
  });
}

/** One hybrid search's store calls: the k-NN asked for first, the lexical search while it runs. */
async function hybrid(store: SqliteMemoryStore, i: number): Promise<unknown> {
  const agentId = AGENTS[i % AGENTS.length] as string;
  const knn = store.searchVector({ agentId, vector: vectorOf(10_000 + i), k: 128 });
  const lexical = await store.searchLexical({
    agentId,
    terms: [WORDS[i % WORDS.length] as string, WORDS[(i * 7) % WORDS.length] as string],
    mode: 'any',
    limit: 128,
  });
  return [await knn, lexical.hits];
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'engram-vworker-perf-'));
  path = join(dir, 'perf.db');
  const writer = createSqliteMemoryStore({ path, embedding: profile, vectorWorker: false });
  for (const [a, agentId] of AGENTS.entries()) {
    await writer.insertMemories(
      Array.from({ length: ROWS }, (_, i) => ({
        agentId,
        kind: 'fact' as const,
        content: `${WORDS[i % WORDS.length]} note ${i} about ${WORDS[(i * 3) % WORDS.length]}`,
        vector: vectorOf(a * ROWS + i),
      })),
    );
  }
  writer.close();
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('the vector worker takes the k-NN off the store connection', () => {
  it('leaves the k-NN of small partitions (1,000 × 128-d, 512 KiB of vectors) on the store connection', async () => {
    const counts = new Map<StatementKind, number>();
    const store = open(true, counts);
    try {
      for (let i = 0; i < SEARCHES; i += 1) await hybrid(store, i);
      const probe = vectorWorkerProbe(store);
      console.log(
        `[store:vector-worker] ${probe?.local} of ${SEARCHES} k-NN of ${ROWS}-row partitions on the store connection, ${probe?.answered} on the worker, state ${probe?.state}`,
      );
      expect(probe?.local).toBe(SEARCHES);
      expect(probe?.answered).toBe(0);
      // No thread is started for them.
      expect(probe?.state).toBe('idle');
    } finally {
      store.close();
    }
  });

  it('answers every k-NN of 200 hybrid searches once ready, with the same statements reported', async () => {
    const hereCounts = new Map<StatementKind, number>();
    const workerCounts = new Map<StatementKind, number>();
    const here = open(false, hereCounts);
    const store = open(true, workerCounts);
    // Every k-NN to the worker: these partitions (512 KiB of vectors) are small enough for the store's connection.
    vectorWorkerProbe(store)?.setMinScanBytes(0);
    try {
      // Searches that never yield to the event loop (each awaits a settled promise, like a benchmark loop)
      // still find the thread once it is ready: the store reads its start-up flag, not its message.
      for (let i = 0; i < 1_000_000 && vectorWorkerProbe(store)?.state !== 'ready'; i += 1) {
        await store.searchVector({ agentId: 'agent-0', vector: vectorOf(1), k: 1 });
      }
      expect(vectorWorkerProbe(store)?.state).toBe('ready');
      hereCounts.clear();
      workerCounts.clear();
      const before = vectorWorkerProbe(store)?.answered ?? 0;
      for (let i = 0; i < SEARCHES; i += 1) {
        expect(await hybrid(store, i)).toStrictEqual(await hybrid(here, i));
      }
      const probe = vectorWorkerProbe(store);
      console.log(
        `[store:vector-worker] ${(probe?.answered ?? 0) - before} of ${SEARCHES} k-NN answered by the worker, ${probe?.fallbacks} fallbacks; statements ${JSON.stringify([...workerCounts])}`,
      );
      expect((probe?.answered ?? 0) - before).toBe(SEARCHES);
      expect(probe?.fallbacks).toBe(0);
      expect([...workerCounts].sort()).toEqual([...hereCounts].sort());
    } finally {
      store.close();
      here.close();
    }
  });
});

describe('the vector worker with a quantised index', () => {
  const WIDE = 1536;
  const WIDE_ROWS = 2500;
  let widePath: string;

  function wide(seed: number): Float32Array {
    const v = new Float32Array(WIDE);
    for (let i = 0; i < WIDE; i += 1)
      v[i] = Math.sin(seed * 0.618 + i * 1.37) + Math.cos(seed * (i + 1) * 0.011);
    return v;
  }

  beforeAll(async () => {
    widePath = join(dir, 'bit.db');
    const writer = createSqliteMemoryStore({
      path: widePath,
      embedding: { id: 'wide', dimensions: WIDE },
      vectorWorker: false,
      vectorIndex: { quantization: 'bit' },
    });
    await writer.insertMemories(
      Array.from({ length: WIDE_ROWS }, (_, i) => ({
        agentId: 'agent-0',
        kind: 'fact' as const,
        content: `note ${i}`,
        vector: wide(i),
      })),
    );
    writer.close();
  });

  it('sends a k-NN that runs the exact float scan by its float bytes, a coarse pass by its quantised ones', async () => {
    // 2,500 × 1,536-d: 15 MiB of float vectors, 469 KiB of sign bits. At k = 128 (2,048 candidates) the planner
    // runs the exact scan, whose 15 MiB go to the worker; at k = 10 (160 candidates) the coarse pass, whose
    // 469 KiB stay on the store's connection.
    const store = createSqliteMemoryStore({
      path: widePath,
      embedding: { id: 'wide', dimensions: WIDE },
      vectorWorker: true,
    });
    try {
      for (let i = 0; i < 1_000_000 && vectorWorkerProbe(store)?.state !== 'ready'; i += 1) {
        await store.searchVector({ agentId: 'agent-0', vector: wide(1), k: 128 });
      }
      expect(vectorWorkerProbe(store)?.state).toBe('ready');
      const before = { ...vectorWorkerProbe(store) };
      for (let i = 0; i < 20; i += 1) {
        await store.searchVector({ agentId: 'agent-0', vector: wide(50_000 + i), k: 128 });
        await store.searchVector({ agentId: 'agent-0', vector: wide(60_000 + i), k: 10 });
      }
      const probe = vectorWorkerProbe(store);
      expect((probe?.answered ?? 0) - (before.answered ?? 0)).toBe(20);
      expect((probe?.local ?? 0) - (before.local ?? 0)).toBe(20);
      expect(probe?.fallbacks).toBe(0);
    } finally {
      store.close();
    }
  });
});
