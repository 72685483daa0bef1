import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase } from './native.js';
import { createSqliteMemoryStore, type SqliteMemoryStore } from './sqlite-store.js';

const profile = { id: 'emb', dimensions: 3 };
let dir: string;
let path: string;
let store: SqliteMemoryStore;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'engram-emb-'));
  path = join(dir, 'emb.db');
  store = createSqliteMemoryStore({ path, embedding: profile });
});

afterEach(() => {
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

const vec = (...xs: number[]): Float32Array => new Float32Array(xs);

describe('embedding state machine', () => {
  it('lists pending rows in insertion order, per agent or all, bounded by limit', async () => {
    await store.insertMemories([
      { id: 'p3', agentId: 'a', kind: 'fact', content: 'three' },
      { id: 'p1', agentId: 'b', kind: 'fact', content: 'one' },
      { id: 'p2', agentId: 'a', kind: 'fact', content: 'two' },
      { id: 'r', agentId: 'a', kind: 'fact', content: 'ready', vector: vec(1, 0, 0) },
    ]);
    expect((await store.listPendingEmbeddings({ limit: 10 })).map((p) => p.id)).toEqual(['p3', 'p1', 'p2']);
    expect((await store.listPendingEmbeddings({ limit: 2 })).map((p) => p.id)).toEqual(['p3', 'p1']);
    expect(await store.listPendingEmbeddings({ agentId: 'a', limit: 10 })).toEqual([
      { id: 'p3', agentId: 'a', content: 'three', revision: 1, embeddingAttempts: 0 },
      { id: 'p2', agentId: 'a', content: 'two', revision: 1, embeddingAttempts: 0 },
    ]);
    expect(await store.countEmbeddingBacklog()).toEqual({ total: 3, byAgent: { a: 2, b: 1 } });
  });

  it('counts only the transitions it makes: outcomes for rows or chunks another commit settled are stale', async () => {
    const long = Array.from({ length: 30 }, (_, i) => `Section ${i} of the handbook covers topic ${i}.`).join(
      '\n\n',
    );
    await store.insertMemories([
      { id: 'x', agentId: 'a', kind: 'fact', content: 'x' },
      { id: 'y', agentId: 'a', kind: 'fact', content: 'y' },
      { id: 'long', agentId: 'a', kind: 'episodic', content: long },
    ]);
    // Two drains read the same pending items before either commits.
    const items = await store.listPendingEmbeddings({ limit: 100 });
    expect(items.filter((i) => i.id === 'long').length).toBeGreaterThan(1);
    const outcomes = items.map((i) => ({
      id: i.id,
      revision: i.revision,
      state: 'ready' as const,
      vector: vec(1, 0, 0),
      ...(i.chunk === undefined ? {} : { chunk: i.chunk }),
    }));
    const first = await store.commitEmbeddings(outcomes);
    const second = await store.commitEmbeddings(outcomes);
    expect(first).toEqual({ ready: items.length, error: 0, ftsOnly: 0, stale: 0 });
    expect(second).toEqual({ ready: 0, error: 0, ftsOnly: 0, stale: items.length });
    // An error outcome for a settled row neither counts nor touches it.
    expect(await store.commitEmbeddings([{ id: 'x', revision: 1, state: 'error' }])).toEqual({
      ready: 0,
      error: 0,
      ftsOnly: 0,
      stale: 1,
    });
    for (const id of ['x', 'y', 'long']) {
      expect(await store.getMemory('a', id)).toMatchObject({ embeddingState: 'ready', embeddingAttempts: 0 });
    }
    expect(await store.countEmbeddingBacklog()).toEqual({ total: 0, byAgent: {} });
  });

  it('commits ready, error and ftsOnly transitions; error rows come back only below the retry bound', async () => {
    await store.insertMemories([
      { id: 'x', agentId: 'a', kind: 'fact', content: 'x' },
      { id: 'y', agentId: 'a', kind: 'fact', content: 'y' },
      { id: 'z', agentId: 'a', kind: 'fact', content: 'z' },
    ]);
    const result = await store.commitEmbeddings([
      { id: 'x', revision: 1, state: 'ready', vector: vec(1, 0, 0) },
      { id: 'y', revision: 1, state: 'error' },
      { id: 'z', revision: 1, state: 'ftsOnly' },
    ]);
    expect(result).toEqual({ ready: 1, error: 1, ftsOnly: 1, stale: 0 });
    expect(await store.getMemory('a', 'x')).toMatchObject({
      embeddingState: 'ready',
      embeddingFingerprint: 'emb:3',
      revision: 1,
    });
    expect(await store.getMemory('a', 'y')).toMatchObject({ embeddingState: 'error', embeddingAttempts: 1 });
    expect(await store.getMemory('a', 'z')).toMatchObject({ embeddingState: 'ftsOnly' });
    expect(await store.listPendingEmbeddings({ limit: 10 })).toEqual([]);
    expect(
      (await store.listPendingEmbeddings({ limit: 10, retryErrorsBelowAttempts: 2 })).map((p) => p.id),
    ).toEqual(['y']);
    await store.commitEmbeddings([{ id: 'y', revision: 1, state: 'error' }]);
    expect(await store.listPendingEmbeddings({ limit: 10, retryErrorsBelowAttempts: 2 })).toEqual([]);
    expect((await store.searchVector({ agentId: 'a', vector: vec(1, 0, 0), k: 5 })).map((h) => h.id)).toEqual(
      ['x'],
    );
    expect(await store.countEmbeddingBacklog()).toEqual({ total: 0, byAgent: {} });
  });

  it('a row edited (or deleted) while it was embedded is stale and keeps no vector', async () => {
    await store.insertMemories([
      { id: 'edited', agentId: 'a', kind: 'fact', content: 'old text' },
      { id: 'deleted', agentId: 'a', kind: 'fact', content: 'soon gone' },
      { id: 'fine', agentId: 'a', kind: 'fact', content: 'fine' },
    ]);
    const batch = await store.listPendingEmbeddings({ limit: 10 });
    await store.updateMemory('a', 'edited', 1, { content: 'new text' });
    await store.deleteMemory('a', 'deleted');
    const result = await store.commitEmbeddings(
      batch.map((p) => ({ id: p.id, revision: p.revision, state: 'ready' as const, vector: vec(0, 1, 0) })),
    );
    expect(result).toEqual({ ready: 1, error: 0, ftsOnly: 0, stale: 2 });
    expect(await store.getMemory('a', 'edited')).toMatchObject({ embeddingState: 'pending', revision: 2 });
    expect((await store.searchVector({ agentId: 'a', vector: vec(0, 1, 0), k: 5 })).map((h) => h.id)).toEqual(
      ['fine'],
    );
    expect((await store.listPendingEmbeddings({ limit: 10 })).map((p) => [p.id, p.revision])).toEqual([
      ['edited', 2],
    ]);
  });

  it('validates every vector before writing any (dimensions, NaN)', async () => {
    await store.insertMemories([
      { id: 'a1', agentId: 'a', kind: 'fact', content: 'a1' },
      { id: 'a2', agentId: 'a', kind: 'fact', content: 'a2' },
    ]);
    await expect(
      store.commitEmbeddings([
        { id: 'a1', revision: 1, state: 'ready', vector: vec(1, 0, 0) },
        { id: 'a2', revision: 1, state: 'ready', vector: vec(1, 0) },
      ]),
    ).rejects.toMatchObject({ code: 'ENGRAM_STORE_VECTOR_DIMENSIONS' });
    await expect(
      store.commitEmbeddings([{ id: 'a1', revision: 1, state: 'ready', vector: vec(Number.NaN, 0, 0) }]),
    ).rejects.toMatchObject({ code: 'ENGRAM_STORE_VECTOR_INVALID' });
    expect((await store.listPendingEmbeddings({ limit: 10 })).map((p) => p.id)).toEqual(['a1', 'a2']);
  });

  it('a store without a profile keeps rows pending until the drain marks them ftsOnly', async () => {
    const plain = createSqliteMemoryStore({ path: ':memory:', embedding: null });
    try {
      const rec = await plain.insertMemory({ agentId: 'a', kind: 'fact', content: 'no vectors here' });
      expect(rec.embeddingState).toBe('pending');
      expect(plain.embeddingProfile).toBeNull();
      await expect(
        plain.commitEmbeddings([{ id: rec.id, revision: 1, state: 'ready', vector: vec(1, 0, 0) }]),
      ).rejects.toMatchObject({ code: 'ENGRAM_STORE_VECTOR_UNAVAILABLE' });
      expect(await plain.commitEmbeddings([{ id: rec.id, revision: 1, state: 'ftsOnly' }])).toEqual({
        ready: 0,
        error: 0,
        ftsOnly: 1,
        stale: 0,
      });
      await expect(plain.searchVector({ agentId: 'a', vector: vec(1, 0, 0), k: 1 })).rejects.toMatchObject({
        code: 'ENGRAM_STORE_VECTOR_UNAVAILABLE',
      });
    } finally {
      plain.close();
    }
  });
});

describe('integrity repair and pruning', () => {
  it('resets ready rows that lost their vector and prunes vectors without a ready row', async () => {
    await store.insertMemories([
      { id: 'ok', agentId: 'a', kind: 'fact', content: 'ok', vector: vec(1, 0, 0) },
      { id: 'lost', agentId: 'a', kind: 'fact', content: 'lost', vector: vec(0, 1, 0) },
      { id: 'orphan', agentId: 'a', kind: 'fact', content: 'orphan', vector: vec(0, 0, 1) },
    ]);
    // Damage the file from a second connection: a vector disappears, a row disappears behind the store's back.
    const raw = openDatabase(path);
    try {
      raw
        .prepare("DELETE FROM memories_vec WHERE rowid = (SELECT rid FROM memories WHERE id = 'lost')")
        .run();
      raw.prepare("DELETE FROM memories WHERE id = 'orphan'").run();
    } finally {
      raw.close();
    }
    expect(await store.repairEmbeddingIntegrity('a')).toEqual({ repaired: 1 });
    expect(await store.getMemory('a', 'lost')).toMatchObject({ embeddingState: 'pending' });
    expect(await store.repairEmbeddingIntegrity('a')).toEqual({ repaired: 0 });
    // The orphan's vector and FTS entry are still there; pruning removes both.
    expect(await store.pruneOrphanedVectors('a')).toEqual({ pruned: 2 });
    expect(await store.pruneOrphanedVectors()).toEqual({ pruned: 0 });
    expect((await store.searchVector({ agentId: 'a', vector: vec(0, 0, 1), k: 5 })).map((h) => h.id)).toEqual(
      ['ok'],
    );
  });
});

describe('pruning cost', () => {
  async function pruneStatements(rows: number): Promise<number> {
    let statements = 0;
    const sized = createSqliteMemoryStore({
      path: join(dir, `sized-${rows}.db`),
      embedding: profile,
      observer: { onStatement: () => (statements += 1) },
    });
    try {
      await sized.insertMemories(
        Array.from({ length: rows }, (_, i) => ({
          agentId: 'a',
          kind: 'fact' as const,
          content: `row ${i} 数据库连接池`,
          vector: vec(1, i + 1, 0),
        })),
      );
      statements = 0;
      expect(await sized.pruneOrphanedVectors('a')).toEqual({ pruned: 0 });
      return statements;
    } finally {
      sized.close();
    }
  }

  it('costs the same number of statements for 20 and 800 clean rows (anti-joins, no point read per row)', async () => {
    const small = await pruneStatements(20);
    expect(await pruneStatements(800)).toBe(small);
    expect(small).toBeLessThanOrEqual(4);
  });

  it('prunes trigram-only orphans and vectors filed under another agent', async () => {
    await store.insertMemories([
      { id: 'zh', agentId: 'a', kind: 'fact', content: '向量索引重建', vector: vec(1, 0, 0) },
      { id: 'moved', agentId: 'b', kind: 'fact', content: 'moved', vector: vec(0, 1, 0) },
    ]);
    const raw = openDatabase(path);
    try {
      const zh = (raw.prepare("SELECT rid FROM memories WHERE id = 'zh'").get() as { rid: number }).rid;
      raw.prepare('DELETE FROM memories_fts_words WHERE rowid = ?').run(zh);
      raw.prepare("DELETE FROM memories WHERE id = 'zh'").run();
      raw.prepare("UPDATE memories SET agent_id = 'a' WHERE id = 'moved'").run();
    } finally {
      raw.close();
    }
    // zh: its vector and its trigram entry; moved: its vector sits in agent b's partition.
    expect(await store.pruneOrphanedVectors()).toEqual({ pruned: 3 });
    const check = openDatabase(path);
    try {
      expect(check.prepare('SELECT count(*) AS n FROM memories_fts_trigram').get()).toEqual({ n: 0 });
      expect(check.prepare('SELECT count(*) AS n FROM memories_vec').get()).toEqual({ n: 0 });
    } finally {
      check.close();
    }
  });
});
