/**
 * Rows, compare-and-set writes, deletes and bad input, against a real SQLite file. Longer than 400 lines: the
 * suites share one fixture whose raw handle counts the derived rows (FTS, vector, tags) after every write.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { contentHash } from '@engram/contracts';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase, type SqliteDatabase } from './native.js';
import { createSqliteMemoryStore, type SqliteMemoryStore } from './sqlite-store.js';
import type { NewMemory } from './types.js';

const profile = { id: 'test-v1', dimensions: 4 };
let dir: string;
let path: string;
let store: SqliteMemoryStore;
let clock: number;
let raw: SqliteDatabase | undefined;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'engram-store-'));
  path = join(dir, 'store.db');
  clock = 1_000;
  let n = 0;
  store = createSqliteMemoryStore({
    path,
    embedding: profile,
    now: () => clock,
    idFactory: () => {
      n += 1;
      return `gen-${n}`;
    },
  });
});

afterEach(() => {
  raw?.close();
  raw = undefined;
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A second connection on the same file, to look at the FTS and vector tables directly. */
function rawDb(): SqliteDatabase {
  raw ??= openDatabase(path);
  return raw;
}

function count(sql: string, ...params: unknown[]): number {
  return (
    rawDb()
      .prepare(sql)
      .get(...params) as { n: number }
  ).n;
}

function tableCounts(): Record<string, number> {
  return {
    memories: count('SELECT count(*) AS n FROM memories'),
    tags: count('SELECT count(*) AS n FROM memory_tags'),
    words: count('SELECT count(*) AS n FROM memories_fts_words'),
    trigram: count('SELECT count(*) AS n FROM memories_fts_trigram'),
    vectors: count('SELECT count(*) AS n FROM memories_vec'),
    events: count('SELECT count(*) AS n FROM events'),
    skills: count('SELECT count(*) AS n FROM skills'),
    cursors: count('SELECT count(*) AS n FROM session_cursors'),
  };
}

const base: NewMemory = { agentId: 'alice', kind: 'fact', content: 'The API listens on port 8080' };

describe('insert, get, list', () => {
  it('inserts with defaults and reads the same row back', async () => {
    const rec = await store.insertMemory({ ...base, tags: ['topic:net', 'file:a.ts', 'topic:net'] });
    expect(rec).toMatchObject({
      id: 'gen-1',
      agentId: 'alice',
      kind: 'fact',
      importance: 0.5,
      confidence: 1,
      tags: ['file:a.ts', 'topic:net'],
      contentHash: contentHash(base.content),
      createdAt: 1000,
      updatedAt: 1000,
      lastAccessedAt: null,
      accessCount: 0,
      revision: 1,
      lifecycle: 'active',
      supersededBy: null,
      embeddingState: 'pending',
      embeddingFingerprint: null,
      embeddingAttempts: 0,
      sessionId: null,
      seqFrom: null,
      seqTo: null,
    });
    expect(await store.getMemory('alice', rec.id)).toEqual(rec);
    expect(await store.getMemory('bob', rec.id)).toBeNull();
    expect(await store.getMemory('alice', 'missing')).toBeNull();
  });

  it('stores a vector in the same transaction and marks the row ready', async () => {
    const rec = await store.insertMemory({ ...base, vector: new Float32Array([0, 0, 1, 0]) });
    expect(rec.embeddingState).toBe('ready');
    expect(rec.embeddingFingerprint).toBe('test-v1:4');
    expect(tableCounts().vectors).toBe(1);
  });

  it('lists with filters and keyset pagination', async () => {
    await store.insertMemories([
      { ...base, id: 'c', tags: ['x:1'] },
      { ...base, id: 'a', kind: 'semantic', tags: ['x:1', 'y:2'] },
      { ...base, id: 'b', content: 'The API listens on port 8081' },
      { ...base, id: 'z', agentId: 'bob' },
    ]);
    await store.archiveMemory('alice', 'b');
    const all = await store.listMemories('alice');
    expect(all.map((r) => r.id)).toEqual(['a', 'b', 'c']);
    expect((await store.listMemories('alice', { limit: 2 })).map((r) => r.id)).toEqual(['a', 'b']);
    expect((await store.listMemories('alice', { afterId: 'b' })).map((r) => r.id)).toEqual(['c']);
    expect((await store.listMemories('alice', { kinds: ['semantic'] })).map((r) => r.id)).toEqual(['a']);
    expect((await store.listMemories('alice', { lifecycles: ['archived'] })).map((r) => r.id)).toEqual(['b']);
    expect((await store.listMemories('alice', { tags: ['x:1'] })).map((r) => r.id)).toEqual(['a', 'c']);
    expect((await store.listMemories('alice', { tags: ['x:1', 'y:2'] })).map((r) => r.id)).toEqual(['a']);
  });

  it('finds rows by content hash', async () => {
    const a = await store.insertMemory({ ...base, id: 'h1' });
    await store.insertMemory({
      ...base,
      id: 'h2',
      kind: 'semantic',
      content: '  the api LISTENS on port 8080 ',
    });
    await store.insertMemory({ ...base, id: 'h3', agentId: 'bob' });
    const found = await store.findByContentHash('alice', a.contentHash);
    expect(found.map((r) => r.id)).toEqual(['h1', 'h2']);
    expect((await store.findByContentHash('alice', a.contentHash, 'semantic')).map((r) => r.id)).toEqual([
      'h2',
    ]);
  });

  it('insertMemories is all or nothing (a duplicate id fails the batch with CONFLICT)', async () => {
    await store.insertMemory({ ...base, id: 'dup' });
    const before = tableCounts();
    await expect(
      store.insertMemories([
        { ...base, id: 'fresh', content: 'fresh row' },
        { ...base, id: 'dup' },
      ]),
    ).rejects.toMatchObject({ code: 'ENGRAM_STORE_CONFLICT', name: 'EngramStoreError' });
    expect(tableCounts()).toEqual(before);
    expect(await store.getMemory('alice', 'fresh')).toBeNull();
  });

  it('revalidates: only active rows of this agent at the expected revision, in input order', async () => {
    await store.insertMemories([
      { ...base, id: 'r1', content: 'The API listens on port 8081' },
      { ...base, id: 'r2', content: 'The API listens on port 8082' },
      { ...base, id: 'r3', content: 'The API listens on port 8083' },
      { ...base, id: 'r4', agentId: 'bob' },
    ]);
    await store.updateMemory('alice', 'r2', 1, { importance: 0.9 });
    await store.archiveMemory('alice', 'r3');
    const out = await store.revalidate('alice', [
      { id: 'r2', revision: 1 },
      { id: 'r1' },
      { id: 'r3' },
      { id: 'r4' },
      { id: 'gone' },
      { id: 'r1', revision: 1 },
    ]);
    expect(out.map((r) => r.id)).toEqual(['r1']);
    const fresh = await store.revalidate('alice', [
      { id: 'r2', revision: 2 },
      { id: 'r1', revision: 1 },
    ]);
    expect(fresh.map((r) => r.id)).toEqual(['r2', 'r1']);
    expect(await store.revalidate('alice', [])).toEqual([]);
  });

  it('revalidation returns each record exactly as getMemory reads it, every field included', async () => {
    await store.insertMemories([
      {
        ...base,
        id: 'full',
        kind: 'fact',
        content: 'The API listens on port 8084',
        tags: ['topic:api', 'file:src/api.ts'],
        userId: 'u1',
        sessionId: 's1',
        metadata: { lang: 'ts', stars: 5, nested: { on: true } },
        importance: 0.7,
        confidence: 0.6,
      },
      { ...base, id: 'plain', content: 'The API listens on port 8085' },
    ]);
    await store.recordAccess('alice', ['full'], 7_000);
    await store.updateMemory('alice', 'plain', 1, { importance: 0.2 });
    const out = await store.revalidate('alice', [{ id: 'plain' }, { id: 'full', revision: 1 }]);
    expect(out).toEqual([await store.getMemory('alice', 'plain'), await store.getMemory('alice', 'full')]);
    expect(out[1]).toMatchObject({
      tags: ['file:src/api.ts', 'topic:api'],
      metadata: { nested: { on: true } },
    });
  });

  it('records access without changing the revision', async () => {
    const rec = await store.insertMemory(base);
    await store.recordAccess('alice', [rec.id, rec.id], 5_000);
    await store.recordAccess('bob', [rec.id], 6_000);
    const after = await store.getMemory('alice', rec.id);
    expect(after).toMatchObject({ lastAccessedAt: 5_000, accessCount: 1, revision: 1 });
  });
});

describe('compare-and-set', () => {
  it('updates with the right revision and conflicts with a stale one', async () => {
    const rec = await store.insertMemory(base);
    clock = 2_000;
    const v2 = await store.updateMemory('alice', rec.id, 1, { importance: 0.8, tags: ['a:1'] });
    expect(v2).toMatchObject({
      revision: 2,
      importance: 0.8,
      tags: ['a:1'],
      updatedAt: 2_000,
      createdAt: 1_000,
    });
    await expect(store.updateMemory('alice', rec.id, 1, { importance: 0.1 })).rejects.toMatchObject({
      code: 'ENGRAM_STORE_REVISION_CONFLICT',
    });
    expect(await store.getMemory('alice', rec.id)).toEqual(v2);
  });

  it('distinguishes NOT_FOUND (missing or another agent) from REVISION_CONFLICT', async () => {
    const rec = await store.insertMemory(base);
    await expect(store.updateMemory('alice', 'missing', 1, { importance: 0.1 })).rejects.toMatchObject({
      code: 'ENGRAM_STORE_NOT_FOUND',
    });
    await expect(store.updateMemory('bob', rec.id, 1, { importance: 0.1 })).rejects.toMatchObject({
      code: 'ENGRAM_STORE_NOT_FOUND',
    });
    await expect(store.setLifecycle('alice', rec.id, 7, 'archived')).rejects.toMatchObject({
      code: 'ENGRAM_STORE_REVISION_CONFLICT',
    });
    await expect(store.archiveMemory('alice', rec.id, 3)).rejects.toMatchObject({
      code: 'ENGRAM_STORE_REVISION_CONFLICT',
    });
    expect((await store.getMemory('alice', rec.id))?.lifecycle).toBe('active');
  });

  it('a content change re-hashes, replaces the FTS rows, drops the vector and resets to pending', async () => {
    const rec = await store.insertMemory({ ...base, vector: new Float32Array([1, 0, 0, 0]) });
    expect(tableCounts().vectors).toBe(1);
    const v2 = await store.updateMemory('alice', rec.id, 1, { content: '服务监听端口三千 port 3000' });
    expect(v2).toMatchObject({ revision: 2, embeddingState: 'pending', embeddingFingerprint: null });
    expect(v2.contentHash).toBe(contentHash('服务监听端口三千 port 3000'));
    expect(tableCounts()).toMatchObject({ words: 1, trigram: 1, vectors: 0 });
    const old = await store.searchLexical({ agentId: 'alice', terms: ['8080'], limit: 5 });
    expect(old.hits).toEqual([]);
    const now = await store.searchLexical({ agentId: 'alice', terms: ['监听端口'], limit: 5 });
    expect(now.hits.map((h) => h.id)).toEqual([rec.id]);
    expect(
      await store.searchVector({ agentId: 'alice', vector: new Float32Array([1, 0, 0, 0]), k: 5 }),
    ).toEqual([]);
    // Back to Latin-only content removes the trigram row.
    await store.updateMemory('alice', rec.id, 2, { content: 'port 4000' });
    expect(tableCounts()).toMatchObject({ words: 1, trigram: 0 });
  });

  it('event rows take tag changes but never content or kind changes', async () => {
    const ev = await store.insertMemory({
      ...base,
      kind: 'event',
      content: 'user: hello',
      tags: ['type:message'],
    });
    const tagged = await store.updateMemory('alice', ev.id, 1, { tags: ['type:message', 'tool:bash'] });
    expect(tagged.tags).toEqual(['tool:bash', 'type:message']);
    await expect(store.updateMemory('alice', ev.id, 2, { content: 'user: edited' })).rejects.toMatchObject({
      code: 'ENGRAM_STORE_INVALID_INPUT',
    });
    await expect(store.updateMemory('alice', ev.id, 2, { kind: 'fact' })).rejects.toMatchObject({
      code: 'ENGRAM_STORE_INVALID_INPUT',
    });
    const fact = await store.insertMemory(base);
    await expect(store.updateMemory('alice', fact.id, 1, { kind: 'event' })).rejects.toMatchObject({
      code: 'ENGRAM_STORE_INVALID_INPUT',
    });
    expect((await store.getMemory('alice', ev.id))?.content).toBe('user: hello');
    expect((await store.listMemories('alice', { tags: ['tool:bash'] })).map((r) => r.id)).toEqual([ev.id]);
  });

  it('supersede inserts the replacement and links the old row, in one transaction', async () => {
    const old = await store.insertMemory({ ...base, id: 'old' });
    const { superseded, replacement } = await store.supersedeMemory('alice', 'old', 1, {
      ...base,
      id: 'new',
      content: 'The API listens on port 3000',
    });
    expect(superseded).toMatchObject({
      id: 'old',
      lifecycle: 'superseded',
      supersededBy: 'new',
      revision: 2,
    });
    expect(replacement).toMatchObject({ id: 'new', lifecycle: 'active', revision: 1 });
    expect(await store.getMemory('alice', old.id)).toEqual(superseded);
    const search = await store.searchLexical({ agentId: 'alice', terms: ['port'], limit: 5 });
    expect(search.hits.map((h) => h.id)).toEqual(['new']);
    // A stale supersede writes nothing (not even the replacement).
    await expect(
      store.supersedeMemory('alice', 'old', 1, { ...base, id: 'newer', content: 'port 5000' }),
    ).rejects.toMatchObject({ code: 'ENGRAM_STORE_REVISION_CONFLICT' });
    expect(await store.getMemory('alice', 'newer')).toBeNull();
    await expect(
      store.supersedeMemory('alice', 'new', 1, { ...base, agentId: 'bob', content: 'x' }),
    ).rejects.toMatchObject({ code: 'ENGRAM_STORE_INVALID_INPUT' });
  });

  it('archive and setLifecycle keep FTS and vector rows; search filters on lifecycle', async () => {
    const rec = await store.insertMemory({ ...base, vector: new Float32Array([1, 0, 0, 0]) });
    const archived = await store.archiveMemory('alice', rec.id, 1);
    expect(archived).toMatchObject({ lifecycle: 'archived', revision: 2 });
    expect(tableCounts()).toMatchObject({ words: 1, vectors: 1 });
    expect((await store.searchLexical({ agentId: 'alice', terms: ['port'], limit: 5 })).hits).toEqual([]);
    const back = await store.setLifecycle('alice', rec.id, 2, 'active');
    expect(back.revision).toBe(3);
    expect((await store.searchLexical({ agentId: 'alice', terms: ['port'], limit: 5 })).hits).toHaveLength(1);
  });
});

describe('delete', () => {
  it('removes the row, tags, both FTS entries and the vector: no ghost anywhere', async () => {
    const keep = await store.insertMemory({
      ...base,
      id: 'keep',
      agentId: 'bob',
      vector: new Float32Array([1, 0, 0, 0]),
    });
    const rec = await store.insertMemory({
      ...base,
      id: 'doomed',
      content: '数据库连接池 getUserById',
      tags: ['file:x.ts', 'tool:bash'],
      vector: new Float32Array([1, 0, 0, 0]),
    });
    expect(tableCounts()).toMatchObject({ memories: 2, tags: 2, words: 2, trigram: 1, vectors: 2 });
    expect(await store.deleteMemory('alice', rec.id)).toBe(true);
    expect(tableCounts()).toMatchObject({ memories: 1, tags: 0, words: 1, trigram: 0, vectors: 1 });
    const rid = 2;
    expect(count('SELECT count(*) AS n FROM memories_fts_words WHERE rowid = ?', rid)).toBe(0);
    expect(
      count('SELECT count(*) AS n FROM memories_fts_trigram WHERE memories_fts_trigram MATCH \'"连接池"\''),
    ).toBe(0);
    expect(count('SELECT count(*) AS n FROM memories_vec WHERE rowid = ?', rid)).toBe(0);
    expect(
      (await store.searchLexical({ agentId: 'alice', terms: ['getUserById', '连接池'], limit: 5 })).hits,
    ).toEqual([]);
    expect(
      await store.searchVector({ agentId: 'alice', vector: new Float32Array([1, 0, 0, 0]), k: 5 }),
    ).toEqual([]);
    expect(await store.deleteMemory('alice', rec.id)).toBe(false);
    expect(await store.deleteMemory('alice', keep.id)).toBe(false);
    expect((await store.getMemory('bob', keep.id))?.id).toBe('keep');
  });
});

describe('bad input changes nothing', () => {
  const cases: [string, () => Promise<unknown>, string][] = [
    ['empty agent id', () => store.insertMemory({ ...base, agentId: '' }), 'ENGRAM_STORE_INVALID_INPUT'],
    [
      'NaN importance',
      () => store.insertMemory({ ...base, importance: Number.NaN }),
      'ENGRAM_STORE_INVALID_INPUT',
    ],
    ['importance 1.5', () => store.insertMemory({ ...base, importance: 1.5 }), 'ENGRAM_STORE_INVALID_INPUT'],
    [
      'oversize content',
      () => store.insertMemory({ ...base, content: 'x'.repeat(65_537) }),
      'ENGRAM_STORE_INVALID_INPUT',
    ],
    ['blank content', () => store.insertMemory({ ...base, content: ' \n\t ' }), 'ENGRAM_STORE_INVALID_INPUT'],
    [
      'lone surrogate',
      () => store.insertMemory({ ...base, content: 'x\uD800y' }),
      'ENGRAM_STORE_INVALID_INPUT',
    ],
    [
      'malformed tag',
      () => store.insertMemory({ ...base, tags: ['file:ok', 'bad tag'] }),
      'ENGRAM_STORE_INVALID_INPUT',
    ],
    [
      'unknown kind',
      () => store.insertMemory({ ...base, kind: 'note' as never }),
      'ENGRAM_STORE_INVALID_INPUT',
    ],
    [
      'wrong vector length',
      () => store.insertMemory({ ...base, vector: new Float32Array(3).fill(1) }),
      'ENGRAM_STORE_VECTOR_DIMENSIONS',
    ],
    [
      'NaN vector',
      () => store.insertMemory({ ...base, vector: new Float32Array([1, Number.NaN, 0, 0]) }),
      'ENGRAM_STORE_VECTOR_INVALID',
    ],
    ['blank agent id', () => store.insertMemory({ ...base, agentId: ' \t ' }), 'ENGRAM_STORE_INVALID_INPUT'],
    [
      'oversize agent id',
      () => store.insertMemory({ ...base, agentId: 'a'.repeat(257) }),
      'ENGRAM_STORE_INVALID_INPUT',
    ],
    [
      'importance -0.1',
      () => store.insertMemory({ ...base, importance: -0.1 }),
      'ENGRAM_STORE_INVALID_INPUT',
    ],
    [
      'Infinity confidence',
      () => store.insertMemory({ ...base, confidence: Number.POSITIVE_INFINITY }),
      'ENGRAM_STORE_INVALID_INPUT',
    ],
    [
      'tag without a value',
      () => store.insertMemory({ ...base, tags: ['file:'] }),
      'ENGRAM_STORE_INVALID_INPUT',
    ],
    [
      'tag with a control character',
      () => store.insertMemory({ ...base, tags: ['file:a\u0000b'] }),
      'ENGRAM_STORE_INVALID_INPUT',
    ],
    [
      '65 tags',
      () => store.insertMemory({ ...base, tags: Array.from({ length: 65 }, (_, i) => `t:${i}`) }),
      'ENGRAM_STORE_INVALID_INPUT',
    ],
    [
      'Infinity in a vector',
      () => store.insertMemory({ ...base, vector: new Float32Array([1, Number.POSITIVE_INFINITY, 0, 0]) }),
      'ENGRAM_STORE_VECTOR_INVALID',
    ],
    [
      'zero vector',
      () => store.insertMemory({ ...base, vector: new Float32Array(4) }),
      'ENGRAM_STORE_VECTOR_INVALID',
    ],
    [
      'vector that is not a Float32Array',
      () => store.insertMemory({ ...base, vector: [1, 0, 0, 0] as unknown as Float32Array }),
      'ENGRAM_STORE_VECTOR_INVALID',
    ],
    [
      'wrong-length vector in an embedding commit',
      () =>
        store.commitEmbeddings([{ id: 'seed', revision: 1, state: 'ready', vector: new Float32Array(5) }]),
      'ENGRAM_STORE_VECTOR_DIMENSIONS',
    ],
    [
      'empty agent id in a lexical search',
      () => store.searchLexical({ agentId: '', terms: ['port'], limit: 5 }),
      'ENGRAM_STORE_INVALID_INPUT',
    ],
    [
      'empty agent id in a vector search',
      () => store.searchVector({ agentId: '', vector: new Float32Array([1, 0, 0, 0]), k: 5 }),
      'ENGRAM_STORE_INVALID_INPUT',
    ],
    [
      'bad row in a batch',
      () =>
        store.insertMemories([
          { ...base, id: 'good' },
          { ...base, importance: -1 },
        ]),
      'ENGRAM_STORE_INVALID_INPUT',
    ],
    [
      'bad vector in a batch',
      () =>
        store.insertMemories([
          { ...base, id: 'good', vector: new Float32Array([1, 0, 0, 0]) },
          { ...base, vector: new Float32Array([1, 0]) },
        ]),
      'ENGRAM_STORE_VECTOR_DIMENSIONS',
    ],
    [
      'bad patch',
      () => store.updateMemory('alice', 'seed', 1, { confidence: 2 }),
      'ENGRAM_STORE_INVALID_INPUT',
    ],
    [
      'oversize patch',
      () => store.updateMemory('alice', 'seed', 1, { content: 'y'.repeat(65_537) }),
      'ENGRAM_STORE_INVALID_INPUT',
    ],
    [
      'bad event',
      () =>
        store.appendEvents('alice', 's1', [
          { seq: 1, type: 'message', role: 'user', content: 'ok' },
          { seq: -2, type: 'message', role: 'user', content: 'bad' },
        ]),
      'ENGRAM_STORE_INVALID_INPUT',
    ],
    [
      'bad skill name',
      () => store.writeSkill({ agentId: 'alice', name: 'has space', description: '', content: 'x' }),
      'ENGRAM_STORE_INVALID_INPUT',
    ],
    [
      'bad ingest memory',
      () =>
        store.ingestBatch({
          agentId: 'alice',
          sessionId: 's1',
          expectedCursor: 0,
          nextCursor: 2,
          memories: [
            { ...base, kind: 'event' },
            { ...base, kind: 'event', tags: ['NOPE:x'] },
          ],
        }),
      'ENGRAM_STORE_INVALID_INPUT',
    ],
    [
      'bad search limit',
      () => store.searchLexical({ agentId: 'alice', terms: ['x'], limit: 0 }),
      'ENGRAM_STORE_INVALID_INPUT',
    ],
  ];

  for (const [name, call, code] of cases) {
    it(`${name} → ${code}`, async () => {
      await store.insertMemory({
        ...base,
        id: 'seed',
        tags: ['seed:1'],
        vector: new Float32Array([1, 0, 0, 0]),
      });
      const before = tableCounts();
      const seed = await store.getMemory('alice', 'seed');
      const err = await call().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toMatchObject({ name: 'EngramStoreError', code });
      expect(tableCounts()).toEqual(before);
      expect(await store.getMemory('alice', 'seed')).toEqual(seed);
    });
  }
});

describe('closed store', () => {
  it('rejects every call with CLOSED and health reports it without throwing', async () => {
    store.close();
    store.close();
    await expect(store.getMemory('alice', 'x')).rejects.toMatchObject({ code: 'ENGRAM_STORE_CLOSED' });
    await expect(store.insertMemory(base)).rejects.toMatchObject({ code: 'ENGRAM_STORE_CLOSED' });
    expect(await store.health()).toEqual({ ok: false, code: 'ENGRAM_STORE_CLOSED' });
    expect(store.closed).toBe(true);
  });
});
