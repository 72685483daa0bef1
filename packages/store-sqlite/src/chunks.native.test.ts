import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CHUNK_BUDGET, chunkSpans, sha256Hex } from '@engram/store/port-kit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase, type SqliteDatabase } from './native.js';
import { META_TABLE_SQL, MIGRATIONS, SCHEMA_VERSION } from './schema.js';
import { createSqliteMemoryStore, type SqliteMemoryStore } from './sqlite-store.js';

const profile = { id: 'emb', dimensions: 4 };
let dir: string;
let path: string;
let store: SqliteMemoryStore;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'engram-chunks-'));
  path = join(dir, 'chunks.db');
  store = createSqliteMemoryStore({ path, embedding: profile });
});

afterEach(() => {
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A long memory: paragraphs about harmless topics, with a distinctive phrase in paragraph `at`. */
function longContent(paragraphs: number, at: number, phrase: string): string {
  return Array.from({ length: paragraphs }, (_, i) => {
    const body = `Paragraph ${i} is a plain account of the weekly garden club meeting, the weather and the snacks.`;
    const filler = ' The members talked at length about tomatoes, compost and the new fence.'.repeat(5);
    return i === at ? `${body} Then ${phrase} came up.${filler}` : `${body}${filler}`;
  }).join('\n\n');
}

const vec = (...xs: number[]): Float32Array => new Float32Array(xs);

/** A 12-paragraph long memory whose phrase lies in chunk `index` only (not in a neighbour's overlap). */
function phraseInChunk(phrase: string, index: number): string {
  for (let at = 0; at < 12; at += 1) {
    const content = longContent(12, at, phrase);
    const where = chunkSpans(content).filter((s) => content.slice(s.start, s.end).includes(phrase));
    if (where.length === 1 && where[0]?.index === index) return content;
  }
  throw new Error('no placement puts the phrase in that chunk alone');
}

/** A distinct unit vector per chunk index. */
function chunkVector(index: number): Float32Array {
  const a = (index + 1) * 0.37;
  return vec(Math.cos(a), Math.sin(a), 0.1 * index, 1);
}

function raw(): SqliteDatabase {
  return openDatabase(path);
}

function count(db: SqliteDatabase, sql: string, ...params: unknown[]): number {
  return (db.prepare(sql).get(...params) as { n: number }).n;
}

/** Embeds every pending item as a drain would, one chunk vector each; returns the items it embedded. */
async function drainAll(s: SqliteMemoryStore): Promise<{ id: string; chunk?: number }[]> {
  const done: { id: string; chunk?: number }[] = [];
  for (;;) {
    const pending = await s.listPendingEmbeddings({ limit: 7 });
    if (pending.length === 0) return done;
    await s.commitEmbeddings(
      pending.map((p) => ({
        id: p.id,
        revision: p.revision,
        state: 'ready' as const,
        vector: chunkVector(p.chunk ?? 0),
        ...(p.chunk === undefined ? {} : { chunk: p.chunk }),
      })),
    );
    for (const p of pending) done.push({ id: p.id, ...(p.chunk === undefined ? {} : { chunk: p.chunk }) });
  }
}

describe('chunked long memories', () => {
  it('finds a long memory by a phrase in its 5th chunk and names that chunk by offsets', async () => {
    const content = phraseInChunk('the zeppelin hangar lease', 4);
    const fifth = chunkSpans(content)[4];
    expect(fifth).toBeDefined();
    await store.insertMemories([
      { id: 'long', agentId: 'a', kind: 'fact', content },
      { id: 'short', agentId: 'a', kind: 'fact', content: 'the garden club meets on tuesdays' },
    ]);
    const found = await store.searchLexical({ agentId: 'a', terms: ['zeppelin', 'hangar'], limit: 5 });
    expect(found.hits.map((h) => h.id)).toEqual(['long']);
    const chunk = found.hits[0]?.chunk;
    expect(chunk).toEqual(fifth);
    expect(content.slice(chunk?.start, chunk?.end)).toContain('the zeppelin hangar lease');
    // A short memory is one chunk: no window is named, the whole content is the match.
    const garden = await store.searchLexical({ agentId: 'a', terms: ['tuesdays'], limit: 5 });
    expect(garden.hits).toEqual([{ id: 'short', revision: 1, score: expect.any(Number) }]);
  });

  it('of chunks tied for the best score, the hit names the first', async () => {
    // A periodic text: chunks 1–3 are the same text, so they score alike (chunk 0 is shorter, chunk 4 the tail).
    const content = 'The zeppelin hangar lease renews every spring. '.repeat(90);
    const spans = chunkSpans(content);
    const texts = spans.map((s) => content.slice(s.start, s.end));
    expect(texts[2]).toBe(texts[1]);
    expect(texts[3]).toBe(texts[1]);
    await store.insertMemories([
      { id: 'long', agentId: 'a', kind: 'fact', content },
      { id: 'short', agentId: 'a', kind: 'fact', content: 'spring cleaning' },
    ]);
    const found = await store.searchLexical({ agentId: 'a', terms: ['spring'], limit: 5 });
    expect(found.hits.map((h) => [h.id, h.chunk?.index])).toEqual([
      ['long', 1],
      ['short', undefined],
    ]);
  });

  it('the items the drain embeds are the spans of the chunker, each with its vec0 row; a hit names its span', async () => {
    const content = longContent(12, 3, 'nothing special');
    const n = chunkSpans(content).length;
    await store.insertMemories([
      { id: 'long', agentId: 'a', kind: 'fact', content, vector: vec(1, 0, 0, 0) },
      { id: 'short', agentId: 'a', kind: 'fact', content: 'short one' },
    ]);
    const first = await store.listPendingEmbeddings({ limit: 3 });
    expect(first[1]?.content).toBe(content.slice(chunkSpans(content)[1]?.start, chunkSpans(content)[1]?.end));
    const embedded = await drainAll(store);
    expect(embedded.filter((e) => e.id === 'long')).toHaveLength(n);
    const db = raw();
    try {
      expect(count(db, 'SELECT count(*) AS n FROM memories_vec')).toBe(n + 1);
      expect(count(db, 'SELECT count(*) AS n FROM memory_chunks WHERE vec = 1')).toBe(n);
    } finally {
      db.close();
    }
    const hits = await store.searchVector({ agentId: 'a', vector: chunkVector(5), k: 2 });
    expect(hits[0]).toMatchObject({ id: 'long', chunk: chunkSpans(content)[5] });
  });

  it('delete removes chunk rows, chunk FTS rows and chunk vectors', async () => {
    const content = longContent(10, 7, 'the brass telescope');
    await store.insertMemories([
      { id: 'gone', agentId: 'a', kind: 'fact', content },
      { id: 'kept', agentId: 'a', kind: 'fact', content: longContent(10, 2, 'the copper kettle') },
      { id: 'old', agentId: 'a', kind: 'fact', content: longContent(10, 4, 'the silver spoon') },
    ]);
    await drainAll(store);
    const n = chunkSpans(content).length;
    const before = raw();
    const words0 = count(before, 'SELECT count(*) AS n FROM memories_fts_words');
    const vec0 = count(before, 'SELECT count(*) AS n FROM memories_vec');
    before.close();
    expect(await store.deleteMemory('a', 'gone')).toBe(true);
    const after = raw();
    try {
      expect(
        count(
          after,
          "SELECT count(*) AS n FROM memory_chunks c JOIN memories m ON m.rid = c.rid WHERE m.id = 'gone'",
        ),
      ).toBe(0);
      expect(count(after, 'SELECT count(*) AS n FROM memory_chunks')).toBe(
        chunkSpans(longContent(10, 2, 'the copper kettle')).length +
          chunkSpans(longContent(10, 4, 'the silver spoon')).length,
      );
      expect(count(after, 'SELECT count(*) AS n FROM memories_fts_words')).toBe(words0 - n);
      expect(count(after, 'SELECT count(*) AS n FROM memories_vec')).toBe(vec0 - n);
    } finally {
      after.close();
    }
  });

  it('a content update re-chunks: old chunk rows and vectors go, none are left when it is short again', async () => {
    await store.insertMemories([
      { id: 'm', agentId: 'a', kind: 'fact', content: longContent(12, 9, 'the old phrase') },
    ]);
    await drainAll(store);
    const updated = await store.updateMemory('a', 'm', 1, {
      content: longContent(4, 1, 'the new lighthouse'),
    });
    expect(updated.embeddingState).toBe('pending');
    const db = raw();
    try {
      expect(count(db, 'SELECT count(*) AS n FROM memory_chunks')).toBe(
        chunkSpans(longContent(4, 1, 'x')).length,
      );
      expect(count(db, 'SELECT count(*) AS n FROM memories_vec')).toBe(0);
    } finally {
      db.close();
    }
    // Shrinking to within the budget makes it one unchunked row again.
    await store.updateMemory('a', 'm', 2, { content: 'now short' });
    const db2 = raw();
    try {
      expect(count(db2, 'SELECT count(*) AS n FROM memory_chunks')).toBe(0);
    } finally {
      db2.close();
    }
  });

  it('integrity repair re-queues a memory with a missing chunk vector and re-indexes a missing chunk FTS row', async () => {
    const content = phraseInChunk('the lost anchor', 5);
    await store.insertMemories([{ id: 'm', agentId: 'a', kind: 'fact', content }]);
    await drainAll(store);
    store.close();
    const w = openDatabase(path);
    try {
      // Damage: the vector of chunk 3 and the word-index row of chunk 5 vanish.
      w.prepare('DELETE FROM memories_vec WHERE rowid = ?').run(BigInt(1 + 3 * 2 ** 40));
      w.prepare('DELETE FROM memories_fts_words WHERE rowid = ?').run(1 + 5 * 2 ** 40);
    } finally {
      w.close();
    }
    store = createSqliteMemoryStore({ path, embedding: profile });
    expect((await store.searchLexical({ agentId: 'a', terms: ['lost anchor'], limit: 5 })).hits).toEqual([]);
    expect(await store.repairEmbeddingIntegrity('a')).toEqual({ repaired: 2 });
    expect(await store.getMemory('a', 'm')).toMatchObject({ embeddingState: 'pending' });
    const pending = await store.listPendingEmbeddings({ limit: 10 });
    expect(pending.map((p) => [p.id, p.chunk])).toEqual([['m', 3]]);
    expect(await drainAll(store)).toEqual([{ id: 'm', chunk: 3 }]);
    expect(await store.getMemory('a', 'm')).toMatchObject({ embeddingState: 'ready' });
    expect(
      (await store.searchLexical({ agentId: 'a', terms: ['lost anchor'], limit: 5 })).hits[0]?.chunk?.index,
    ).toBe(chunkSpans(content).findIndex((s) => content.slice(s.start, s.end).includes('the lost anchor')));
  });

  it('orphan pruning removes the chunk FTS rows and vectors of a vanished memory', async () => {
    const content = longContent(10, 5, 'the driftwood');
    await store.insertMemories([{ id: 'm', agentId: 'a', kind: 'fact', content }]);
    await drainAll(store);
    const n = chunkSpans(content).length;
    store.close();
    const w = openDatabase(path);
    try {
      w.prepare("DELETE FROM memories WHERE id = 'm'").run();
    } finally {
      w.close();
    }
    store = createSqliteMemoryStore({ path, embedding: profile });
    expect(await store.pruneOrphanedVectors('a')).toEqual({ pruned: 2 * n });
    const db = raw();
    try {
      expect(count(db, 'SELECT count(*) AS n FROM memories_vec')).toBe(0);
      expect(count(db, 'SELECT count(*) AS n FROM memories_fts_words')).toBe(0);
    } finally {
      db.close();
    }
  });
});

describe('migration to chunked storage', () => {
  /**
   * Writes a file as schema version 3 did: whole-content FTS rows and vectors keyed by the memory's rid (the
   * rows are written at version 2, then the version-3 step builds its BM25 index from them).
   */
  function writeVersion3(file: string, rows: { id: string; content: string; vector: Float32Array }[]): void {
    const db = openDatabase(file);
    try {
      db.exec(META_TABLE_SQL);
      for (const m of MIGRATIONS) if (m.version <= 2) m.up(db, undefined as never);
      // The vector table as version 3 made it (no chunk size, no user key).
      db.exec(
        `CREATE VIRTUAL TABLE memories_vec USING vec0(agent_id text partition key, embedding float[${profile.dimensions}] distance_metric=cosine)`,
      );
      const meta = db.prepare('INSERT INTO meta(key, value) VALUES (?, ?)');
      meta.run('schema_version', '3');
      meta.run('embedding_fingerprint', 'emb:4');
      const token = `a${sha256Hex('a').slice(0, 16)}x`;
      for (const [i, r] of rows.entries()) {
        const rid = i + 1;
        db.prepare(
          `INSERT INTO memories(rid, id, agent_id, kind, content, content_hash, importance, confidence, created_at,
             updated_at, embedding_state, embedding_fingerprint) VALUES (?, ?, 'a', 'fact', ?, ?, 0.5, 1, 1, 1, 'ready', 'emb:4')`,
        ).run(rid, r.id, r.content, `h${rid}`);
        db.prepare('INSERT INTO memories_fts_words(rowid, agent, content) VALUES (?, ?, ?)').run(
          rid,
          token,
          r.content,
        );
        db.prepare('INSERT INTO memories_vec(rowid, agent_id, embedding) VALUES (?, ?, ?)').run(
          BigInt(rid),
          'a',
          r.vector,
        );
      }
      for (const m of MIGRATIONS) if (m.version === 3) m.up(db, undefined as never);
    } finally {
      db.close();
    }
  }

  it('carries a version-3 file forward: short vectors stay valid, long memories are chunked and pending', async () => {
    const file = join(dir, 'v3.db');
    const content = longContent(12, 6, 'the walrus ballet');
    expect(content.length).toBeGreaterThan(CHUNK_BUDGET);
    writeVersion3(file, [
      { id: 'short', content: 'a short fact about ferns', vector: vec(0, 1, 0, 0) },
      { id: 'long', content, vector: vec(1, 0, 0, 0) },
    ]);
    const migrated = createSqliteMemoryStore({ path: file, embedding: profile });
    try {
      expect(migrated.info.schemaVersion).toBe(SCHEMA_VERSION);
      expect(await migrated.getMemory('a', 'short')).toMatchObject({ embeddingState: 'ready' });
      expect(await migrated.getMemory('a', 'long')).toMatchObject({ embeddingState: 'pending' });
      // The short memory's vector is still found; the long memory's whole-text vector is gone.
      expect(
        (await migrated.searchVector({ agentId: 'a', vector: vec(0, 1, 0, 0), k: 5 })).map((h) => h.id),
      ).toEqual(['short']);
      const hits = (await migrated.searchLexical({ agentId: 'a', terms: ['walrus'], limit: 5 })).hits;
      expect(hits.map((h) => h.id)).toEqual(['long']);
      expect(content.slice(hits[0]?.chunk?.start, hits[0]?.chunk?.end)).toContain('the walrus ballet');
      expect((await migrated.searchLexical({ agentId: 'a', terms: ['ferns'], limit: 5 })).hits[0]?.id).toBe(
        'short',
      );
      const pending = await migrated.listPendingEmbeddings({ limit: 100 });
      expect(pending.map((p) => p.chunk)).toEqual(chunkSpans(content).map((s) => s.index));
      expect(await migrated.pruneOrphanedVectors()).toEqual({ pruned: 0 });
      expect(await migrated.repairEmbeddingIntegrity('a')).toEqual({ repaired: 0 });
    } finally {
      migrated.close();
    }
  });
});
