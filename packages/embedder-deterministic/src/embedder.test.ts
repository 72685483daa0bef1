import { describe, expect, it } from 'vitest';
import {
  CONCEPT_GROUPS_V1,
  createDeterministicEmbedder,
  DETERMINISTIC_PROFILE,
  extractFeatures,
  featureSlot,
  fnv1a32,
  isEngramEmbedderError,
  isZeroVector,
} from './index.js';

/** Non-zero components as `{ index: value }`, values exactly as stored in the Float32Array. */
function sparse(vector: Float32Array): Record<number, number> {
  const out: Record<number, number> = {};
  vector.forEach((value, index) => {
    if (value !== 0) out[index] = value;
  });
  return out;
}

function norm(vector: Float32Array): number {
  let sum = 0;
  for (const v of vector) sum += v * v;
  return Math.sqrt(sum);
}

function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  for (let i = 0; i < a.length; i += 1) dot += (a[i] ?? 0) * (b[i] ?? 0);
  return dot / (norm(a) * norm(b));
}

const embedder = createDeterministicEmbedder();

describe('FNV-1a', () => {
  it('matches the published 32-bit FNV-1a test vectors', () => {
    expect(fnv1a32('')).toBe(0x811c9dc5);
    expect(fnv1a32('a')).toBe(0xe40c292c);
    expect(fnv1a32('foobar')).toBe(0xbf9cf968);
  });

  it('hashes the UTF-8 bytes of non-ASCII features', () => {
    expect(fnv1a32('k:数据库')).toBe(0x33e9c848);
  });

  it('takes the bucket from h % 128 and the sign from bit 31', () => {
    // 0xfb36c7d4 % 128 = 84, bit 31 set.
    expect(fnv1a32('t:outage')).toBe(0xfb36c7d4);
    expect(featureSlot('t:outage', 128)).toEqual({ bucket: 84, sign: -1 });
    // 0x147772df % 128 = 95, bit 31 clear.
    expect(fnv1a32('c:outage')).toBe(0x147772df);
    expect(featureSlot('c:outage', 128)).toEqual({ bucket: 95, sign: 1 });
  });
});

describe('golden vectors of deterministic-lexicon-v1', () => {
  it('pins the profile', () => {
    expect(DETERMINISTIC_PROFILE).toEqual({ id: 'deterministic-lexicon-v1', dimensions: 128 });
    expect(embedder.profile).toEqual(DETERMINISTIC_PROFILE);
  });

  it('pins an English sentence with concept features', () => {
    const text = 'Production outage after the Redis cache deploy';
    expect(extractFeatures(text)).toEqual([
      't:production',
      't:outage',
      'c:outage',
      't:after',
      't:the',
      't:redis',
      'c:cache',
      't:cache',
      't:deploy',
      'c:deploy',
    ]);
    const vector = embedder.embedSync(text);
    expect(vector).toBeInstanceOf(Float32Array);
    expect(vector.length).toBe(128);
    expect(Array.from(vector.slice(0, 8))).toEqual([0, 0, 0, 0, 0, 0, 0, 0]);
    // "the" and "redis" collide in bucket 94 with the same sign, hence -2/sqrt(12).
    expect(sparse(vector)).toEqual({
      11: 0.28867512941360474,
      18: 0.28867512941360474,
      48: -0.28867512941360474,
      51: 0.28867512941360474,
      84: -0.28867512941360474,
      94: -0.5773502588272095,
      95: 0.28867512941360474,
      108: 0.28867512941360474,
      111: -0.28867512941360474,
    });
  });

  it('pins a path with its parts', () => {
    const text = 'src/store/sqlite-vec.ts:42';
    expect(extractFeatures(text)).toEqual([
      't:src/store/sqlite-vec.ts:42',
      'p:src',
      'p:store',
      'p:sqlite',
      'p:vec',
      'p:ts',
      'p:42',
      'c:database',
    ]);
    expect(sparse(embedder.embedSync(text))).toEqual({
      32: -0.3162277638912201,
      40: -0.3162277638912201,
      67: 0.3162277638912201,
      86: -0.3162277638912201,
      91: -0.6324555277824402,
      101: -0.3162277638912201,
      105: 0.3162277638912201,
    });
  });

  it('pins a Chinese sentence by its 3-character windows', () => {
    const text = '数据库连接超时了';
    expect(extractFeatures(text)).toEqual([
      'k:数据库',
      'k:据库连',
      'k:库连接',
      'k:连接超',
      'k:接超时',
      'k:超时了',
    ]);
    expect(sparse(embedder.embedSync(text))).toEqual({
      27: 0.40824830532073975,
      64: 0.40824830532073975,
      72: 0.40824830532073975,
      81: 0.40824830532073975,
      100: 0.40824830532073975,
      104: -0.40824830532073975,
    });
  });
});

describe('vectors', () => {
  const samples = [
    'The login service returned HTTP 500 errors',
    'packages/store/src/index.ts',
    'fooBar_baz @scope/pkg#main',
    '全角ＡＢＣ　と　カタカナ　한국어',
    'x',
  ];

  it('are identical across calls and embedder instances', async () => {
    const other = createDeterministicEmbedder({ conceptFeatures: true });
    const batch = await embedder.embed(samples);
    for (const [i, text] of samples.entries()) {
      expect(batch[i]).toEqual(embedder.embedSync(text));
      expect(other.embedSync(text)).toEqual(embedder.embedSync(text));
    }
  });

  it('are L2-normalised', () => {
    for (const text of samples) {
      expect(Math.abs(norm(embedder.embedSync(text)) - 1)).toBeLessThan(1e-6);
    }
  });

  it('fits the async embedder port that retrieval and maintenance declare', async () => {
    interface EmbedderPort {
      readonly profile?: { readonly id: string; readonly dimensions: number };
      embed(texts: readonly string[], options?: { readonly signal?: AbortSignal }): Promise<Float32Array[]>;
    }
    const port: EmbedderPort = embedder;
    expect(port.profile).toEqual({ id: 'deterministic-lexicon-v1', dimensions: 128 });
    const [vector] = await port.embed(['outage']);
    expect(vector?.length).toBe(128);
  });

  it('returns one new vector per text in input order', async () => {
    const vectors = await embedder.embed(['outage', 'cache', 'outage']);
    expect(vectors).toHaveLength(3);
    expect(vectors[0]).toEqual(vectors[2]);
    expect(vectors[0]).not.toBe(vectors[2]);
    expect(vectors[0]).not.toEqual(vectors[1]);
    expect(await embedder.embed([])).toEqual([]);
  });

  it('gives the zero vector for a text without features', () => {
    for (const text of ['', '   ', '!?,;()']) {
      const vector = embedder.embedSync(text);
      expect(vector.length).toBe(128);
      expect(isZeroVector(vector)).toBe(true);
    }
    expect(isZeroVector(embedder.embedSync('a'))).toBe(false);
  });

  it('normalises with NFKC and lower case', () => {
    expect(embedder.embedSync('ＯＵＴＡＧＥ')).toEqual(embedder.embedSync('outage'));
    expect(embedder.embedSync('Deploy')).toEqual(embedder.embedSync('deploy'));
  });
});

describe('features', () => {
  it('splits tokens into parts on . / : @ # + - but keeps underscores', () => {
    expect(extractFeatures('user@example.com', { conceptFeatures: false })).toEqual([
      't:user@example.com',
      'p:user',
      'p:example',
      'p:com',
    ]);
    expect(extractFeatures('snake_case c++ #42', { conceptFeatures: false })).toEqual([
      't:snake_case',
      't:c++',
      'p:c',
      't:#42',
      'p:42',
    ]);
  });

  it('adds a concept when a token or one of its parts is a synonym-table term', () => {
    expect(extractFeatures('redis')).toContain('c:cache');
    expect(extractFeatures('sign-in')).toContain('c:auth');
    expect(extractFeatures('config/db.yaml')).toEqual(
      expect.arrayContaining(['c:config', 'c:database', 'p:config', 'p:db', 'p:yaml']),
    );
    expect(extractFeatures('production release').filter((f) => f.startsWith('c:'))).toEqual(['c:deploy']);
  });

  it('deduplicates features', () => {
    expect(extractFeatures('outage Outage incident')).toEqual(['t:outage', 'c:outage', 't:incident']);
  });

  it('windows each CJK run by code point and keeps short runs whole', () => {
    expect(extractFeatures('缓存 失效了 ok', { conceptFeatures: false })).toEqual([
      't:ok',
      'k:缓存',
      'k:失效了',
    ]);
    expect(extractFeatures('ひらがなカタカナ')).toEqual([
      'k:ひらが',
      'k:らがな',
      'k:がなカ',
      'k:なカタ',
      'k:カタカ',
      'k:タカナ',
    ]);
    expect(extractFeatures('한국어입니다')).toEqual(['k:한국어', 'k:국어입', 'k:어입니', 'k:입니다']);
    // A supplementary-plane Han character counts as one code point.
    expect(extractFeatures('𠮷野家')).toEqual(['k:𠮷野家']);
  });
});

describe('concept features', () => {
  it('bring synonyms closer than unrelated words, and the ablation removes that', () => {
    const ablated = createDeterministicEmbedder({ conceptFeatures: false });
    expect(ablated.conceptFeatures).toBe(false);
    const withConcepts = cosine(embedder.embedSync('outage'), embedder.embedSync('incident'));
    const unrelated = cosine(embedder.embedSync('outage'), embedder.embedSync('banana'));
    const withoutConcepts = cosine(ablated.embedSync('outage'), ablated.embedSync('incident'));
    expect(withConcepts).toBeGreaterThan(unrelated);
    expect(withConcepts).toBeGreaterThan(0.4);
    expect(Math.abs(withoutConcepts)).toBeLessThan(1e-6);
    expect(withoutConcepts).toBeLessThan(withConcepts);
  });

  it('has about ten groups, each term in exactly one group', () => {
    expect(CONCEPT_GROUPS_V1.length).toBeGreaterThanOrEqual(8);
    expect(CONCEPT_GROUPS_V1.length).toBeLessThanOrEqual(12);
    const terms = CONCEPT_GROUPS_V1.flatMap((group) => group.terms);
    expect(new Set(terms).size).toBe(terms.length);
    for (const term of terms) expect(term).toBe(term.normalize('NFKC').toLowerCase());
    expect(Object.isFrozen(CONCEPT_GROUPS_V1)).toBe(true);
  });
});

describe('errors', () => {
  it('rejects with an AbortError when the signal is already aborted', async () => {
    const controller = new AbortController();
    const reason = new Error('stop');
    controller.abort(reason);
    const error = await embedder.embed(['outage'], { signal: controller.signal }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isEngramEmbedderError(error)).toBe(true);
    expect(error).toMatchObject({ name: 'AbortError', code: 'ENGRAM_EMBEDDER_ABORTED', cause: reason });
  });

  it('embeds normally with a live signal', async () => {
    const controller = new AbortController();
    const [vector] = await embedder.embed(['outage'], { signal: controller.signal });
    expect(vector).toEqual(embedder.embedSync('outage'));
  });

  it('rejects non-string input with a typed error that does not echo the input', async () => {
    const error = await embedder.embed([42 as unknown as string]).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isEngramEmbedderError(error)).toBe(true);
    expect(error).toMatchObject({ name: 'EngramEmbedderError', code: 'ENGRAM_EMBEDDER_INVALID_INPUT' });
    expect(String((error as Error).message)).not.toContain('42');
    expect(isEngramEmbedderError(new Error('x'))).toBe(false);
    expect(isEngramEmbedderError({ code: 'ENGRAM_EMBEDDER_ABORTED', name: 'Error' })).toBe(false);
  });
});
