/**
 * The BM25 postings in two levels: a large agent's writes go into the small fresh table, which is merged into the
 * main table once it holds `POSTINGS_MERGE.at` postings (these tests send every agent there, with
 * `POSTINGS_MERGE.directBelow` 0; `lexical-direct.native.test.ts` covers small agents written straight into the
 * main table). A store that merges (inside a batch, after deletes and
 * edits, in a batch that rolls back) keeps exactly the postings, hits and scores of one that never merges.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lexicalNote, searchLexicalAll } from '@engram/test-support/lexical-fixture';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { POSTINGS_MERGE } from './lexical-postings.js';
import { openDatabase } from './native.js';
import { createSqliteMemoryStore, type SqliteMemoryStore } from './sqlite-store.js';

let dir: string;
const open: SqliteMemoryStore[] = [];
const DEFAULT_MERGE_AT = POSTINGS_MERGE.at;
const DEFAULT_DIRECT_BELOW = POSTINGS_MERGE.directBelow;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'engram-levels-'));
  POSTINGS_MERGE.directBelow = 0;
});

afterEach(() => {
  POSTINGS_MERGE.at = DEFAULT_MERGE_AT;
  POSTINGS_MERGE.directBelow = DEFAULT_DIRECT_BELOW;
  for (const s of open.splice(0)) s.close();
  rmSync(dir, { recursive: true, force: true });
});

function content(i: number): string {
  return lexicalNote(i, { shift: true, tail: ` word${i % 37}` });
}

function batch(from: number, to: number): { id: string; agentId: string; kind: 'fact'; content: string }[] {
  return Array.from({ length: to - from }, (_, k) => {
    const i = from + k;
    return {
      id: `m${i}`,
      agentId: i % 5 === 0 ? 'b' : 'a',
      kind: 'fact' as const,
      // Some long memories are chunked: their chunks are units keyed out of insertion order.
      content: i % 97 === 13 ? `${content(i)} ${'walrus ferns cache budget. '.repeat(90)}` : content(i),
    };
  });
}

const QUERIES: readonly (readonly string[])[] = [
  ['deploy', 'walrus'],
  ['pipeline'],
  ['cache', 'retry', 'budget'],
  ['连接', 'schema'],
  ['"deploy pipeline"', 'ferns'],
  ['word3', 'index', 'token'],
  ['zebra'],
];

function searchAll(store: SqliteMemoryStore): Promise<string> {
  return searchLexicalAll(store, { agents: ['a', 'b'], queries: QUERIES, limits: [3, 40] });
}

/** The same writes on a store whose merges happen at `mergeAt` postings. */
async function build(path: string, mergeAt: number): Promise<SqliteMemoryStore> {
  POSTINGS_MERGE.at = mergeAt;
  const store = createSqliteMemoryStore({ path, embedding: null });
  open.push(store);
  await store.insertMemories(batch(0, 40));
  // This batch crosses the threshold part-way (about 400 postings on top of about 400).
  await store.insertMemories(batch(40, 80));
  expect(await store.deleteMemory('a', 'm7')).toBe(true);
  const m8 = await store.getMemory('a', 'm8');
  await store.updateMemory('a', 'm8', m8?.revision ?? 0, { content: 'zebra zebra crossing deploy' });
  // A batch that would cross the threshold again fails on its last row: its postings and any merge roll back.
  await expect(store.insertMemories([...batch(80, 140), batch(3, 4)[0] as never])).rejects.toMatchObject({
    name: 'EngramStoreError',
  });
  for (let from = 80; from < 300; from += 1 + (from % 50)) {
    await store.insertMemories(batch(from, Math.min(300, from + 1 + (from % 50))));
  }
  expect(await store.deleteMemory('b', 'm100')).toBe(true);
  const m13 = await store.getMemory('a', 'm13');
  await store.updateMemory('a', 'm13', m13?.revision ?? 0, { content: 'short now: walrus zebra' });
  return store;
}

function tables(path: string): { main: number; fresh: number; all: string } {
  const db = openDatabase(path, { loadVectorExtension: false });
  try {
    const count = (t: string): number =>
      (db.prepare(`SELECT count(*) AS n FROM ${t}`).get() as { n: number }).n;
    return {
      main: count('lexical_postings'),
      fresh: count('lexical_postings_fresh'),
      all: JSON.stringify([
        db
          .prepare(
            `SELECT * FROM (SELECT * FROM lexical_postings UNION ALL SELECT * FROM lexical_postings_fresh)
             ORDER BY agent_id, term, rid`,
          )
          .all(),
        db.prepare('SELECT * FROM lexical_docs ORDER BY rid').all(),
        db.prepare('SELECT * FROM lexical_stats ORDER BY agent_id').all(),
      ]),
    };
  } finally {
    db.close();
  }
}

describe('BM25 postings in two levels', () => {
  it('merging the fresh postings (mid-batch, after deletes, edits and a rollback) changes no posting, hit or score', async () => {
    const mergedPath = join(dir, 'merged.db');
    const merged = await build(mergedPath, 500);
    const mergedHits = await searchAll(merged);
    expect(await merged.pruneOrphanedVectors()).toEqual({ pruned: 0 });

    const neverPath = join(dir, 'never.db');
    const never = await build(neverPath, Number.MAX_SAFE_INTEGER);
    const neverHits = await searchAll(never);

    expect(JSON.parse(mergedHits).flat().length).toBeGreaterThan(200);
    expect(mergedHits).toBe(neverHits);
    for (const s of open.splice(0)) s.close();

    const m = tables(mergedPath);
    const n = tables(neverPath);
    expect(m.all).toBe(n.all);
    // The merging store moved most postings into the main table and holds fewer than a threshold's worth fresh.
    expect(m.main).toBeGreaterThan(2_000);
    expect(m.fresh).toBeLessThan(500 + 60 * 20);
    expect(n.main).toBe(0);
    expect(n.fresh).toBe(m.main + m.fresh);
  });

  it('a reopened store counts the fresh postings it finds and merges them when they pass the threshold', async () => {
    const path = join(dir, 'reopen.db');
    POSTINGS_MERGE.at = Number.MAX_SAFE_INTEGER;
    const first = createSqliteMemoryStore({ path, embedding: null });
    open.push(first);
    await first.insertMemories(batch(0, 60));
    const before = await searchAll(first);
    for (const s of open.splice(0)) s.close();
    const held = tables(path).fresh;
    expect(held).toBeGreaterThan(400);

    POSTINGS_MERGE.at = held + 1;
    const again = createSqliteMemoryStore({ path, embedding: null });
    open.push(again);
    expect(await searchAll(again)).toBe(before);
    await again.insertMemory({ id: 'late', agentId: 'a', kind: 'fact', content: 'zebra after reopening' });
    expect(
      (await again.searchLexical({ agentId: 'a', terms: ['zebra'], limit: 3 })).hits.map((h) => h.id),
    ).toEqual(['late']);
    for (const s of open.splice(0)) s.close();
    expect(tables(path).fresh).toBe(0);
  });
});
