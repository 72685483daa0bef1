/**
 * Schema v2 → v3 (the BM25 index): a file written by the version-2 schema — built here with the version-2
 * migrations themselves, rows inserted the way version 2 wrote them (the row, its word-index entry, its
 * trigram entry for CJK text) — opens with the current store, keeps every row and searches with BM25.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase, type SqliteDatabase } from './native.js';
import { META_TABLE_SQL, MIGRATIONS, SCHEMA_VERSION, WORDS_TOKENIZER } from './schema.js';
import { createSqliteMemoryStore, type SqliteMemoryStore } from './sqlite-store.js';

let dir: string;
const open: SqliteMemoryStore[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'engram-v3-'));
});

afterEach(() => {
  for (const s of open.splice(0)) s.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Creates a version-2 file: the meta table, migrations 1 and 2, the meta rows version 2 recorded. */
function createV2(path: string): SqliteDatabase {
  const db = openDatabase(path, { loadVectorExtension: false });
  db.exec(META_TABLE_SQL);
  for (const m of MIGRATIONS) if (m.version <= 2) m.up(db, undefined as never); // migrations 1 and 2 use no context
  const meta = db.prepare('INSERT INTO meta(key, value) VALUES (?, ?)');
  meta.run('schema_version', '2');
  meta.run('tokenizer', `words=${WORDS_TOKENIZER}; trigram=trigram (cjk rows only)`);
  meta.run('created_at', '1700000000000');
  meta.run('embedding_fingerprint', 'none');
  return db;
}

/** Inserts `n` rows of agent `agent` as version 2 did, in one statement per table. */
function insertV2Rows(db: SqliteDatabase, agent: string, n: number, content: string): void {
  db.exec('BEGIN');
  db.prepare(
    `WITH RECURSIVE seq(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM seq WHERE i < ?)
     INSERT INTO memories(id, agent_id, kind, content, content_hash, importance, confidence, created_at, updated_at)
     SELECT ? || '-' || i, ?, 'fact', replace(?, '#', i), 'h' || i, 0.5, 1, 1700000000000 + i, 1700000000000 + i
     FROM seq`,
  ).run(n, agent, agent, content);
  db.prepare(
    `INSERT INTO memories_fts_words(rowid, agent, content)
     SELECT rid, ?, content FROM memories WHERE agent_id = ?`,
  ).run(`token-${agent}`, agent);
  db.exec('COMMIT');
}

describe('schema v2 → v3', () => {
  it('carries a version-2 file forward: rows intact, BM25 index built, search works', async () => {
    const path = join(dir, 'v2.db');
    const db = createV2(path);
    insertV2Rows(db, 'a', 3, 'note # about the deploy pipeline');
    db.prepare(
      `INSERT INTO memories(id, agent_id, kind, content, content_hash, importance, confidence, created_at, updated_at, has_cjk)
       VALUES ('zh', 'a', 'fact', '数据库连接池的大小设置为二十', 'hz', 0.5, 1, 1, 1, 1)`,
    ).run();
    db.close();

    expect(SCHEMA_VERSION).toBe(20);
    const store = createSqliteMemoryStore({ path, embedding: null });
    open.push(store);
    expect(store.info.schemaVersion).toBe(SCHEMA_VERSION);
    expect((await store.getMemory('a', 'a-2'))?.content).toBe('note 2 about the deploy pipeline');
    const words = await store.searchLexical({ agentId: 'a', terms: ['deploying', 'pipelines'], limit: 10 });
    expect(words.hits.map((h) => h.id).sort()).toEqual(['a-1', 'a-2', 'a-3']);
    // A two-character word of the passage matches through the CJK bigram index, which version 2 lacked.
    const cjk = await store.searchLexical({ agentId: 'a', terms: ['大小'], limit: 10 });
    expect(cjk.hits.map((h) => h.id)).toEqual(['zh']);
    // New rows join the same statistics.
    await store.insertMemory({
      id: 'new',
      agentId: 'a',
      kind: 'fact',
      content: 'pipeline pipeline pipeline',
    });
    const again = await store.searchLexical({ agentId: 'a', terms: ['pipeline'], limit: 10 });
    expect(again.hits[0]?.id).toBe('new');
    expect(again.hits).toHaveLength(4);
  });

  it('migrates a version-2 file of 100,000 memories: every row indexed, statistics exact', async () => {
    const path = join(dir, 'big.db');
    const db = createV2(path);
    insertV2Rows(db, 'big', 99_999, 'memory # of the release checklist');
    insertV2Rows(db, 'other', 1, 'a rare zebra memory');
    db.close();

    const store = createSqliteMemoryStore({ path, embedding: null });
    open.push(store);
    expect(store.info.schemaVersion).toBe(SCHEMA_VERSION);
    const found = await store.searchLexical({ agentId: 'big', terms: ['74321', 'checklist'], limit: 5 });
    expect(found.hits[0]?.id).toBe('big-74321');
    expect((await store.searchLexical({ agentId: 'big', terms: ['zebra'], limit: 5 })).hits).toEqual([]);
    store.close();
    open.length = 0;

    const check = openDatabase(path, { loadVectorExtension: false });
    try {
      expect(check.prepare('SELECT count(*) AS n FROM memories').get()).toEqual({ n: 100_000 });
      expect(check.prepare('SELECT count(*) AS n FROM lexical_docs').get()).toEqual({ n: 100_000 });
      // Each `big` row has 6 tokens (memory, its number, of, the, releas, checklist), all distinct.
      expect(
        check.prepare("SELECT docs, total_length FROM lexical_stats WHERE agent_id = 'big'").get(),
      ).toEqual({ docs: 99_999, total_length: 6 * 99_999 });
      expect(
        check.prepare("SELECT count(*) AS n FROM lexical_postings WHERE agent_id = 'big'").get(),
      ).toEqual({ n: 6 * 99_999 });
      expect(
        check.prepare("SELECT docs, total_length FROM lexical_stats WHERE agent_id = 'other'").get(),
      ).toEqual({ docs: 1, total_length: 4 });
    } finally {
      check.close();
    }
  });
});
