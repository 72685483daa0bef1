/**
 * Schema v4 → v7 (the BM25 index keeps each unit's terms; the postings lose their index on `rid`) and the
 * batched index writes: a file made by schema 4 opens with the same hits and the same scores, bit for bit, and
 * every later edit removes exactly the postings it should; a rolled-back batch leaves nothing behind.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lexicalNote } from '@engram/test-support/lexical-fixture';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { POSTINGS_MERGE } from './lexical-postings.js';
import { openDatabase } from './native.js';
import { SCHEMA_VERSION } from './schema.js';
import { createSqliteMemoryStore, type SqliteMemoryStore } from './sqlite-store.js';

let dir: string;
const open: SqliteMemoryStore[] = [];
const DEFAULT_DIRECT_BELOW = POSTINGS_MERGE.directBelow;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'engram-v7-'));
});

afterEach(() => {
  POSTINGS_MERGE.directBelow = DEFAULT_DIRECT_BELOW;
  for (const s of open.splice(0)) s.close();
  rmSync(dir, { recursive: true, force: true });
});

function content(i: number): string {
  return lexicalNote(i);
}

const QUERIES: readonly (readonly string[])[] = [
  ['deploy', 'walrus'],
  ['pipeline'],
  ['cache', 'retry', 'budget'],
  ['连接', 'schema'],
  ['src/deploy/pipeline.ts'],
];

async function searchAll(store: SqliteMemoryStore): Promise<string> {
  const out: unknown[] = [];
  for (const terms of QUERIES) {
    const r = await store.searchLexical({ agentId: 'a', terms, limit: 50 });
    out.push(r.hits.map((h) => [h.id, h.score]));
  }
  return JSON.stringify(out);
}

function openStore(path: string): SqliteMemoryStore {
  const store = createSqliteMemoryStore({ path, embedding: null });
  open.push(store);
  return store;
}

function closeAll(): void {
  for (const s of open.splice(0)) s.close();
}

describe('schema v4 → v7', () => {
  it('carries a version-4 file forward with identical BM25 hits and scores, then edits it cleanly', async () => {
    const path = join(dir, 'v4.db');
    const first = openStore(path);
    await first.insertMemories(
      Array.from({ length: 60 }, (_, i) => ({
        id: `m${i}`,
        agentId: 'a',
        kind: 'fact' as const,
        content: content(i),
      })),
    );
    await first.insertMemory({ id: 'other', agentId: 'b', kind: 'fact', content: 'deploy walrus elsewhere' });
    const before = await searchAll(first);
    expect(JSON.parse(before).flat().length).toBeGreaterThan(40);
    closeAll();
    // Turn the file back into what version 4 wrote: no terms column, the postings' index on rid, none of the
    // duplicate index (v5) or the scopes, metadata, validity, links and history (v6), version 4.
    const raw = openDatabase(path, { loadVectorExtension: false });
    try {
      raw.exec(`DROP INDEX memories_active_hash;
        DROP INDEX memories_agent_user; DROP INDEX memories_agent_superseded_by;
        DROP TABLE memory_links; DROP TABLE memory_history;
        ALTER TABLE memories DROP COLUMN user_id; ALTER TABLE memories DROP COLUMN metadata;
        ALTER TABLE memories DROP COLUMN valid_from; ALTER TABLE memories DROP COLUMN valid_to;
        ALTER TABLE memories DROP COLUMN forgotten_at;`);
      raw.exec('ALTER TABLE lexical_docs DROP COLUMN terms');
      // Version 4 kept every posting in one table.
      raw.exec(
        'INSERT INTO lexical_postings SELECT * FROM lexical_postings_fresh; DROP TABLE lexical_postings_fresh;',
      );
      raw.exec('ALTER TABLE lexical_postings DROP COLUMN length');
      raw.exec('CREATE INDEX lexical_postings_rid ON lexical_postings(rid)');
      raw.prepare("UPDATE meta SET value = '4' WHERE key = 'schema_version'").run();
    } finally {
      raw.close();
    }

    const store = openStore(path);
    expect(SCHEMA_VERSION).toBe(20);
    expect(store.info.schemaVersion).toBe(20);
    expect(await searchAll(store)).toBe(before);

    // Edits after the migration remove exactly the old postings: content change, delete.
    const m5 = await store.getMemory('a', 'm5');
    await store.updateMemory('a', 'm5', m5?.revision ?? 0, { content: 'only zebra words now' });
    expect(await store.deleteMemory('a', 'm6')).toBe(true);
    const zebra = await store.searchLexical({ agentId: 'a', terms: ['zebra'], limit: 5 });
    expect(zebra.hits.map((h) => h.id)).toEqual(['m5']);
    expect(await store.pruneOrphanedVectors()).toEqual({ pruned: 0 });
    closeAll();

    const check = openDatabase(path, { loadVectorExtension: false });
    try {
      expect(
        check.prepare("SELECT count(*) AS n FROM sqlite_master WHERE name = 'lexical_postings_rid'").get(),
      ).toEqual({ n: 0 });
      // Every unit lists exactly its postings' terms; no posting is left without its unit.
      expect(
        check
          .prepare(
            `SELECT count(*) AS n FROM lexical_docs d
             WHERE d.terms IS NULL OR json_array_length(d.terms) <> (SELECT count(*) FROM (SELECT * FROM lexical_postings UNION ALL SELECT * FROM lexical_postings_fresh) p WHERE p.rid = d.rid)`,
          )
          .get(),
      ).toEqual({ n: 0 });
      expect(
        check
          .prepare(
            'SELECT count(*) AS n FROM (SELECT * FROM lexical_postings UNION ALL SELECT * FROM lexical_postings_fresh) p WHERE NOT EXISTS (SELECT 1 FROM lexical_docs d WHERE d.rid = p.rid)',
          )
          .get(),
      ).toEqual({ n: 0 });
      expect(check.prepare("SELECT docs FROM lexical_stats WHERE agent_id = 'a'").get()).toEqual({
        docs: 59,
      });
    } finally {
      check.close();
    }
  });
});

describe('batched BM25 index writes', () => {
  it('a batch that fails inside its transaction leaves no postings, lengths or statistics behind', async () => {
    const store = openStore(join(dir, 'rollback.db'));
    await store.insertMemory({ id: 'taken', agentId: 'a', kind: 'fact', content: 'first walrus' });
    await expect(
      store.insertMemories([
        { id: 'new', agentId: 'a', kind: 'fact', content: 'zebra crossing' },
        { id: 'taken', agentId: 'a', kind: 'fact', content: 'zebra again' },
      ]),
    ).rejects.toMatchObject({ name: 'EngramStoreError' });
    await store.insertMemory({ id: 'later', agentId: 'a', kind: 'fact', content: 'ordinary words' });
    expect((await store.searchLexical({ agentId: 'a', terms: ['zebra'], limit: 5 })).hits).toEqual([]);
    closeAll();
    const check = openDatabase(join(dir, 'rollback.db'), { loadVectorExtension: false });
    try {
      expect(
        check
          .prepare(
            `SELECT count(*) AS n FROM (SELECT * FROM lexical_postings UNION ALL SELECT * FROM lexical_postings_fresh) WHERE term = 'zebra'`,
          )
          .get(),
      ).toEqual({
        n: 0,
      });
      expect(
        check.prepare("SELECT docs, total_length FROM lexical_stats WHERE agent_id = 'a'").get(),
      ).toEqual({
        docs: 2,
        total_length: 4,
      });
    } finally {
      check.close();
    }
  });
});

describe('BM25 index writes of a whole batch', () => {
  function lexicalRows(path: string): string {
    const db = openDatabase(path, { loadVectorExtension: false });
    try {
      return JSON.stringify([
        db
          .prepare(
            'SELECT * FROM (SELECT * FROM lexical_postings UNION ALL SELECT * FROM lexical_postings_fresh) ORDER BY agent_id, term, rid',
          )
          .all(),
        db.prepare('SELECT * FROM lexical_docs ORDER BY rid').all(),
        db.prepare('SELECT * FROM lexical_stats ORDER BY agent_id').all(),
      ]);
    } finally {
      db.close();
    }
  }

  it('writes exactly the rows of one-by-one inserts, with one statement per 1,024 postings, one per 256 unit lengths and two of the statistics', async () => {
    // Two agents, a long (chunked) memory among short ones, so a term's units arrive out of key order.
    const inputs = Array.from({ length: 700 }, (_, i) => ({
      id: `m${i}`,
      agentId: i % 3 === 0 ? 'b' : 'a',
      kind: 'fact' as const,
      content: i === 5 ? `${content(i)} ${'walrus ferns cache budget. '.repeat(120)}` : content(i),
    }));
    let fts = 0;
    // The postings go to the fresh table, as a large agent's do (a small agent's statement count is in
    // `lexical-direct.native.test.ts`).
    POSTINGS_MERGE.directBelow = 0;
    const batched = createSqliteMemoryStore({
      path: join(dir, 'batched.db'),
      embedding: null,
      observer: {
        onStatement: (kind) => {
          if (kind === 'fts') fts += 1;
        },
      },
    });
    open.push(batched);
    await batched.insertMemories(inputs);
    const single = openStore(join(dir, 'single.db'));
    for (const input of inputs) await single.insertMemory(input);
    closeAll();
    expect(lexicalRows(join(dir, 'batched.db'))).toBe(lexicalRows(join(dir, 'single.db')));

    const db = openDatabase(join(dir, 'batched.db'), { loadVectorExtension: false });
    try {
      const count = (sql: string): number => (db.prepare(sql).get() as { n: number }).n;
      const postings = count(
        'SELECT count(*) AS n FROM (SELECT * FROM lexical_postings UNION ALL SELECT * FROM lexical_postings_fresh)',
      );
      const units = count('SELECT count(*) AS n FROM lexical_docs');
      const trigramRows = count('SELECT count(*) AS n FROM memories_fts_trigram');
      expect(postings).toBeGreaterThan(3_000);
      expect(units).toBeGreaterThan(700);
      // One word-index row per unit, one trigram row per CJK unit; the BM25 index adds its postings in
      // statements of 1,024 (the rest in halving sizes: one statement per bit of the remainder), then its unit
      // lengths in statements of 256 (the last one padded), one statement of the agents' statistics and one of
      // their users', for the whole batch; and once, on the connection's first write, it counts the fresh
      // postings (see `POSTINGS_MERGE`).
      let postingStatements = Math.floor(postings / 1024);
      for (let rest = postings % 1024; rest > 0; rest &= rest - 1) postingStatements += 1;
      const unitStatements = Math.ceil(units / 256);
      expect(postingStatements).toBeLessThan(units / 50);
      expect(unitStatements).toBeLessThan(units / 50);
      expect(fts).toBe(units + trigramRows + postingStatements + unitStatements + 2 + 1);
    } finally {
      db.close();
    }
  });
});

describe('BM25 search joins only the best units to their memories', () => {
  it('returns the same best memories as the unfiltered ranking when a filter drops every unit above the cut', async () => {
    const store = openStore(join(dir, 'cut.db'));
    // 24 semantic rows repeat the word more often (they score higher) than 12 fact rows.
    await store.insertMemories([
      ...Array.from({ length: 24 }, (_, i) => ({
        id: `s${i}`,
        agentId: 'a',
        kind: 'semantic' as const,
        content: `walrus walrus walrus note ${i} ${'filler '.repeat(i % 5)}`,
      })),
      ...Array.from({ length: 12 }, (_, i) => ({
        id: `f${i}`,
        agentId: 'a',
        kind: 'fact' as const,
        content: `walrus fact ${i} ${'padding '.repeat(i % 7)}`,
      })),
    ]);
    const all = await store.searchLexical({ agentId: 'a', terms: ['walrus'], limit: 100 });
    expect(all.hits).toHaveLength(36);
    expect(all.hits.slice(0, 24).every((h) => h.id.startsWith('s'))).toBe(true);
    const facts = all.hits.filter((h) => h.id.startsWith('f'));
    for (const limit of [1, 3, 12, 20]) {
      const only = await store.searchLexical({ agentId: 'a', terms: ['walrus'], kinds: ['fact'], limit });
      expect(only.hits).toEqual(facts.slice(0, limit));
    }
    // Without a filter the best units are the answer at once, the same as a larger limit's prefix.
    for (const limit of [1, 5, 24, 30]) {
      const top = await store.searchLexical({ agentId: 'a', terms: ['walrus'], limit });
      expect(top.hits).toEqual(all.hits.slice(0, limit));
    }
  });

  it('counts a memory whose chunks hold the best units once, and still returns the best `limit` memories', async () => {
    const store = openStore(join(dir, 'chunks.db'));
    // Two long memories (several chunks each, every chunk full of the word) outscore 20 short ones: the best
    // units of a small limit are chunks of two memories only, so the search must look past them.
    await store.insertMemories([
      ...['long-a', 'long-b'].map((id, i) => ({
        id,
        agentId: 'a',
        kind: 'fact' as const,
        content: `The walrus hauls out on the ice ${i}. `.repeat(100),
      })),
      ...Array.from({ length: 20 }, (_, i) => ({
        id: `s${i}`,
        agentId: 'a',
        kind: 'fact' as const,
        content: `walrus note ${i} ${'filler '.repeat(i % 6)}`,
      })),
    ]);
    const all = await store.searchLexical({ agentId: 'a', terms: ['walrus'], limit: 100 });
    expect(all.hits).toHaveLength(22);
    expect(
      all.hits
        .slice(0, 2)
        .map((h) => h.id)
        .sort(),
    ).toEqual(['long-a', 'long-b']);
    expect(all.hits[0]?.chunk).toBeDefined();
    for (let limit = 1; limit <= 23; limit += 1) {
      const top = await store.searchLexical({ agentId: 'a', terms: ['walrus'], limit });
      expect(top.hits).toEqual(all.hits.slice(0, limit));
    }
  });
});
