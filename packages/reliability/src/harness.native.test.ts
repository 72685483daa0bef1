/**
 * The suites' own instruments can fail: the raw consistency inspection reports each kind of damage (a store
 * broken on purpose through a second raw connection), and the fault-injecting driver sees the statements of a
 * store write inside its transaction, so the crash suite's kill points land where it says they do.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDeterministicEmbedder } from '@engram/embedder-deterministic';
import { createSqliteMemoryStore } from '@engram/store-sqlite';
import { openDatabase } from '@engram/store-sqlite/raw';
import { embedAllPending } from '@engram/test-support';
import { afterAll, describe, expect, it } from 'vitest';
import { createFaultDriver, describeStatement, type StatementEvent } from './fault-driver.js';
import { CONSISTENT, consistencyProblems, inspectDatabase } from './harness.js';

const embedder = createDeterministicEmbedder();
const dir = mkdtempSync(join(tmpdir(), 'engram-harness-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;

/** A store file with a ready row, a ready CJK row and a pending row; returns their rowids. */
async function seeded(
  quantization?: 'bit',
): Promise<{ path: string; ready: number; cjk: number; pending: number }> {
  files += 1;
  const path = join(dir, `h${files}.db`);
  const store = createSqliteMemoryStore({
    path,
    embedding: embedder.profile,
    ...(quantization === undefined ? {} : { vectorIndex: { quantization } }),
  });
  try {
    const texts = ['alpha bravo charlie', '数据库连接池 alpha', 'delta echo'];
    const vectors = await embedder.embed(texts);
    await store.insertMemory({
      id: 'ready',
      agentId: 'a',
      kind: 'fact',
      content: texts[0] as string,
      tags: ['topic:x'],
      vector: vectors[0] as Float32Array,
    });
    await store.insertMemory({
      id: 'cjk',
      agentId: 'a',
      kind: 'fact',
      content: texts[1] as string,
      vector: vectors[1] as Float32Array,
    });
    await store.insertMemory({ id: 'pending', agentId: 'a', kind: 'fact', content: texts[2] as string });
  } finally {
    store.close();
  }
  const raw = openDatabase(path);
  try {
    const rid = (id: string): number =>
      Number((raw.prepare('SELECT rid FROM memories WHERE id = ?').get(id) as { rid: number }).rid);
    return { path, ready: rid('ready'), cjk: rid('cjk'), pending: rid('pending') };
  } finally {
    raw.close();
  }
}

/** Damages the file through a raw connection, bypassing the store (and SQLite's defensive mode). */
function damage(path: string, ...sql: string[]): void {
  const raw = openDatabase(path);
  try {
    (raw as unknown as { unsafeMode(on: boolean): void }).unsafeMode(true);
    for (const s of sql) raw.prepare(s).run();
  } finally {
    raw.close();
  }
}

describe('the consistency inspection detects every kind of damage', () => {
  it('reports a consistent store as consistent', async () => {
    const { path } = await seeded();
    const report = inspectDatabase(path);
    expect(consistencyProblems(report)).toEqual(CONSISTENT);
    expect({ memories: report.memories, vectors: report.vectors }).toEqual({ memories: 3, vectors: 2 });
  });

  it('a row deleted behind the indexes: ghost FTS entries, a ghost vector, ghost tags', async () => {
    const { path, ready } = await seeded();
    damage(path, `DELETE FROM memories WHERE rid = ${ready}`);
    expect(consistencyProblems(inspectDatabase(path))).toEqual({
      ...CONSISTENT,
      ghostWords: [ready],
      ghostVectors: [ready],
      ghostTags: 1,
    });
  });

  it('a CJK row deleted behind the indexes: a ghost trigram entry as well', async () => {
    const { path, cjk } = await seeded();
    damage(path, `DELETE FROM memories WHERE rid = ${cjk}`);
    expect(consistencyProblems(inspectDatabase(path))).toMatchObject({
      ghostWords: [cjk],
      ghostTrigram: [cjk],
      ghostVectors: [cjk],
    });
  });

  it('an FTS entry without a row', async () => {
    const { path } = await seeded();
    damage(path, "INSERT INTO memories_fts_words(rowid, agent, content) VALUES (999, 'a', 'orphan')");
    expect(consistencyProblems(inspectDatabase(path))).toEqual({ ...CONSISTENT, ghostWords: [999] });
  });

  it('a row missing from the word index, a CJK row missing from the trigram index', async () => {
    const { path, pending, cjk } = await seeded();
    damage(
      path,
      `DELETE FROM memories_fts_words WHERE rowid = ${pending}`,
      `DELETE FROM memories_fts_trigram WHERE rowid = ${cjk}`,
    );
    expect(consistencyProblems(inspectDatabase(path))).toEqual({
      ...CONSISTENT,
      unindexed: [pending],
      unindexedCjk: [cjk],
    });
  });

  it('a ready row without its vector', async () => {
    const { path, ready } = await seeded();
    damage(path, `DELETE FROM memories_vec WHERE rowid = ${ready}`);
    expect(consistencyProblems(inspectDatabase(path))).toEqual({
      ...CONSISTENT,
      readyWithoutVector: [ready],
    });
  });

  it('a vector whose row is not ready, and a vector under another agent', async () => {
    const { path, ready, cjk } = await seeded();
    damage(
      path,
      `UPDATE memories SET embedding_state = 'pending' WHERE rid = ${ready}`,
      `UPDATE memories SET agent_id = 'b' WHERE rid = ${cjk}`,
    );
    expect(consistencyProblems(inspectDatabase(path))).toEqual({ ...CONSISTENT, ghostVectors: [ready, cjk] });
  });

  it('a quantised vector index out of step with the float one, either way', async () => {
    const consistent = await seeded('bit');
    expect(consistencyProblems(inspectDatabase(consistent.path))).toEqual(CONSISTENT);
    const { path, ready, cjk } = await seeded('bit');
    damage(
      path,
      `DELETE FROM memories_vec_quant WHERE rowid = ${ready}`,
      `DELETE FROM memories_vec WHERE rowid = ${cjk}`,
    );
    expect(consistencyProblems(inspectDatabase(path))).toEqual({
      ...CONSISTENT,
      readyWithoutVector: [cjk],
      quantOutOfStep: [ready, cjk],
    });
  });

  it('a corrupt full-text index fails its integrity check', async () => {
    const { path } = await seeded();
    // A leaf of the index's b-tree removed from its shadow table.
    damage(
      path,
      'DELETE FROM memories_fts_words_data WHERE id = (SELECT max(id) FROM memories_fts_words_data)',
    );
    expect(consistencyProblems(inspectDatabase(path)).ftsWords).not.toBe('ok');
  });
});

describe('the fault-injecting driver', () => {
  it('names statements by verb and table, never by their parameters', () => {
    expect(describeStatement('INSERT INTO memories_vec(rowid, agent_id, embedding) VALUES (?, ?, ?)')).toBe(
      'INSERT memories_vec',
    );
    expect(describeStatement('  UPDATE memories\n SET x = ? WHERE rid = ?')).toBe('UPDATE memories');
    expect(describeStatement('DELETE FROM memories_fts_words WHERE rowid = ?')).toBe(
      'DELETE memories_fts_words',
    );
    expect(describeStatement('COMMIT')).toBe('COMMIT');
  });

  it('sees every statement of a store write inside its transaction, COMMIT last', async () => {
    const events: StatementEvent[] = [];
    const driver = createFaultDriver({ before: (e) => events.push(e) });
    const store = createSqliteMemoryStore({
      path: join(dir, 'driver.db'),
      embedding: embedder.profile,
      driver,
    });
    try {
      const [vector] = await embedder.embed(['数据库连接池 alpha']);
      events.length = 0;
      await store.insertMemory({
        agentId: 'a',
        kind: 'fact',
        content: '数据库连接池 alpha',
        tags: ['topic:x'],
        vector: vector as Float32Array,
      });
      const inside = events.filter((e) => e.inTransaction).map((e) => e.statement);
      // The crash suite's `tx:<m>` kill points are exactly these: between the row, its tags, both FTS
      // entries and its vector, and just before COMMIT.
      expect(inside).toEqual(
        expect.arrayContaining([
          'INSERT memories',
          'INSERT memory_tags',
          'INSERT memories_fts_words',
          'INSERT memories_fts_trigram',
          'INSERT memories_vec',
        ]),
      );
      expect(inside.at(-1)).toBe('COMMIT');
      expect(events.filter((e) => !e.inTransaction).map((e) => e.statement)).toContain('BEGIN');
    } finally {
      store.close();
    }
  });
});

describe('the consistency inspection covers the chunks of long memories', () => {
  const K = 2 ** 40;

  /** A store file with one long memory, every chunk embedded (ready); returns its rowid and chunk count. */
  async function seededLong(): Promise<{ path: string; rid: number; chunks: number }> {
    files += 1;
    const path = join(dir, `long${files}.db`);
    const store = createSqliteMemoryStore({ path, embedding: embedder.profile });
    try {
      const content = Array.from(
        { length: 40 },
        (_, i) => `Line ${i} of the long record: alpha bravo charlie delta.`,
      )
        .join('\n')
        .concat(' 数据库连接池');
      await store.insertMemory({ id: 'long', agentId: 'a', kind: 'fact', content });
      await embedAllPending(store, embedder, 8);
      expect(await store.getMemory('a', 'long')).toMatchObject({ embeddingState: 'ready' });
    } finally {
      store.close();
    }
    const raw = openDatabase(path);
    try {
      const row = raw.prepare("SELECT rid, chunk_count FROM memories WHERE id = 'long'").get() as {
        rid: number;
        chunk_count: number;
      };
      return { path, rid: Number(row.rid), chunks: row.chunk_count };
    } finally {
      raw.close();
    }
  }

  it('a chunked ready memory is consistent', async () => {
    const { path, chunks } = await seededLong();
    expect(chunks).toBeGreaterThan(1);
    const report = inspectDatabase(path);
    expect(consistencyProblems(report)).toEqual(CONSISTENT);
    expect(report.vectors).toBe(chunks);
  });

  it('a ready memory missing one chunk vector, and one chunk missing from the word index', async () => {
    const { path, rid } = await seededLong();
    damage(
      path,
      `DELETE FROM memories_vec WHERE rowid = ${rid + 2 * K}`,
      `DELETE FROM memories_fts_words WHERE rowid = ${rid + K}`,
    );
    expect(consistencyProblems(inspectDatabase(path))).toEqual({
      ...CONSISTENT,
      readyWithoutVector: [rid],
      unindexed: [rid],
    });
  });

  it('a chunked memory deleted behind the indexes: every chunk FTS row, chunk vector and chunk row is a ghost', async () => {
    const { path, rid, chunks } = await seededLong();
    damage(path, `DELETE FROM memories WHERE rid = ${rid}`);
    const keys = Array.from({ length: chunks }, (_, i) => rid + i * K);
    const problems = consistencyProblems(inspectDatabase(path));
    expect(problems).toMatchObject({ ghostWords: keys, ghostVectors: keys, ghostChunks: [rid] });
    expect((problems.ghostTrigram as number[]).length).toBeGreaterThan(0);
  });
});
