// SQLite-specific embedding upkeep: integrity repair and orphan pruning on the sqlite-vec tables (the
// embedding state machine every store shares is in the conformance suite of @engram/test-support).
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
    // The transaction (2), the float anti-join, the FTS anti-join, and the `PRAGMA data_version` read that checks,
    // once per transaction, that the file's vector index setting is still this store's (another connection may
    // have called resetVectorIndex; see followVectorIndex).
    expect(small).toBeLessThanOrEqual(5);
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
