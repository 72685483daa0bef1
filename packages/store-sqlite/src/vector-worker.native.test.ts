// The vector worker (`vectorWorker`): the k-NN of `searchVector` on a worker thread with its own read-only
// connection gives the answers of the store's own connection — unfiltered, filtered, chunked, quantised,
// encrypted, several agents — sees every write made before the search, falls back when the thread dies, and
// never keeps a process alive.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { MemoryKind, VectorQuery } from '@engram/store/port-kit';
import { CHUNK_BUDGET } from '@engram/store/port-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SqliteMemoryStoreConfig } from './sqlite/config.js';
import { createSqliteMemoryStore, type SqliteMemoryStore, vectorWorkerProbe } from './sqlite-store.js';

const DIM = 24;
const profile = { id: 'worker-test', dimensions: DIM };
const AGENTS = ['agent-a', 'agent-b', 'agent-c'];
const ROWS = 240;
const KINDS: MemoryKind[] = ['fact', 'episodic', 'semantic'];
let dir: string;

/** A seeded pseudo-random vector (the same for the same seed), with ties now and then. */
function vectorOf(seed: number): Float32Array {
  let x = (seed * 2654435761) >>> 0 || 1;
  const v = new Float32Array(DIM);
  for (let i = 0; i < DIM; i += 1) {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    v[i] = ((x % 2001) - 1000) / 1000;
  }
  return v;
}

/** Fills a store: every agent gets ROWS memories with vectors (a few duplicates, so distances tie), some tags. */
async function fill(store: SqliteMemoryStore, chunked = false): Promise<void> {
  for (const [a, agentId] of AGENTS.entries()) {
    const batch = Array.from({ length: ROWS }, (_, i) => ({
      id: `${agentId}-${String(i).padStart(4, '0')}`,
      agentId,
      kind: KINDS[i % 3] as MemoryKind,
      content: `memory ${i} of ${agentId} about topic ${i % 17}`,
      tags: i % 4 === 0 ? ['tag:even'] : [],
      vector: vectorOf(a * 10_000 + (i % 200)),
    }));
    await store.insertMemories(batch);
  }
  if (!chunked) return;
  // Long memories: chunk vectors through the embedding drain.
  const long = 'A long paragraph about the garden club, the weather and the snacks. '.repeat(
    Math.ceil((CHUNK_BUDGET * 3) / 70),
  );
  for (let i = 0; i < 12; i += 1) {
    await store.insertMemory({ id: `long-${i}`, agentId: 'agent-a', kind: 'fact', content: `${i} ${long}` });
  }
  for (;;) {
    const pending = await store.listPendingEmbeddings({ limit: 50 });
    if (pending.length === 0) break;
    await store.commitEmbeddings(
      pending.map((p) => ({
        id: p.id,
        revision: p.revision,
        state: 'ready' as const,
        vector: vectorOf(777 + (p.chunk ?? 0) * 31 + p.id.length),
        ...(p.chunk === undefined ? {} : { chunk: p.chunk }),
      })),
    );
  }
}

/** Bench-like queries: every agent, unfiltered and filtered (kinds, tags, time), k from 1 to 128. */
function queries(n: number): VectorQuery[] {
  return Array.from({ length: n }, (_, i) => {
    const agentId = AGENTS[i % AGENTS.length] as string;
    const base = { agentId, vector: vectorOf(50_000 + i), k: [1, 10, 32, 128][i % 4] as number };
    switch (i % 5) {
      case 1:
        return { ...base, kinds: ['fact'] };
      case 2:
        return { ...base, tags: ['tag:even'] };
      case 3:
        return { ...base, time: { includeHistory: true } };
      default:
        return base;
    }
  });
}

/** Searches until the store's worker is ready (the first searches run on the store's connection). */
async function untilReady(store: SqliteMemoryStore): Promise<void> {
  for (let i = 0; i < 500 && vectorWorkerProbe(store)?.state !== 'ready'; i += 1) {
    await store.searchVector({ agentId: 'agent-a', vector: vectorOf(1), k: 1 });
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  expect(vectorWorkerProbe(store)?.state).toBe('ready');
}

/** Opens the same file with and without the worker and checks every answer is the same, from the worker. */
async function sameAnswers(config: SqliteMemoryStoreConfig, n: number): Promise<void> {
  const here = createSqliteMemoryStore({ ...config, vectorWorker: false });
  const offloaded = createSqliteMemoryStore({ ...config, vectorWorker: true });
  // Every k-NN to the worker, however small the partition (the rule has its own test).
  vectorWorkerProbe(offloaded)?.setMinScanBytes(0);
  try {
    expect(vectorWorkerProbe(here)).toBeNull();
    await untilReady(offloaded);
    const before = vectorWorkerProbe(offloaded)?.answered ?? 0;
    let nonEmpty = 0;
    for (const q of queries(n)) {
      const expected = await here.searchVector(q);
      const got = await offloaded.searchVector(q);
      // Same ids, order, distances and similarities to the bit, same chunk fields.
      expect(got).toStrictEqual(expected);
      if (expected.length > 0) nonEmpty += 1;
    }
    expect(nonEmpty).toBe(n);
    const probe = vectorWorkerProbe(offloaded);
    expect((probe?.answered ?? 0) - before).toBe(n);
    expect(probe?.fallbacks).toBe(0);
  } finally {
    offloaded.close();
    here.close();
  }
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'engram-vworker-'));
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('the vector worker', () => {
  it('answers like the store connection: filtered, chunked, several agents', async () => {
    const path = join(dir, 'plain.db');
    const writer = createSqliteMemoryStore({ path, embedding: profile, vectorWorker: false });
    await fill(writer, true);
    writer.close();
    await sameAnswers({ path, embedding: profile }, 300);
  });

  it('answers like the store connection with a quantised index', async () => {
    const path = join(dir, 'int8.db');
    const writer = createSqliteMemoryStore({
      path,
      embedding: profile,
      vectorIndex: { quantization: 'int8', rescore: 4 },
      vectorWorker: false,
    });
    await fill(writer);
    writer.close();
    await sameAnswers({ path, embedding: profile }, 200);
  });

  it('answers like the store connection on an encrypted file', async () => {
    const path = join(dir, 'encrypted.db');
    const encryption = { key: 'correct horse battery staple' };
    const writer = createSqliteMemoryStore({ path, embedding: profile, encryption, vectorWorker: false });
    await fill(writer);
    writer.close();
    await sameAnswers({ path, embedding: profile, encryption }, 100);
  });

  it('is off for :memory:, and the option can turn it off', () => {
    const memory = createSqliteMemoryStore({ path: ':memory:', embedding: profile, vectorWorker: true });
    const off = createSqliteMemoryStore({
      path: join(dir, 'off.db'),
      embedding: profile,
      vectorWorker: false,
    });
    expect(vectorWorkerProbe(memory)).toBeNull();
    expect(vectorWorkerProbe(off)).toBeNull();
    memory.close();
    off.close();
  });

  it('starts with the second search: a one-shot search never starts a thread', async () => {
    const store = createSqliteMemoryStore({
      path: join(dir, 'once.db'),
      embedding: profile,
      vectorWorker: true,
    });
    vectorWorkerProbe(store)?.setMinScanBytes(0);
    try {
      await store.insertMemory({ agentId: 'agent-a', kind: 'fact', content: 'x', vector: vectorOf(3) });
      expect(vectorWorkerProbe(store)?.state).toBe('idle');
      expect((await store.searchVector({ agentId: 'agent-a', vector: vectorOf(3), k: 1 })).length).toBe(1);
      expect(vectorWorkerProbe(store)?.state).toBe('idle');
      await store.searchVector({ agentId: 'agent-a', vector: vectorOf(3), k: 1 });
      expect(vectorWorkerProbe(store)?.state).not.toBe('idle');
    } finally {
      store.close();
    }
  });

  it('sees every write made before the search began', async () => {
    const store = createSqliteMemoryStore({
      path: join(dir, 'fresh.db'),
      embedding: profile,
      vectorWorker: true,
    });
    vectorWorkerProbe(store)?.setMinScanBytes(0);
    try {
      await fill(store);
      await untilReady(store);
      const before = vectorWorkerProbe(store)?.answered ?? 0;
      for (let i = 0; i < 60; i += 1) {
        const vector = vectorOf(900_000 + i);
        const row = await store.insertMemory({
          agentId: 'agent-b',
          kind: 'fact',
          content: `new ${i}`,
          vector,
        });
        const hits = await store.searchVector({ agentId: 'agent-b', vector, k: 1 });
        expect(hits[0]?.id).toBe(row.id);
      }
      expect((vectorWorkerProbe(store)?.answered ?? 0) - before).toBe(60);
    } finally {
      store.close();
    }
  });

  it('falls back to the store connection when the thread dies, with the same answers', async () => {
    const path = join(dir, 'crash.db');
    const here = createSqliteMemoryStore({ path, embedding: profile, vectorWorker: false });
    await fill(here);
    const store = createSqliteMemoryStore({ path, embedding: profile, vectorWorker: true });
    vectorWorkerProbe(store)?.setMinScanBytes(0);
    try {
      await untilReady(store);
      const qs = queries(120);
      const expected = await Promise.all(qs.map((q) => here.searchVector(q)));
      // Requests in flight when the thread ends are answered on the store's connection: the thread is held
      // first, so none of them is answered before it ends.
      const release = vectorWorkerProbe(store)?.hold();
      const inFlight = qs.map((q) => store.searchVector(q));
      await vectorWorkerProbe(store)?.crash();
      release?.();
      expect(await Promise.all(inFlight)).toStrictEqual(expected);
      const probe = vectorWorkerProbe(store);
      expect(probe?.failures).toBe(1);
      expect(probe?.fallbacks).toBeGreaterThan(0);
      expect(probe?.fallbacks).toBe(qs.length);
      // A later search starts a new worker, which answers again.
      await untilReady(store);
      const answered = vectorWorkerProbe(store)?.answered ?? 0;
      for (const [i, q] of qs.entries()) expect(await store.searchVector(q)).toStrictEqual(expected[i]);
      expect((vectorWorkerProbe(store)?.answered ?? 0) - answered).toBe(qs.length);
    } finally {
      store.close();
      here.close();
    }
  });

  it('replaces a hung thread: its requests run on the store connection after their deadline', async () => {
    const path = join(dir, 'hang.db');
    const here = createSqliteMemoryStore({ path, embedding: profile, vectorWorker: false });
    await fill(here);
    const store = createSqliteMemoryStore({ path, embedding: profile, vectorWorker: true });
    const probe = () => vectorWorkerProbe(store);
    probe()?.setMinScanBytes(0);
    try {
      await untilReady(store);
      const qs = queries(30);
      const expected = await Promise.all(qs.map((q) => here.searchVector(q)));
      // The thread stops answering (as a hung one would); every request waits for its deadline, then runs here.
      probe()?.setDeadlineMs(200);
      const release = probe()?.hold();
      expect(await Promise.all(qs.map((q) => store.searchVector(q)))).toStrictEqual(expected);
      release?.();
      expect(probe()?.hangs).toBe(1);
      expect(probe()?.failures).toBe(1);
      expect(probe()?.fallbacks).toBe(qs.length);
      // A later search starts a new thread, which answers again.
      probe()?.setDeadlineMs(null);
      await untilReady(store);
      const answered = probe()?.answered ?? 0;
      for (const [i, q] of qs.entries()) expect(await store.searchVector(q)).toStrictEqual(expected[i]);
      expect((probe()?.answered ?? 0) - answered).toBe(qs.length);
      expect(probe()?.hangs).toBe(1);
    } finally {
      store.close();
      here.close();
    }
  });

  it('keeps the k-NN of a small partition on the store connection, with the same answers', async () => {
    // One agent over one vec0 chunk (1,024 vectors), three within it; the threshold set to one full chunk's
    // vectors (at this width the default, 2 MiB, keeps every agent here). Each small agent's chunk has that
    // capacity but holds 240 vectors: its rows decide, and only the big one's k-NN goes to the worker.
    const path = join(dir, 'dispatch.db');
    const here = createSqliteMemoryStore({ path, embedding: profile, vectorWorker: false });
    await fill(here);
    await here.insertMemories(
      Array.from({ length: 1100 }, (_, i) => ({
        agentId: 'agent-big',
        kind: 'fact' as const,
        content: `big ${i}`,
        vector: vectorOf(70_000 + i),
      })),
    );
    const store = createSqliteMemoryStore({ path, embedding: profile, vectorWorker: true });
    vectorWorkerProbe(store)?.setMinScanBytes(1024 * DIM * 4);
    try {
      for (let i = 0; i < 500 && vectorWorkerProbe(store)?.state !== 'ready'; i += 1) {
        await store.searchVector({ agentId: 'agent-big', vector: vectorOf(1), k: 1 });
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(vectorWorkerProbe(store)?.state).toBe('ready');
      const before = vectorWorkerProbe(store);
      const big = queries(60).map((q) => ({ ...q, agentId: 'agent-big' }));
      const small = queries(60);
      for (const q of [...big, ...small])
        expect(await store.searchVector(q)).toStrictEqual(await here.searchVector(q));
      const after = vectorWorkerProbe(store);
      expect((after?.answered ?? 0) - (before?.answered ?? 0)).toBe(big.length);
      expect((after?.local ?? 0) - (before?.local ?? 0)).toBe(small.length);
      expect(after?.fallbacks).toBe(0);
    } finally {
      store.close();
      here.close();
    }
  });

  it('never keeps a process alive: with close() or without, a process that searched exits by itself', () => {
    const path = join(dir, 'child.db');
    const entry = fileURLToPath(new URL('../dist/index.js', import.meta.url));
    const raw = fileURLToPath(new URL('../dist/raw.js', import.meta.url));
    for (const closing of [true, false]) {
      const script = `
        const { createSqliteMemoryStore } = await import(${JSON.stringify(entry)});
        const { vectorWorkerProbe } = await import(${JSON.stringify(raw)});
        const store = createSqliteMemoryStore({ path: ${JSON.stringify(path)}, embedding: { id: 'c', dimensions: 2 }, vectorWorker: true });
        vectorWorkerProbe(store).setMinScanBytes(0);
        await store.insertMemory({ agentId: 'a', kind: 'fact', content: 'x', vector: new Float32Array([1, 0]) });
        for (let i = 0; i < 500 && vectorWorkerProbe(store).state !== 'ready'; i += 1) {
          await store.searchVector({ agentId: 'a', vector: new Float32Array([1, 0]), k: 1 });
          await new Promise((r) => setTimeout(r, 10));
        }
        const hits = await store.searchVector({ agentId: 'a', vector: new Float32Array([1, 0]), k: 1 });
        console.log(vectorWorkerProbe(store).answered > 0 ? 'worker' : 'none', hits.length);
        ${closing ? 'store.close();' : ''}
      `;
      const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
        encoding: 'utf8',
        timeout: 60_000,
      });
      expect(child.status).toBe(0);
      // The worker answered (it may have answered the last loop search too, if it turned ready in between).
      expect(child.stdout.trim()).toBe('worker 1');
    }
  });
});
