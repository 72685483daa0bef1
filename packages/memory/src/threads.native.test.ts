/**
 * The USE-lite embedder on worker threads (`threads`): the same vectors and search answers as on the caller's
 * thread, for `add` (concurrent calls share batches), bulk `ingest` with its chunked long texts, and the drain;
 * `close()` stops the workers and they never keep a process alive. The real model, no mocks.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openEngine } from './engine.js';
import { createMemory } from './memory.js';
import type { Memory } from './types.js';

const FACTS = Array.from(
  { length: 16 },
  (_, i) =>
    `${
      [
        'The deploy pipeline failed after the cache expired',
        'Alice is allergic to peanuts',
        'The nightly backup copies the SQLite file to S3',
        'Our billing service moved to the new cluster',
      ][i % 4]
    } (note ${i})`,
);
const LONG = Array.from(
  { length: 60 },
  (_, i) => `Paragraph ${i} explains how the search index is rebuilt when the schema changes.`,
).join(' ');
const BULK = [
  ...Array.from(
    { length: 30 },
    (_, i) => `Meeting note ${i}: the team agreed to review the release on Friday`,
  ),
  LONG,
];
const QUERIES = ['peanut allergy', 'database backup', 'search index rebuild', 'release review'];

/** Every memory's content with its vectors (one per chunk), from an export with vectors. */
async function vectorsByContent(memory: Memory): Promise<Map<string, Float32Array[]>> {
  const out = new Map<string, Float32Array[]>();
  for await (const record of memory.export({ vectors: true })) {
    if (record.type !== 'memory') continue;
    const content = String(record.row.content);
    const vectors = (record.vectors ?? []).map((b64) => {
      expect(b64).not.toBeNull();
      const bytes = Buffer.from(b64 as string, 'base64');
      return new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4);
    });
    out.set(content, vectors);
  }
  return out;
}

let dir: string;
const memories: Record<'main' | 'workers', Memory | null> = { main: null, workers: null };

async function fill(memory: Memory): Promise<void> {
  // Sixteen concurrent adds: embedded before each resolves.
  await Promise.all(FACTS.map((fact) => memory.add(fact)));
  await memory.ingest(BULK);
  await memory.flush();
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'engram-threads-'));
  memories.main = await createMemory({ path: join(dir, 'main.db'), embedder: 'use', threads: 0 });
  memories.workers = await createMemory({ path: join(dir, 'workers.db'), embedder: 'use', threads: 2 });
  await fill(memories.main);
  await fill(memories.workers);
}, 300_000);

afterAll(async () => {
  await memories.main?.close();
  await memories.workers?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('threads', () => {
  it('embeds every row (long texts chunk by chunk) with the vectors of the caller’s thread', {
    timeout: 120_000,
  }, async () => {
    const main = await vectorsByContent(memories.main as Memory);
    const workers = await vectorsByContent(memories.workers as Memory);
    expect(workers.size).toBe(FACTS.length + BULK.length);
    expect([...workers.keys()].sort()).toEqual([...main.keys()].sort());
    // The long text is embedded as the store chunks it: several vectors.
    expect((workers.get(LONG) ?? []).length).toBeGreaterThan(1);
    let max = 0;
    for (const [content, vectors] of workers) {
      const expected = main.get(content) ?? [];
      expect(vectors).toHaveLength(expected.length);
      vectors.forEach((v, i) => {
        const w = expected[i] as Float32Array;
        expect(v).toHaveLength(512);
        for (let j = 0; j < 512; j += 1) max = Math.max(max, Math.abs((v[j] as number) - (w[j] as number)));
      });
    }
    expect(max).toBeLessThan(1e-5);
  });

  it('answers searches with the same memories in the same order', { timeout: 120_000 }, async () => {
    const answer = async (memory: Memory, query: string) =>
      (await memory.search(query, { limit: 5 })).map((hit) => hit.content);
    for (const query of QUERIES) {
      // A query embedding that misses its deadline (2 s) on a busy machine answers from the words alone, as it
      // should; such a pair is asked again (at most three times), so only a lasting difference fails.
      let a: string[] = [];
      let b: string[] = [];
      for (let attempt = 0; attempt < 3; attempt += 1) {
        a = await answer(memories.main as Memory, query);
        b = await answer(memories.workers as Memory, query);
        if (JSON.stringify(a) === JSON.stringify(b)) break;
      }
      expect(b).toEqual(a);
    }
  });

  it('refuses a bad thread count before opening anything', { timeout: 120_000 }, async () => {
    for (const threads of [-1, 1.5, 65]) {
      await expect(createMemory({ path: join(dir, `refused-${threads}.db`), threads })).rejects.toMatchObject(
        { code: 'ENGRAM_MEMORY_INVALID_CONFIG' },
      );
    }
  });

  it('stops its worker threads on close', { timeout: 120_000 }, async () => {
    const engine = await openEngine({ path: join(dir, 'engine.db'), embedder: 'use', threads: 2 });
    const pool = engine.embedder as unknown as { readonly running: number };
    // The warm-up starts one thread (enough for queries and `add`); a batch that waits starts the second.
    await engine.warmUp();
    expect(pool.running).toBe(1);
    expect(await engine.embedder.embed(BULK)).toHaveLength(BULK.length);
    expect(pool.running).toBe(2);
    await engine.close();
    expect(pool.running).toBe(0);
  });

  it('lets a process that used and closed a memory exit by itself', { timeout: 120_000 }, async () => {
    const entry = fileURLToPath(new URL('../dist/index.js', import.meta.url));
    const script = [
      `const { createMemory } = await import(${JSON.stringify(entry)});`,
      `const memory = await createMemory({ path: ${JSON.stringify(join(dir, 'child.db'))}, threads: 2 });`,
      "await Promise.all(['one fact', 'another fact', 'a third fact'].map((t) => memory.add(t)));",
      "await memory.ingest(['bulk one', 'bulk two']);",
      'await memory.flush();',
      "const hits = await memory.search('fact');",
      'await memory.close();',
      'process.stdout.write(String(hits.length));',
    ].join('\n');
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--input-type=module', '--eval', script],
      { timeout: 120_000 },
    );
    expect(Number(stdout)).toBeGreaterThan(0);
  });
});
