// The SQLite store's lexical paths (FTS5 words, the trigram index, the bounded LIKE scan) as its results report
// them. What every store's search returns for the same queries is the conformance suite's (@engram/test-support).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LexicalQuery, MemoryRecord, NewMemory } from '@engram/store/port-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSqliteMemoryStore, type SqliteMemoryStore } from './sqlite-store.js';

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

describe('a huge term', () => {
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
});

describe('LIKE ordering', () => {
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

describe('BM25 ordering', () => {
  it('equal scores are ordered by id in SQLite order (UTF-8 bytes), also when the limit cuts through the ties', async () => {
    // The same words in another order: the same score. Inserted out of id order.
    const ids = ['eq-b', 'eq-\u{1F600}', 'eq-a', 'eq-\uE000'];
    const words = ['quartz', 'ledger', 'otter'];
    for (const [i, id] of ids.entries()) {
      const content = [...words.slice(i % 3), ...words.slice(0, i % 3)].join(' ');
      await store.insertMemory({ id, agentId: 'dave', kind: i === 3 ? 'semantic' : 'fact', content });
    }
    await store.insertMemory({
      id: 'eq-long',
      agentId: 'dave',
      kind: 'fact',
      content: 'quartz ledger otter and more',
    });
    const all = await store.searchLexical({ agentId: 'dave', terms: ['quartz', 'otter'], limit: 10 });
    expect(all.hits.map((h) => h.id)).toEqual(['eq-a', 'eq-b', 'eq-\uE000', 'eq-\u{1F600}', 'eq-long']);
    expect(new Set(all.hits.slice(0, 4).map((h) => h.score)).size).toBe(1);
    const top2 = await store.searchLexical({ agentId: 'dave', terms: ['quartz', 'otter'], limit: 2 });
    expect(top2.hits.map((h) => h.id)).toEqual(['eq-a', 'eq-b']);
    // A kind filter that drops units above the cut: the search runs again without the cut and still fills up.
    const facts = await store.searchLexical({
      agentId: 'dave',
      terms: ['quartz'],
      limit: 1,
      kinds: ['semantic'],
    });
    expect(facts.hits.map((h) => h.id)).toEqual(['eq-\uE000']);
  });
});

describe('vector ordering', () => {
  it('equal distances are ordered by id in SQLite order (UTF-8 bytes), whatever the k-NN returned first', async () => {
    const tie = new Float32Array([0, 0, 0.6, 0.8]);
    // Inserted out of order; U+E000 sorts before a code point above U+FFFF in UTF-8 (not in UTF-16).
    const ids = ['tie-b', 'tie-\u{1F600}', 'tie-a', 'tie-\uE000'];
    for (const [i, id] of ids.entries()) {
      await store.insertMemory({ id, agentId: 'carol', kind: 'fact', content: `tie row ${i}`, vector: tie });
    }
    await store.insertMemory({
      id: 'tie-far',
      agentId: 'carol',
      kind: 'fact',
      content: 'far row',
      vector: new Float32Array([1, 0, 0, 0]),
    });
    const hits = await store.searchVector({ agentId: 'carol', vector: tie, k: 10 });
    expect(hits.map((h) => h.id)).toEqual(['tie-a', 'tie-b', 'tie-\uE000', 'tie-\u{1F600}', 'tie-far']);
    expect(hits[0]?.similarity).toBeCloseTo(1, 6);
    // With k below the ties, which tied rows the index keeps is its own choice; they still come in id order.
    const top3 = (await store.searchVector({ agentId: 'carol', vector: tie, k: 3 })).map((h) => h.id);
    expect(top3).toHaveLength(3);
    expect(top3).toEqual(hits.map((h) => h.id).filter((id) => top3.includes(id)));
  });
});
