import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Worker } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUseEmbedder, createUseEmbedderPool, isEngramEmbedderUseError } from './index.js';
import { poolWorkers } from './pool.js';

// The real model on worker threads (built output: the workers run `dist/use-worker.js`; `pnpm build` first).
const single = createUseEmbedder();
const pool = createUseEmbedderPool({ threads: 2, maxBatchSize: 5, maxBatchChars: 1_024 });

const TEXTS = [
  'pnpm installs dependencies into a content-addressed store',
  '',
  'the SQLite database is backed up to S3 every night',
  'production outage: the API returns 503 errors',
  '   ',
  'authentication error: invalid password',
  Array.from({ length: 150 }, (_, i) => `word${i}`).join(' '),
  'the search takes several seconds to respond',
  'the weather is sunny',
  'short',
  'a medium sentence about caching and invalidation in the store',
  ...Array.from({ length: 25 }, (_, i) => `memory number ${i} about deploys ${'and caches '.repeat(i % 6)}`),
];

function maxDifference(a: readonly Float32Array[], b: readonly Float32Array[]): number {
  expect(a).toHaveLength(b.length);
  let max = 0;
  a.forEach((v, i) => {
    const w = b[i] as Float32Array;
    expect(v).toHaveLength(512);
    for (let j = 0; j < 512; j += 1) max = Math.max(max, Math.abs((v[j] as number) - (w[j] as number)));
  });
  return max;
}

let expected: Float32Array[] = [];

beforeAll(async () => {
  await Promise.all([single.load(), pool.load()]);
  // One by one: the reference every batching must agree with.
  expected = [];
  for (const text of TEXTS) expected.push(((await single.embed([text])) as [Float32Array])[0]);
}, 300_000);

afterAll(async () => {
  await pool.close();
});

describe('UseEmbedderPool (real model, worker threads)', () => {
  it('gives the single-thread embedder’s vectors, in input order, with batches split over two workers', {
    timeout: 120_000,
  }, async () => {
    expect(pool.running).toBe(2);
    expect(pool.profile).toEqual({ id: 'use-lite-512-v1', dimensions: 512 });
    const vectors = await pool.embed(TEXTS);
    expect(maxDifference(vectors, expected)).toBeLessThan(1e-5);
    // Blank texts are the zero vector, as on one thread.
    expect((vectors[1] as Float32Array).every((x) => x === 0)).toBe(true);
    expect((vectors[4] as Float32Array).every((x) => x === 0)).toBe(true);
    // The same call on one thread, in its own batches, agrees too.
    expect(maxDifference(await single.embed(TEXTS), vectors)).toBeLessThan(1e-5);
  });

  it('maps each concurrent call’s texts back to that call when calls are coalesced into shared batches', {
    timeout: 120_000,
  }, async () => {
    const calls = TEXTS.map((_, i) => TEXTS.slice(i, i + 3));
    const answers = await Promise.all(calls.map((texts, i) => pool.embed(texts, { urgent: i % 4 === 0 })));
    answers.forEach((vectors, i) => {
      expect(maxDifference(vectors, expected.slice(i, i + 3))).toBeLessThan(1e-5);
    });
  });

  it('turns a worker stopped mid-batch into a typed error for that batch; the next batch succeeds', {
    timeout: 120_000,
  }, async () => {
    const one = createUseEmbedderPool({ threads: 1 });
    try {
      await one.load();
      const [worker] = poolWorkers(one);
      const pending = one.embed(TEXTS);
      // The batch is sent on the next turn of the event loop; stop the worker while it runs it.
      await new Promise((resolve) => setImmediate(resolve));
      await worker?.terminate();
      const error: unknown = await pending.then(
        () => null,
        (e: unknown) => e,
      );
      expect(isEngramEmbedderUseError(error)).toBe(true);
      expect(error).toMatchObject({ code: 'ENGRAM_EMBEDDER_USE_WORKER_FAILED' });
      // A new worker takes the next batch and gives the right vectors.
      expect(maxDifference(await one.embed(TEXTS), expected)).toBeLessThan(1e-5);
      expect(one.running).toBe(1);
      expect(poolWorkers(one)[0]).not.toBe(worker);
    } finally {
      await one.close();
    }
  });

  it('stops its workers on close; later calls reject with ENGRAM_EMBEDDER_USE_CLOSED', {
    timeout: 120_000,
  }, async () => {
    const other = createUseEmbedderPool({ threads: 2 });
    const texts = TEXTS.slice(0, 12);
    expect(maxDifference(await other.embed(texts), expected.slice(0, 12))).toBeLessThan(1e-5);
    const workers = poolWorkers(other);
    expect(workers.length).toBeGreaterThan(0);
    const exited = workers.map((w) => new Promise((resolve) => w.once('exit', resolve)));
    await other.close();
    await Promise.all(exited);
    expect(other.running).toBe(0);
    expect(poolWorkers(other)).toHaveLength(0);
    await expect(other.embed(['after close'])).rejects.toMatchObject({ code: 'ENGRAM_EMBEDDER_USE_CLOSED' });
  });

  it('never keeps a process alive: a process that embeds and never closes its pool exits by itself', {
    timeout: 120_000,
  }, async () => {
    const index = fileURLToPath(new URL('../dist/index.js', import.meta.url));
    const script = [
      `const { createUseEmbedderPool } = await import(${JSON.stringify(index)});`,
      'const pool = createUseEmbedderPool({ threads: 2 });',
      "const vectors = await pool.embed(['one text', 'another text', 'a third one']);",
      "process.stdout.write(String(vectors.map((v) => v.length).join(',')));",
    ].join('\n');
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--input-type=module', '--eval', script],
      {
        timeout: 120_000,
      },
    );
    expect(stdout).toBe('512,512,512');
  });

  it('runs offline in a worker thread: any fetch or socket connection there would end the thread', {
    timeout: 120_000,
  }, async () => {
    // The pool's worker entry, started as the pool starts it, with a preload that makes every fetch and socket
    // connection of that thread exit it with code 97.
    const dir = await mkdtemp(path.join(tmpdir(), 'engram-use-offline-'));
    try {
      const preload = path.join(dir, 'no-network.cjs');
      await writeFile(
        preload,
        [
          "const net = require('node:net');",
          'globalThis.fetch = () => process.exit(97);',
          'net.Socket.prototype.connect = function connect() { process.exit(97); };',
        ].join('\n'),
      );
      const worker = new Worker(new URL('../dist/use-worker.js', import.meta.url), {
        workerData: { backend: 'wasm' },
        execArgv: ['--require', preload],
      });
      const exited = new Promise<number>((resolve) => worker.once('exit', resolve));
      const reply = (request: object): Promise<{ ok: boolean; vectors?: Float32Array }> =>
        new Promise((resolve, reject) => {
          worker.once('message', resolve);
          worker.once('exit', (code) => reject(new Error(`worker exited with ${code}`)));
          worker.postMessage(request);
        });
      expect(await reply({ id: 1, kind: 'load' })).toMatchObject({ ok: true });
      const answer = await reply({ id: 2, kind: 'embed', texts: ['package manager', 'pnpm installs'] });
      expect(answer.ok).toBe(true);
      expect(answer.vectors).toHaveLength(1024);
      await worker.terminate();
      expect(await exited).not.toBe(97);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
