import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSqliteMemoryStore, type SqliteMemoryStore } from './sqlite-store.js';
import type { LexicalQuery, MemoryRecord, NewMemory } from './types.js';

const profile = { id: 'test-v1', dimensions: 4 };
let dir: string;
let store: SqliteMemoryStore;
const rows: Record<string, MemoryRecord> = {};

const corpus: Record<string, Omit<NewMemory, 'id'>> = {
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
  login: new Float32Array([1, 0, 0, 0]),
  bobLogin: new Float32Array([1, 0, 0, 0]),
  pool: new Float32Array([0, 1, 0, 0]),
  bobPool: new Float32Array([0, 1, 0, 0]),
  retries: new Float32Array([0, 0, 1, 0]),
};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'engram-search-'));
  store = createSqliteMemoryStore({ path: join(dir, 'search.db'), embedding: profile });
  for (const [key, input] of Object.entries(corpus)) {
    const vector = vectors[key];
    rows[key] = await store.insertMemory({ ...input, id: key, ...(vector === undefined ? {} : { vector }) });
  }
});

afterAll(() => {
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

async function ids(query: Omit<LexicalQuery, 'agentId' | 'limit'> & { agentId?: string; limit?: number }) {
  const result = await store.searchLexical({ agentId: 'alice', limit: 50, ...query });
  return result.hits.map((h) => h.id);
}

describe('CJK search', () => {
  it('a 2-character query goes through the bounded LIKE path and says so', async () => {
    const result = await store.searchLexical({ agentId: 'alice', terms: ['登录'], limit: 10 });
    expect(result.hits.map((h) => h.id)).toEqual(['loginZh']);
    expect(result.paths).toEqual({ words: false, trigram: false, like: true });
    expect(result.likeTerms).toEqual(['登录']);
    expect(result.hits[0]?.revision).toBe(1);
  });

  it('a 3-character query uses the trigram index', async () => {
    const result = await store.searchLexical({ agentId: 'alice', terms: ['连接池'], limit: 10 });
    expect(result.hits.map((h) => h.id)).toEqual(['pool']);
    expect(result.paths).toEqual({ words: false, trigram: true, like: false });
    expect(result.likeTerms).toEqual([]);
    expect(result.hits[0]?.score).toBeGreaterThan(0);
  });

  it('a 6-character query matches by overlapping trigrams in any mode and as a substring in all mode', async () => {
    expect(await ids({ terms: ['数据库连接池'] })).toEqual(['pool']);
    expect(await ids({ terms: ['数据库连接池'], mode: 'all' })).toEqual(['pool']);
    // A whole question shares only some trigrams with the row: any mode still finds it, all mode does not.
    expect(await ids({ terms: ['连接池的大小是多少'] })).toEqual(['pool']);
    expect(await ids({ terms: ['连接池的大小是多少'], mode: 'all' })).toEqual([]);
  });

  it('a single CJK character is a LIKE term too', async () => {
    const result = await store.searchLexical({ agentId: 'alice', terms: ['池'], limit: 10 });
    expect(result.hits.map((h) => h.id)).toEqual(['pool']);
    expect(result.likeTerms).toEqual(['池']);
  });

  it('the LIKE path matches the NFKC form of the content, as the FTS indexes do', async () => {
    // Half-width katakana and Kangxi radicals (common in text copied out of PDFs) normalise to the ordinary
    // characters; a 2-character query must find them in either form, like a 3-character (trigram) query does.
    await store.insertMemories([
      { id: 'halfwidth', agentId: 'nfkc', kind: 'fact', content: 'ｶﾀｶﾅで書いたメモ' },
      { id: 'kangxi', agentId: 'nfkc', kind: 'fact', content: '⼈⼯智能的会议纪要' },
    ]);
    for (const term of ['ｶﾀ', 'カタ', 'ｶﾀｶ', 'カタカ']) {
      expect(await ids({ agentId: 'nfkc', terms: [term] })).toEqual(['halfwidth']);
    }
    for (const term of ['人工', '⼈⼯', '人工智', '⼈⼯智']) {
      expect(await ids({ agentId: 'nfkc', terms: [term] })).toEqual(['kangxi']);
    }
    const like = await store.searchLexical({ agentId: 'nfkc', terms: ['⼈⼯'], limit: 10 });
    expect(like.paths).toEqual({ words: false, trigram: false, like: true });
    expect(like.likeTerms).toEqual(['人工']);
    expect(await ids({ agentId: 'nfkc', terms: ['人工', '会议纪要'], mode: 'all' })).toEqual(['kangxi']);
    expect(await ids({ agentId: 'nfkc', terms: ['人工', 'カタ'], mode: 'all' })).toEqual([]);
    // An edit keeps the LIKE text in step with the content.
    const row = await store.getMemory('nfkc', 'kangxi');
    await store.updateMemory('nfkc', 'kangxi', row?.revision ?? 0, { content: '⼤⼩写的规则' });
    expect(await ids({ agentId: 'nfkc', terms: ['人工'] })).toEqual([]);
    expect(await ids({ agentId: 'nfkc', terms: ['大小'] })).toEqual(['kangxi']);
  });

  it('mixed CJK + Latin terms combine paths; all mode requires every part', async () => {
    const any = await store.searchLexical({ agentId: 'alice', terms: ['网关超时', 'migrations'], limit: 10 });
    expect(new Set(any.hits.map((h) => h.id))).toEqual(new Set(['gateway', 'checklist']));
    expect(any.paths).toEqual({ words: true, trigram: true, like: false });
    expect(await ids({ terms: ['网关超时', 'gateway'], mode: 'all' })).toEqual(['gateway']);
    expect(await ids({ terms: ['网关超时', 'migrations'], mode: 'all' })).toEqual([]);
    expect(await ids({ terms: ['网关', 'timeout'], mode: 'all' })).toEqual(['gateway']);
    expect(await ids({ terms: ['网关', 'migrations'], mode: 'all' })).toEqual([]);
    expect(await ids({ terms: ['连接池', '设置'], mode: 'all' })).toEqual(['pool']);
    expect(await ids({ terms: ['连接池', '登录'], mode: 'all' })).toEqual([]);
    expect(await ids({ terms: ['连接', '设置'], mode: 'all' })).toEqual(['pool']);
    expect(await ids({ terms: ['连接', '登录'], mode: 'all' })).toEqual([]);
    expect(new Set(await ids({ terms: ['连接', '登录'] }))).toEqual(new Set(['pool', 'loginZh']));
  });
});

describe('English word search', () => {
  it('finds words case-insensitively and ranks the matching row first', async () => {
    expect(await ids({ terms: ['PRODUCTION'] })).toEqual(['deploying']);
    expect(await ids({ terms: ['checklist'] })).toEqual(['checklist']);
  });

  it('stems with Porter: plural and -ing forms meet, -ment is a different stem', async () => {
    expect(await ids({ terms: ['migration'] })).toEqual(['checklist']);
    expect(await ids({ terms: ['releases'] })).toEqual(['deploying']);
    // Porter: deploying → "deploi", deploy → "deploi", deployment → "deploy".
    expect(await ids({ terms: ['deploy'] })).toEqual(['deploying']);
    expect(await ids({ terms: ['deployment'] })).toEqual(['checklist']);
  });

  it('drops stop words in any mode but searches a stop word alone', async () => {
    const result = await store.searchLexical({ agentId: 'alice', terms: ['the', 'checklist'], limit: 10 });
    expect(result.hits.map((h) => h.id)).toEqual(['checklist']);
    expect(result.droppedTerms).toBe(1);
    const alone = await ids({ terms: ['the'] });
    expect(alone).toContain('deploying');
    expect(alone).toContain('login');
  });

  it('any mode is OR, all mode is AND', async () => {
    expect(new Set(await ids({ terms: ['production', 'getUserById'] }))).toEqual(
      new Set(['deploying', 'login']),
    );
    expect(await ids({ terms: ['production', 'getUserById'], mode: 'all' })).toEqual([]);
    expect(await ids({ terms: ['handler', 'getUserById'], mode: 'all' })).toEqual(['login']);
  });
});

describe('paths and code identifiers', () => {
  it('finds a file path as a phrase', async () => {
    expect(await ids({ terms: ['src/auth/login.ts'] })).toEqual(['login']);
    expect(await ids({ terms: ['src/auth/logout.ts'] })).toEqual([]);
  });

  it('finds camelCase and snake_case identifiers', async () => {
    expect(await ids({ terms: ['getUserById'] })).toEqual(['login']);
    expect(await ids({ terms: ['getuserbyid'] })).toEqual(['login']);
    expect(await ids({ terms: ['max_retries'] })).toEqual(['retries']);
  });
});

describe('FTS5 syntax is searched literally', () => {
  it('never throws on operator characters and finds literal text where the tokenizer keeps it', async () => {
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
        store.searchLexical({ agentId: 'alice', terms: [term], limit: 10 }),
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
  });

  it('a 1 MB term costs a bounded query: the first 256 code points are searched (found by the hostile-input suite)', async () => {
    // Before the cut, a 1 MB phrase took FTS5 tens of seconds (words) to minutes (trigram, `all` mode), and a
    // 1M-character CJK run in `any` mode failed with ENGRAM_STORE_UNKNOWN (a spread of a million windows).
    const huge = `deploying the new release ${'x '.repeat(500_000)}`;
    for (const mode of ['any', 'all'] as const) {
      const result = await store.searchLexical({ agentId: 'alice', terms: [huge], mode, limit: 10 });
      expect(result.paths.words).toBe(true);
    }
    // Only the first 256 code points count: a huge term that starts with a word finds that word.
    expect(await ids({ terms: [`production${' '.repeat(1_000_000)}zzz`], mode: 'all' })).toEqual([
      'deploying',
    ]);
    for (const mode of ['any', 'all'] as const) {
      const cjk = await store.searchLexical({
        agentId: 'alice',
        terms: ['数据库连接池'.repeat(200_000)],
        mode,
        limit: 10,
      });
      expect(cjk.paths.trigram).toBe(true);
      expect(cjk.hits.map((h) => h.id)).toEqual(mode === 'any' ? ['pool'] : []);
    }
  });

  it('an injection attempt stays one literal phrase', async () => {
    // Unquoted, this would be `x OR production` and match the deployment row.
    expect(await ids({ terms: ['x" OR "production'] })).toEqual([]);
    expect(await ids({ terms: ['x" OR production*'] })).toEqual([]);
    // A column filter cannot escape the content column.
    expect(await ids({ terms: ['agent : x'] })).toEqual([]);
    expect(await ids({ terms: ['production', 'zzz" NOT "production'], mode: 'any' })).toEqual(['deploying']);
  });
});

describe('agent isolation', () => {
  it('the lexical arm never returns another agent’s identical row', async () => {
    expect(await ids({ terms: ['getUserById'] })).toEqual(['login']);
    expect(await ids({ agentId: 'bob', terms: ['getUserById'] })).toEqual(['bobLogin']);
    expect(await ids({ terms: ['数据库连接池'] })).toEqual(['pool']);
    expect(await ids({ agentId: 'bob', terms: ['数据库连接池'] })).toEqual(['bobPool']);
    expect(await ids({ agentId: 'bob', terms: ['设置'] })).toEqual(['bobPool']);
    expect(await ids({ agentId: 'carol', terms: ['getUserById', '数据库', '设置'] })).toEqual([]);
  });

  it('the vector arm searches one agent’s partition only', async () => {
    const alice = await store.searchVector({
      agentId: 'alice',
      vector: new Float32Array([1, 0.1, 0, 0]),
      k: 100,
    });
    expect(alice.map((h) => h.id)).toEqual(['login', 'pool', 'retries']);
    const bob = await store.searchVector({
      agentId: 'bob',
      vector: new Float32Array([1, 0.1, 0, 0]),
      k: 100,
    });
    expect(bob.map((h) => h.id)).toEqual(['bobLogin', 'bobPool']);
    expect(
      await store.searchVector({ agentId: 'carol', vector: new Float32Array([1, 0, 0, 0]), k: 10 }),
    ).toEqual([]);
  });

  it('reports cosine distance and similarity = 1 − distance, nearest first, bounded by k', async () => {
    const hits = await store.searchVector({ agentId: 'alice', vector: new Float32Array([0, 2, 0, 0]), k: 2 });
    expect(hits).toHaveLength(2);
    expect(hits[0]?.id).toBe('pool');
    expect(hits[0]?.distance).toBeCloseTo(0, 6);
    expect(hits[0]?.similarity).toBeCloseTo(1, 6);
    expect(hits[1]?.distance).toBeCloseTo(1, 6);
    for (const h of hits) expect(h.similarity).toBeCloseTo(1 - h.distance, 12);
  });

  it('rejects query vectors of the wrong length or with NaN', async () => {
    await expect(
      store.searchVector({ agentId: 'alice', vector: new Float32Array([1, 0, 0]), k: 3 }),
    ).rejects.toMatchObject({ code: 'ENGRAM_STORE_VECTOR_DIMENSIONS' });
    await expect(
      store.searchVector({ agentId: 'alice', vector: new Float32Array([1, Number.NaN, 0, 0]), k: 3 }),
    ).rejects.toMatchObject({ code: 'ENGRAM_STORE_VECTOR_INVALID' });
  });
});

describe('filters and ordering', () => {
  it('returns recallable kinds by default and other kinds only when asked', async () => {
    expect(await ids({ terms: ['concise'] })).toEqual([]);
    expect(await ids({ terms: ['concise'], kinds: ['persona'] })).toEqual(['persona']);
    expect(await ids({ terms: ['getUserById'], kinds: ['fact'] })).toEqual([]);
    expect(await ids({ terms: ['getUserById'], kinds: [] })).toEqual([]);
  });

  it('filters by exact tags (all must be present)', async () => {
    expect(await ids({ terms: ['handler'], tags: ['file:src/auth/login.ts'] })).toEqual(['login']);
    expect(await ids({ terms: ['handler'], tags: ['file:src/auth/login.ts', 'tool:read'] })).toEqual([
      'login',
    ]);
    expect(await ids({ terms: ['handler'], tags: ['file:src/auth/login.ts', 'tool:write'] })).toEqual([]);
    expect(await ids({ terms: ['handler'], tags: ['file:src/auth'] })).toEqual([]);
  });

  it('returns only active rows', async () => {
    const extra = await store.insertMemory({
      agentId: 'alice',
      kind: 'fact',
      content: 'ephemeral zebra note',
    });
    expect(await ids({ terms: ['zebra'] })).toEqual([extra.id]);
    await store.archiveMemory('alice', extra.id);
    expect(await ids({ terms: ['zebra'] })).toEqual([]);
    await store.deleteMemory('alice', extra.id);
  });

  it('orders ties by id and honours the limit', async () => {
    const twins = await store.insertMemories([
      // Equal lengths and term counts (exact duplicates would be stored once): equal scores for `twin`.
      { id: 'twin-b', agentId: 'dora', kind: 'fact', content: 'identical twin text one' },
      { id: 'twin-a', agentId: 'dora', kind: 'fact', content: 'identical twin text two' },
      { id: 'twin-c', agentId: 'dora', kind: 'fact', content: 'identical twin text six' },
    ]);
    expect(twins).toHaveLength(3);
    const result = await store.searchLexical({ agentId: 'dora', terms: ['twin'], limit: 10 });
    expect(result.hits.map((h) => h.id)).toEqual(['twin-a', 'twin-b', 'twin-c']);
    const top2 = await store.searchLexical({ agentId: 'dora', terms: ['twin'], limit: 2 });
    expect(top2.hits.map((h) => h.id)).toEqual(['twin-a', 'twin-b']);
  });

  it('an empty term list returns no hits and uses no path', async () => {
    const result = await store.searchLexical({ agentId: 'alice', terms: [], limit: 10 });
    expect(result).toEqual({
      hits: [],
      paths: { words: false, trigram: false, like: false },
      likeTerms: [],
      droppedTerms: 0,
    });
    const blank = await store.searchLexical({ agentId: 'alice', terms: ['  ', '"'], limit: 10 });
    expect(blank.hits).toEqual([]);
    expect(blank.droppedTerms).toBe(2);
  });

  it('LIKE hits (all mode) tie on score and are ordered by id; BM25 (any mode) prefers the shorter row', async () => {
    await store.insertMemory({
      id: 'pct',
      agentId: 'erin',
      kind: 'fact',
      content: '折扣为百分之五十 50% off',
    });
    await store.insertMemory({ id: 'plain', agentId: 'erin', kind: 'fact', content: '没有折扣' });
    expect(await ids({ agentId: 'erin', terms: ['折扣'], mode: 'all' })).toEqual(['pct', 'plain']);
    expect(await ids({ agentId: 'erin', terms: ['扣为'], mode: 'all' })).toEqual(['pct']);
    expect(await ids({ agentId: 'erin', terms: ['折扣'] })).toEqual(['plain', 'pct']);
    expect(await ids({ agentId: 'erin', terms: ['扣为'] })).toEqual(['pct']);
  });
});
