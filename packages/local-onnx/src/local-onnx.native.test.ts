/**
 * The local reranker and embedder on onnxruntime-node, with tiny BERT-shaped models the tests write (see
 * `test-support/tiny-model.ts`): they load from a directory or a cache, run and score offline, and a model found
 * nowhere is refused — naming the model and `allowDownload` — without a single request.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { env } from '@huggingface/transformers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalEmbedder, createLocalReranker, isEngramLocalModelError } from './index.js';
import {
  TINY_EMBEDDING_DIMENSIONS,
  writeTinyCrossEncoder,
  writeTinyEmbedder,
} from './test-support/tiny-model.js';

const dir = mkdtempSync(join(tmpdir(), 'engram-local-onnx-'));
const requests: string[] = [];
const realFetch = env.fetch;
const realHubCache = process.env.HF_HUB_CACHE;
beforeAll(() => {
  // The machine's own Hugging Face cache stays out of these tests.
  process.env.HF_HUB_CACHE = join(dir, 'no-hub');
  // Any request at all is recorded and refused: these tests run offline.
  env.fetch = async (url: string | URL) => {
    requests.push(String(url));
    throw new Error('offline');
  };
});
afterAll(() => {
  env.fetch = realFetch;
  if (realHubCache === undefined) delete process.env.HF_HUB_CACHE;
  else process.env.HF_HUB_CACHE = realHubCache;
  rmSync(dir, { recursive: true, force: true });
});

async function rejection(
  promise: Promise<unknown>,
): Promise<{ code: string; name: string; message: string }> {
  const error: unknown = await promise.then(
    () => new Error('expected a rejection'),
    (e: unknown) => e,
  );
  if (!isEngramLocalModelError(error)) throw error;
  return error;
}

const DOCS = ['The deploy runs on Friday.', 'The preferred rollback.', 'Lunch is at noon.', 'Canary flag'];

describe('createLocalReranker', () => {
  it('loads a cross-encoder from a directory and scores each document in order, offline', async () => {
    const model = writeTinyCrossEncoder(join(dir, 'tiny-cross-encoder'));
    const reranker = createLocalReranker({ model, batchSize: 3 });
    expect(reranker.id).toBe(`local:${model}`);
    const scores = await reranker.rerank('When do we deploy?', DOCS);
    // The tiny model's logit is the sum of its word weights: preferred 3 + rollback 2, canary 1, lunch −1.
    expect(scores).toEqual([0, 5, -1, 1]);
    expect(await reranker.rerank('q', [])).toEqual([]);
    expect(requests).toEqual([]);
  }, 120_000);

  it('finds a hub id in the transformers.js cache and in the Hugging Face cache', async () => {
    const cacheDir = join(dir, 'transformers-cache');
    writeTinyCrossEncoder(join(cacheDir, 'engram-test', 'tiny-ce'));
    const fromCache = createLocalReranker({ model: 'engram-test/tiny-ce', cacheDir });
    expect(await fromCache.rerank('q', ['preferred'])).toEqual([3]);

    const hub = join(dir, 'hf-hub');
    const repo = join(hub, 'models--engram-test--tiny-hub');
    mkdirSync(join(repo, 'refs'), { recursive: true });
    writeFileSync(join(repo, 'refs', 'main'), 'abc123\n');
    writeTinyCrossEncoder(join(repo, 'snapshots', 'abc123'));
    const saved = process.env.HF_HUB_CACHE;
    process.env.HF_HUB_CACHE = hub;
    try {
      const fromHub = createLocalReranker({ model: 'engram-test/tiny-hub', cacheDir: join(dir, 'empty') });
      expect(await fromHub.rerank('q', ['rollback', 'lunch'])).toEqual([2, -1]);
    } finally {
      process.env.HF_HUB_CACHE = saved;
    }
    expect(requests).toEqual([]);
  }, 120_000);

  it('refuses to download by default, naming the model and the option, without a request', async () => {
    const reranker = createLocalReranker({ model: 'engram-test/not-here', cacheDir: join(dir, 'empty') });
    const error = await rejection(reranker.rerank('secret query', ['secret document']));
    expect(error.code).toBe('ENGRAM_LOCAL_MODEL_NOT_FOUND');
    expect(error.message).toContain('engram-test/not-here');
    expect(error.message).toContain('allowDownload: true');
    expect(error.message).not.toContain('secret');
    // A directory that does not exist is refused the same way, never looked up on the hub.
    const missing = await rejection(createLocalReranker({ model: join(dir, 'absent') }).load());
    expect(missing.code).toBe('ENGRAM_LOCAL_MODEL_NOT_FOUND');
    expect(requests).toEqual([]);
  }, 120_000);

  it('rejects an aborted call as an AbortError and invalid settings as INVALID_CONFIG', async () => {
    const reranker = createLocalReranker({ model: join(dir, 'tiny-cross-encoder') });
    const controller = new AbortController();
    controller.abort();
    const aborted = await rejection(reranker.rerank('q', DOCS, { signal: controller.signal }));
    expect(aborted).toMatchObject({ code: 'ENGRAM_LOCAL_MODEL_ABORTED', name: 'AbortError' });
    for (const bad of [{ model: '' }, { model: 'x', batchSize: 0 }, { model: 'x', allowDownload: 'yes' }]) {
      expect(() => createLocalReranker(bad as never)).toThrow(/Invalid local reranker configuration/);
    }
  }, 120_000);
});

describe('createLocalEmbedder', () => {
  it('loads a sentence-embedding model from a directory and gives unit vectors of its width, offline', async () => {
    const model = writeTinyEmbedder(join(dir, 'tiny-embedder'));
    const embedder = createLocalEmbedder({ model, dimensions: TINY_EMBEDDING_DIMENSIONS, batchSize: 2 });
    expect(embedder.profile).toEqual({ id: `local:${model}`, dimensions: TINY_EMBEDDING_DIMENSIONS });
    const [a, b, c] = await embedder.embed(['the deploy runs', 'deploy runs on friday', 'cats and dogs']);
    for (const v of [a, b, c]) {
      expect(v).toBeInstanceOf(Float32Array);
      expect(v?.length).toBe(TINY_EMBEDDING_DIMENSIONS);
      expect(Math.hypot(...(v as Float32Array))).toBeCloseTo(1, 5);
    }
    const dot = (x: Float32Array, y: Float32Array): number =>
      x.reduce((s, xi, i) => s + xi * (y[i] as number), 0);
    // Texts that share words are closer than texts that share none.
    expect(dot(a as Float32Array, b as Float32Array)).toBeGreaterThan(
      dot(a as Float32Array, c as Float32Array),
    );
    // The same text gives the same vector.
    expect(await embedder.embed(['the deploy runs'])).toEqual([a]);
    expect(requests).toEqual([]);
  }, 120_000);

  it('refuses a model of another width, and a download it was not allowed', async () => {
    const wrong = createLocalEmbedder({ model: join(dir, 'tiny-embedder'), dimensions: 384 });
    expect((await rejection(wrong.embed(['the deploy']))).code).toBe('ENGRAM_LOCAL_MODEL_DIMENSIONS');
    const absent = createLocalEmbedder({
      model: 'Xenova/all-MiniLM-L6-v2',
      dimensions: 384,
      cacheDir: join(dir, 'empty'),
    });
    const error = await rejection(absent.embed(['x']));
    expect(error.code).toBe('ENGRAM_LOCAL_MODEL_NOT_FOUND');
    expect(error.message).toContain('Xenova/all-MiniLM-L6-v2');
    expect(error.message).toContain('allowDownload');
    expect(requests).toEqual([]);
  }, 120_000);
});
