/**
 * What the SQLite store's own tables hold after writes, deletes and bad input, against a real SQLite file: a
 * raw handle counts the derived rows (FTS, vector, tags) after every write. What the port shows of the same
 * writes is asserted by the conformance suite of `@engram/test-support`, which runs on this store.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NewMemory } from '@engram/store/port-kit';
import { BAD_INPUT_CASES, BAD_INPUT_SEED } from '@engram/test-support';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase, type SqliteDatabase } from './native.js';
import { createSqliteMemoryStore, type SqliteMemoryStore } from './sqlite-store.js';

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

describe('derived rows', () => {
  it('a vector given at insert is written in the same transaction', async () => {
    await store.insertMemory({ ...base, vector: new Float32Array([0, 0, 1, 0]) });
    expect(tableCounts().vectors).toBe(1);
  });

  it('a batch that fails (a duplicate id) leaves no row, tag, FTS entry or vector behind', async () => {
    await store.insertMemory({ ...base, id: 'dup' });
    const before = tableCounts();
    await expect(
      store.insertMemories([
        { ...base, id: 'fresh', content: 'fresh row', tags: ['x:1'], vector: new Float32Array([1, 0, 0, 0]) },
        { ...base, id: 'dup' },
      ]),
    ).rejects.toMatchObject({ code: 'ENGRAM_STORE_CONFLICT' });
    expect(tableCounts()).toEqual(before);
  });

  it('a content change replaces the FTS rows and drops the vector row', async () => {
    const rec = await store.insertMemory({ ...base, vector: new Float32Array([1, 0, 0, 0]) });
    expect(tableCounts().vectors).toBe(1);
    await store.updateMemory('alice', rec.id, 1, { content: '服务监听端口三千 port 3000' });
    expect(tableCounts()).toMatchObject({ words: 1, trigram: 1, vectors: 0 });
    // Back to Latin-only content removes the trigram row.
    await store.updateMemory('alice', rec.id, 2, { content: 'port 4000' });
    expect(tableCounts()).toMatchObject({ words: 1, trigram: 0 });
  });

  it('archive and setLifecycle keep the FTS and vector rows', async () => {
    const rec = await store.insertMemory({ ...base, vector: new Float32Array([1, 0, 0, 0]) });
    await store.archiveMemory('alice', rec.id, 1);
    expect(tableCounts()).toMatchObject({ words: 1, vectors: 1 });
    await store.setLifecycle('alice', rec.id, 2, 'active');
    expect(tableCounts()).toMatchObject({ words: 1, vectors: 1 });
  });

  it('delete removes the row, tags, both FTS entries and the vector: no ghost anywhere', async () => {
    await store.insertMemory({
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
  });
});

describe('bad input leaves every table as it was', () => {
  for (const [name, call, code] of BAD_INPUT_CASES) {
    it(`${name} → ${code}`, async () => {
      await store.insertMemory(BAD_INPUT_SEED);
      const before = tableCounts();
      await expect(call(store)).rejects.toMatchObject({ code });
      expect(tableCounts()).toEqual(before);
    });
  }
});

describe('revalidation rows', () => {
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
});
