/**
 * The conformance suite of the store port, part five: both search arms as retrieval relies on them (English
 * words and stems, stop words, any and all modes, paths and code identifiers, operator characters searched
 * literally, agent isolation, cosine similarity, kinds, tags, lifecycle, ties and limits), on one corpus.
 */
import { describe, expect, it } from 'vitest';
import {
  type ConformanceNewMemory,
  type ConformanceOpen,
  type ConformancePort,
  vec4,
  withPort,
} from './conformance-port.js';

type Kind = ConformanceNewMemory['kind'] | 'persona';
const corpus: Record<string, Omit<ConformanceNewMemory, 'id' | 'kind'> & { readonly kind: Kind }> = {
  deploying: { agentId: 'alice', kind: 'fact', content: 'We are deploying the new release to production' },
  checklist: {
    agentId: 'alice',
    kind: 'semantic',
    content: 'Deployment checklist: run database migrations first',
  },
  login: {
    agentId: 'alice',
    kind: 'episodic',
    content: 'The login handler lives in src/auth/login.ts and calls getUserById',
    tags: ['file:src/auth/login.ts', 'tool:read'],
  },
  retries: { agentId: 'alice', kind: 'fact', content: 'Set max_retries to 5 for the HTTP client' },
  pool: { agentId: 'alice', kind: 'fact', content: '数据库连接池的大小设置为二十' },
  loginZh: { agentId: 'alice', kind: 'event', content: '用户登录失败时需要记录日志' },
  gateway: { agentId: 'alice', kind: 'fact', content: 'API网关超时 gateway timeout after 30s' },
  syntax: {
    agentId: 'alice',
    kind: 'fact',
    content: 'Literal syntax: say "hello" to NEAR(x) and a*b with key:value - done',
  },
  persona: { agentId: 'alice', kind: 'persona', content: 'Persona draft: prefers concise deployment notes' },
  bobLogin: {
    agentId: 'bob',
    kind: 'episodic',
    content: 'The login handler lives in src/auth/login.ts and calls getUserById',
  },
  bobPool: { agentId: 'bob', kind: 'fact', content: '数据库连接池的大小设置为二十' },
};

const vectors: Record<string, Float32Array> = {
  login: vec4(1, 0, 0, 0),
  bobLogin: vec4(1, 0, 0, 0),
  pool: vec4(0, 1, 0, 0),
  bobPool: vec4(0, 1, 0, 0),
  retries: vec4(0, 0, 1, 0),
};

type Query = {
  readonly agentId?: string;
  readonly terms: readonly string[];
  readonly limit?: number;
  readonly mode?: 'any' | 'all';
  readonly kinds?: readonly string[];
  readonly tags?: readonly string[];
};

/** Runs `fn` on a fresh store holding the corpus; `ids` searches agent alice lexically (limit 50). */
const withCorpus = (
  open: ConformanceOpen,
  fn: (s: ConformancePort, ids: (q: Query) => Promise<string[]>) => Promise<void>,
) =>
  withPort(open, async (s) => {
    for (const [key, input] of Object.entries(corpus)) {
      const vector = vectors[key];
      await s.insertMemory({
        ...(input as ConformanceNewMemory),
        id: key,
        ...(vector === undefined ? {} : { vector }),
      });
    }
    const ids = async (q: Query): Promise<string[]> =>
      (await s.searchLexical({ agentId: 'alice', limit: 50, ...q })).hits.map((h) => h.id);
    await fn(s, ids);
  });

/** Registers the search part of the suite. */
export function describeSearchConformance(name: string, open: ConformanceOpen): void {
  describe(`store port conformance: ${name}: English word search`, () => {
    it(
      'finds words case-insensitively and ranks the matching row first',
      withCorpus(open, async (_s, ids) => {
        expect(await ids({ terms: ['PRODUCTION'] })).toEqual(['deploying']);
        expect(await ids({ terms: ['checklist'] })).toEqual(['checklist']);
      }),
    );

    it(
      'stems with Porter: plural and -ing forms meet, -ment is a different stem',
      withCorpus(open, async (_s, ids) => {
        expect(await ids({ terms: ['migration'] })).toEqual(['checklist']);
        expect(await ids({ terms: ['releases'] })).toEqual(['deploying']);
        // Porter: deploying → "deploi", deploy → "deploi", deployment → "deploy".
        expect(await ids({ terms: ['deploy'] })).toEqual(['deploying']);
        expect(await ids({ terms: ['deployment'] })).toEqual(['checklist']);
      }),
    );

    it(
      'drops stop words in any mode but searches a stop word alone',
      withCorpus(open, async (s, ids) => {
        const result = await s.searchLexical({ agentId: 'alice', terms: ['the', 'checklist'], limit: 10 });
        expect(result.hits.map((h) => h.id)).toEqual(['checklist']);
        expect(result.droppedTerms).toBe(1);
        const alone = await ids({ terms: ['the'] });
        expect(alone).toContain('deploying');
        expect(alone).toContain('login');
      }),
    );

    it(
      'any mode is OR, all mode is AND',
      withCorpus(open, async (_s, ids) => {
        expect(new Set(await ids({ terms: ['production', 'getUserById'] }))).toEqual(
          new Set(['deploying', 'login']),
        );
        expect(await ids({ terms: ['production', 'getUserById'], mode: 'all' })).toEqual([]);
        expect(await ids({ terms: ['handler', 'getUserById'], mode: 'all' })).toEqual(['login']);
      }),
    );
  });

  describe(`store port conformance: ${name}: paths and code identifiers`, () => {
    it(
      'finds a file path as a phrase; camelCase and snake_case identifiers',
      withCorpus(open, async (_s, ids) => {
        expect(await ids({ terms: ['src/auth/login.ts'] })).toEqual(['login']);
        expect(await ids({ terms: ['src/auth/logout.ts'] })).toEqual([]);
        expect(await ids({ terms: ['getUserById'] })).toEqual(['login']);
        expect(await ids({ terms: ['getuserbyid'] })).toEqual(['login']);
        expect(await ids({ terms: ['max_retries'] })).toEqual(['retries']);
      }),
    );
  });

  describe(`store port conformance: ${name}: query syntax is searched literally`, () => {
    it(
      'never throws on operator characters and finds literal text where the tokenizer keeps it',
      withCorpus(open, async (s, ids) => {
        for (const term of [
          '"',
          '*',
          '-',
          ':',
          '(',
          ')',
          '^',
          '{',
          '}',
          'NEAR(',
          'AND',
          'OR',
          'NOT',
          '"unterminated',
        ]) {
          await expect(
            s.searchLexical({ agentId: 'alice', terms: [term], limit: 10 }),
          ).resolves.toBeDefined();
        }
        expect(await ids({ terms: ['"'] })).toEqual([]);
        expect(await ids({ terms: ['*'] })).toEqual([]);
        expect(await ids({ terms: ['-'] })).toEqual([]);
        expect(await ids({ terms: [':'] })).toEqual([]);
        expect(await ids({ terms: ['NEAR('] })).toEqual(['syntax']);
        expect(await ids({ terms: ['NEAR(x)'] })).toEqual(['syntax']);
        expect(await ids({ terms: ['"hello"'] })).toEqual(['syntax']);
        expect(await ids({ terms: ['key:value'] })).toEqual(['syntax']);
        expect(await ids({ terms: ['a*b'] })).toEqual(['syntax']);
        expect(await ids({ terms: ['value - done'] })).toEqual(['syntax']);
        const and = await ids({ terms: ['AND'] });
        expect(and).toContain('syntax');
        expect(and).toContain('login');
      }),
    );

    it(
      'an injection attempt stays one literal phrase',
      withCorpus(open, async (_s, ids) => {
        // Unquoted, this would be `x OR production` and match the deployment row.
        expect(await ids({ terms: ['x" OR "production'] })).toEqual([]);
        expect(await ids({ terms: ['x" OR production*'] })).toEqual([]);
        // A column filter cannot escape the content column.
        expect(await ids({ terms: ['agent : x'] })).toEqual([]);
        expect(await ids({ terms: ['production', 'zzz" NOT "production'], mode: 'any' })).toEqual([
          'deploying',
        ]);
      }),
    );
  });

  describe(`store port conformance: ${name}: agent isolation and the vector arm`, () => {
    it(
      'the lexical arm never returns another agent’s identical row',
      withCorpus(open, async (_s, ids) => {
        expect(await ids({ terms: ['getUserById'] })).toEqual(['login']);
        expect(await ids({ agentId: 'bob', terms: ['getUserById'] })).toEqual(['bobLogin']);
        expect(await ids({ terms: ['数据库连接池'] })).toEqual(['pool']);
        expect(await ids({ agentId: 'bob', terms: ['数据库连接池'] })).toEqual(['bobPool']);
        expect(await ids({ agentId: 'bob', terms: ['设置'] })).toEqual(['bobPool']);
        expect(await ids({ agentId: 'carol', terms: ['getUserById', '数据库', '设置'] })).toEqual([]);
      }),
    );

    it(
      'the vector arm searches one agent’s rows only',
      withCorpus(open, async (s) => {
        const alice = await s.searchVector({ agentId: 'alice', vector: vec4(1, 0.1, 0, 0), k: 100 });
        expect(alice.map((h) => h.id)).toEqual(['login', 'pool', 'retries']);
        const bob = await s.searchVector({ agentId: 'bob', vector: vec4(1, 0.1, 0, 0), k: 100 });
        expect(bob.map((h) => h.id)).toEqual(['bobLogin', 'bobPool']);
        expect(await s.searchVector({ agentId: 'carol', vector: vec4(1, 0, 0, 0), k: 10 })).toEqual([]);
      }),
    );

    it(
      'reports cosine distance and similarity = 1 − distance, nearest first, bounded by k',
      withCorpus(open, async (s) => {
        const hits = await s.searchVector({ agentId: 'alice', vector: vec4(0, 2, 0, 0), k: 2 });
        expect(hits).toHaveLength(2);
        expect(hits[0]?.id).toBe('pool');
        expect(hits[0]?.distance).toBeCloseTo(0, 6);
        expect(hits[0]?.similarity).toBeCloseTo(1, 6);
        expect(hits[1]?.distance).toBeCloseTo(1, 6);
        for (const h of hits) expect(h.similarity).toBeCloseTo(1 - h.distance, 12);
      }),
    );

    it(
      'rejects query vectors of the wrong length or with NaN',
      withCorpus(open, async (s) => {
        await expect(
          s.searchVector({ agentId: 'alice', vector: new Float32Array([1, 0, 0]), k: 3 }),
        ).rejects.toMatchObject({ code: 'ENGRAM_STORE_VECTOR_DIMENSIONS' });
        await expect(
          s.searchVector({ agentId: 'alice', vector: vec4(1, Number.NaN, 0, 0), k: 3 }),
        ).rejects.toMatchObject({
          code: 'ENGRAM_STORE_VECTOR_INVALID',
        });
      }),
    );
  });

  describe(`store port conformance: ${name}: filters and ordering`, () => {
    it(
      'returns recallable kinds by default and other kinds only when asked',
      withCorpus(open, async (_s, ids) => {
        expect(await ids({ terms: ['concise'] })).toEqual([]);
        expect(await ids({ terms: ['concise'], kinds: ['persona'] })).toEqual(['persona']);
        expect(await ids({ terms: ['getUserById'], kinds: ['fact'] })).toEqual([]);
        expect(await ids({ terms: ['getUserById'], kinds: [] })).toEqual([]);
      }),
    );

    it(
      'filters by exact tags (all must be present)',
      withCorpus(open, async (_s, ids) => {
        expect(await ids({ terms: ['handler'], tags: ['file:src/auth/login.ts'] })).toEqual(['login']);
        expect(await ids({ terms: ['handler'], tags: ['file:src/auth/login.ts', 'tool:read'] })).toEqual([
          'login',
        ]);
        expect(await ids({ terms: ['handler'], tags: ['file:src/auth/login.ts', 'tool:write'] })).toEqual([]);
        expect(await ids({ terms: ['handler'], tags: ['file:src/auth'] })).toEqual([]);
      }),
    );

    it(
      'returns only active rows',
      withCorpus(open, async (s, ids) => {
        const extra = await s.insertMemory({
          agentId: 'alice',
          kind: 'fact',
          content: 'ephemeral zebra note',
        });
        expect(await ids({ terms: ['zebra'] })).toEqual([extra.id]);
        await s.archiveMemory('alice', extra.id);
        expect(await ids({ terms: ['zebra'] })).toEqual([]);
      }),
    );

    it(
      'orders ties by id and honours the limit',
      withPort(open, async (s) => {
        const twins = await s.insertMemories([
          // Equal lengths and term counts (exact duplicates would be stored once): equal scores for `twin`.
          { id: 'twin-b', agentId: 'dora', kind: 'fact', content: 'identical twin text one' },
          { id: 'twin-a', agentId: 'dora', kind: 'fact', content: 'identical twin text two' },
          { id: 'twin-c', agentId: 'dora', kind: 'fact', content: 'identical twin text six' },
        ]);
        expect(twins).toHaveLength(3);
        const result = await s.searchLexical({ agentId: 'dora', terms: ['twin'], limit: 10 });
        expect(result.hits.map((h) => h.id)).toEqual(['twin-a', 'twin-b', 'twin-c']);
        const top2 = await s.searchLexical({ agentId: 'dora', terms: ['twin'], limit: 2 });
        expect(top2.hits.map((h) => h.id)).toEqual(['twin-a', 'twin-b']);
      }),
    );

    it(
      'an empty term list returns no hits and uses no path',
      withCorpus(open, async (s) => {
        const result = await s.searchLexical({ agentId: 'alice', terms: [], limit: 10 });
        expect(result).toEqual({
          hits: [],
          paths: { words: false, trigram: false, like: false },
          likeTerms: [],
          droppedTerms: 0,
        });
        const blank = await s.searchLexical({ agentId: 'alice', terms: ['  ', '"'], limit: 10 });
        expect(blank.hits).toEqual([]);
        expect(blank.droppedTerms).toBe(2);
      }),
    );
  });
}
