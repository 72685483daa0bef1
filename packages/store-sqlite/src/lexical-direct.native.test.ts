/**
 * Which level a write's BM25 postings go into: an agent whose units hold fewer tokens than
 * `POSTINGS_MERGE.directBelow` (this write's included) has them written straight into the main table, a larger
 * one into the fresh table. Either way a unit's postings are all in one table, and the postings, hits, scores,
 * removal, edits and forgetting are the same.
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
const DEFAULT_MERGE = { ...POSTINGS_MERGE };

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'engram-direct-'));
});

afterEach(() => {
  Object.assign(POSTINGS_MERGE, DEFAULT_MERGE);
  for (const s of open.splice(0)) s.close();
  rmSync(dir, { recursive: true, force: true });
});

function content(i: number): string {
  return lexicalNote(i, { shift: true, tail: ` word${i % 37}` });
}

type Row = { id: string; agentId: string; kind: 'fact'; content: string };

function rows(agentId: string, from: number, to: number, long = false): Row[] {
  return Array.from({ length: to - from }, (_, k) => {
    const i = from + k;
    // With `long`, some memories are chunked: their chunks are units keyed out of insertion order.
    const text =
      long && i % 97 === 13 ? `${content(i)} ${'walrus ferns cache budget. '.repeat(90)}` : content(i);
    return { id: `${agentId}${i}`, agentId, kind: 'fact' as const, content: text };
  });
}

function openStore(name: string, onFts?: () => void): SqliteMemoryStore {
  const store = createSqliteMemoryStore({
    path: join(dir, name),
    embedding: null,
    ...(onFts === undefined
      ? {}
      : {
          observer: {
            onStatement: (kind: string) => {
              if (kind === 'fts') onFts();
            },
          },
        }),
  });
  open.push(store);
  return store;
}

/** Reads the file behind the store's back (a second connection; the store's writes are committed). */
function inFile<T>(name: string, read: (n: (sql: string, ...params: unknown[]) => number) => T): T {
  const db = openDatabase(join(dir, name), { loadVectorExtension: false });
  try {
    return read((sql, ...params) => (db.prepare(sql).get(...params) as { n: number }).n);
  } finally {
    db.close();
  }
}

/** An agent's postings in each table. */
function levels(name: string, agentId: string): { main: number; fresh: number } {
  return inFile(name, (n) => ({
    main: n('SELECT count(*) AS n FROM lexical_postings WHERE agent_id = ?', agentId),
    fresh: n('SELECT count(*) AS n FROM lexical_postings_fresh WHERE agent_id = ?', agentId),
  }));
}

/** Where one memory's postings are (it is one unit: not chunked). */
function unitLevels(name: string, id: string): { main: number; fresh: number } {
  return inFile(name, (n) => {
    const sub = (t: string): string =>
      `SELECT count(*) AS n FROM ${t} WHERE rid = (SELECT rid FROM memories WHERE id = ?)`;
    return { main: n(sub('lexical_postings'), id), fresh: n(sub('lexical_postings_fresh'), id) };
  });
}

/** Units with postings in both tables (never, in an intact file). */
function split(name: string): number {
  return inFile(name, (n) =>
    n(`SELECT count(*) AS n FROM lexical_docs d
       WHERE EXISTS (SELECT 1 FROM lexical_postings p WHERE p.rid = d.rid)
         AND EXISTS (SELECT 1 FROM lexical_postings_fresh f WHERE f.rid = d.rid)`),
  );
}

function totalLength(name: string, agentId: string): number {
  return inFile(name, (n) => n('SELECT total_length AS n FROM lexical_stats WHERE agent_id = ?', agentId));
}

/** Every posting (both tables, in key order), unit length and statistic of the file. */
function lexicalRows(name: string): string {
  const db = openDatabase(join(dir, name), { loadVectorExtension: false });
  try {
    return JSON.stringify([
      db
        .prepare(
          `SELECT * FROM (SELECT * FROM lexical_postings UNION ALL SELECT * FROM lexical_postings_fresh)
           ORDER BY agent_id, term, rid`,
        )
        .all(),
      db.prepare('SELECT * FROM lexical_docs ORDER BY rid').all(),
      db.prepare('SELECT * FROM lexical_stats ORDER BY agent_id').all(),
    ]);
  } finally {
    db.close();
  }
}

const QUERIES: readonly (readonly string[])[] = [
  ['deploy', 'walrus'],
  ['pipeline'],
  ['cache', 'retry', 'budget'],
  ['连接', 'schema'],
  ['"deploy pipeline"', 'ferns'],
  ['word3', 'index', 'token'],
  ['zebra'],
  ['quokka'],
];

function searchAll(store: SqliteMemoryStore): Promise<string> {
  return searchLexicalAll(store, { agents: ['a', 'b'], queries: QUERIES, limits: [3, 40] });
}

describe('BM25 postings of a small agent go straight into the main table', () => {
  it('puts a small agent’s postings in the main table, none in the fresh one, with no statement added', async () => {
    let fts = 0;
    const store = openStore('small.db', () => {
      fts += 1;
    });
    await store.insertMemories(rows('a', 0, 300));
    const where = levels('small.db', 'a');
    expect(where.main).toBeGreaterThan(2_000);
    expect(where.fresh).toBe(0);
    const { units, trigramRows } = inFile('small.db', (n) => ({
      units: n('SELECT count(*) AS n FROM lexical_docs'),
      trigramRows: n('SELECT count(*) AS n FROM memories_fts_trigram'),
    }));
    // One word-index row per unit, one trigram row per CJK unit, the postings in statements of 1,024 (the rest
    // one statement per bit), the unit lengths in statements of 256, one statement of the agent's statistics,
    // which also reads back its total length, and one of its users' statistics: the fresh table is never counted.
    let postingStatements = Math.floor(where.main / 1024);
    for (let rest = where.main % 1024; rest > 0; rest &= rest - 1) postingStatements += 1;
    expect(fts).toBe(units + trigramRows + postingStatements + Math.ceil(units / 256) + 2);
  });

  it('puts an agent’s postings in the fresh table from the write that brings it to the threshold', async () => {
    // Two stores, the same writes: the threshold right at the agent's total after the second batch, and one above.
    const at = openStore('at.db');
    const above = openStore('above.db');
    for (const store of [at, above]) await store.insertMemories(rows('a', 0, 20));
    const first = levels('at.db', 'a');
    expect(first).toEqual({ main: expect.any(Number), fresh: 0 });
    expect(first.main).toBeGreaterThan(100);
    const second = rows('a', 20, 60);
    // The second batch's tokens are the tokens its units add to the agent.
    const probe = openStore('probe.db');
    await probe.insertMemories([...rows('a', 0, 20), ...second]);
    const total = totalLength('probe.db', 'a');
    expect(total).toBeGreaterThan(totalLength('at.db', 'a'));

    POSTINGS_MERGE.directBelow = total;
    await at.insertMemories(second);
    POSTINGS_MERGE.directBelow = total + 1;
    await above.insertMemories(second);
    expect(levels('at.db', 'a')).toEqual({ main: first.main, fresh: expect.any(Number) });
    expect(levels('at.db', 'a').fresh).toBeGreaterThan(200);
    expect(levels('above.db', 'a')).toEqual({
      main: levels('at.db', 'a').main + levels('at.db', 'a').fresh,
      fresh: 0,
    });
    expect(unitLevels('at.db', 'a5')).toMatchObject({ fresh: 0 });
    expect(unitLevels('at.db', 'a30')).toMatchObject({ main: 0 });
    expect(await searchAll(at)).toBe(await searchAll(above));
  });

  it('splits one batch of two agents: the small one’s postings into the main table, the large one’s into the fresh one', async () => {
    const store = openStore('two.db');
    POSTINGS_MERGE.directBelow = 400;
    await store.insertMemories(rows('b', 0, 60));
    expect(totalLength('two.db', 'b')).toBeGreaterThan(400);
    const b0 = levels('two.db', 'b');
    expect(b0.main).toBe(0);
    // Interleaved rows of both agents in one batch.
    const mixed = rows('a', 0, 20).flatMap((r, k) => [r, ...rows('b', 60 + k, 61 + k)]);
    await store.insertMemories(mixed);
    expect(totalLength('two.db', 'a')).toBeLessThan(400);
    expect(levels('two.db', 'a')).toEqual({ main: expect.any(Number), fresh: 0 });
    expect(levels('two.db', 'a').main).toBeGreaterThan(100);
    expect(levels('two.db', 'b')).toEqual({ main: 0, fresh: expect.any(Number) });
    expect(levels('two.db', 'b').fresh).toBeGreaterThan(b0.fresh);
    expect(split('two.db')).toBe(0);
    const walrus = await store.searchLexical({ agentId: 'a', terms: ['walrus'], limit: 50 });
    expect(walrus.hits.length).toBeGreaterThan(0);
    expect(walrus.hits.every((h) => h.id.startsWith('a'))).toBe(true);

    // The connection's count of the fresh postings leaves out those written straight into the main table: the
    // small agent's next write does not merge, the large agent's next one does.
    const held = levels('two.db', 'b').fresh;
    POSTINGS_MERGE.at = held + 1;
    await store.insertMemories(rows('a', 20, 30));
    expect(levels('two.db', 'b').fresh).toBe(held);
    expect(levels('two.db', 'a').fresh).toBe(0);
    await store.insertMemories(rows('b', 100, 101));
    expect(levels('two.db', 'b')).toEqual({ main: expect.any(Number), fresh: 0 });
    expect(await store.checkIntegrity()).toMatchObject({ state: 'ok' });
  });

  it('removes a directly written unit and a fresh one alike on delete, update and forget', async () => {
    const store = openStore('edit.db');
    POSTINGS_MERGE.directBelow = 400;
    await store.insertMemories(rows('b', 0, 60));
    await store.insertMemories([
      ...rows('a', 0, 10),
      ...['del', 'upd', 'fgt'].flatMap((op) => [
        { id: `a-${op}`, agentId: 'a', kind: 'fact' as const, content: `quokka ${op} walrus` },
        { id: `b-${op}`, agentId: 'b', kind: 'fact' as const, content: `quokka ${op} walrus` },
      ]),
    ]);
    for (const op of ['del', 'upd', 'fgt']) {
      expect(unitLevels('edit.db', `a-${op}`)).toEqual({ main: 3, fresh: 0 });
      expect(unitLevels('edit.db', `b-${op}`)).toEqual({ main: 0, fresh: 3 });
    }
    const gone = async (agentId: string): Promise<string[]> =>
      (await store.searchLexical({ agentId, terms: ['quokka'], limit: 10 })).hits.map((h) => h.id).sort();
    expect(await gone('a')).toEqual(['a-del', 'a-fgt', 'a-upd']);
    expect(await gone('b')).toEqual(['b-del', 'b-fgt', 'b-upd']);

    for (const agentId of ['a', 'b']) {
      expect(await store.deleteMemory(agentId, `${agentId}-del`)).toBe(true);
      const upd = await store.getMemory(agentId, `${agentId}-upd`);
      await store.updateMemory(agentId, `${agentId}-upd`, upd?.revision ?? 0, { content: 'zebra crossing' });
      await store.forgetMemory(agentId, `${agentId}-fgt`, { actor: 'user', reason: 'asked to forget' });
    }
    expect(await gone('a')).toEqual([]);
    expect(await gone('b')).toEqual([]);
    for (const agentId of ['a', 'b']) {
      const zebra = await store.searchLexical({ agentId, terms: ['zebra'], limit: 3 });
      expect(zebra.hits.map((h) => h.id)).toEqual([`${agentId}-upd`]);
    }
    // The edited unit was indexed again by a write of its own: the small agent's straight into the main table.
    expect(unitLevels('edit.db', 'a-upd')).toEqual({ main: 2, fresh: 0 });
    expect(unitLevels('edit.db', 'b-upd')).toEqual({ main: 0, fresh: 2 });
    expect(
      inFile('edit.db', (n) =>
        n(`SELECT count(*) AS n FROM (SELECT * FROM lexical_postings UNION ALL SELECT * FROM lexical_postings_fresh)
           WHERE term = 'quokka'`),
      ),
    ).toBe(0);
    expect(split('edit.db')).toBe(0);
    expect(await store.checkIntegrity()).toMatchObject({ state: 'ok' });
  });

  it('gives the same postings, hits and scores as writing every agent into the fresh table', async () => {
    /** The same writes (merges, deletes, edits, a rollback) under one rule. */
    const build = async (
      name: string,
      rule: { at: number; directBelow: number },
    ): Promise<SqliteMemoryStore> => {
      Object.assign(POSTINGS_MERGE, rule);
      const store = openStore(name);
      await store.insertMemories([...rows('a', 0, 40, true), ...rows('b', 0, 10, true)]);
      await store.insertMemories(rows('a', 40, 80, true));
      expect(await store.deleteMemory('a', 'a7')).toBe(true);
      const a8 = await store.getMemory('a', 'a8');
      await store.updateMemory('a', 'a8', a8?.revision ?? 0, { content: 'zebra zebra crossing deploy' });
      await expect(
        store.insertMemories([...rows('b', 10, 60, true), rows('a', 3, 4)[0] as Row]),
      ).rejects.toMatchObject({
        name: 'EngramStoreError',
      });
      for (let from = 80; from < 300; from += 1 + (from % 50)) {
        const to = Math.min(300, from + 1 + (from % 50));
        await store.insertMemories([
          ...rows('a', from, to, true),
          ...rows('b', from - 70, from - 70 + (from % 7), true),
        ]);
      }
      const b5 = await store.getMemory('b', 'b5');
      await store.updateMemory('b', 'b5', b5?.revision ?? 0, { content: 'short now: walrus zebra' });
      await store.forgetMemory('a', 'a100', { actor: 'user', reason: 'asked to forget' });
      return store;
    };
    const fresh = await build('fresh.db', { at: Number.MAX_SAFE_INTEGER, directBelow: 0 });
    const freshHits = await searchAll(fresh);
    // `a` passes the threshold part-way; `b` stays small; merges happen inside batches.
    const mixed = await build('mixed.db', { at: 500, directBelow: 1_500 });
    const mixedHits = await searchAll(mixed);
    const direct = await build('direct.db', { at: 65_536, directBelow: 65_536 });
    const directHits = await searchAll(direct);
    expect(JSON.parse(freshHits).flat().length).toBeGreaterThan(200);
    expect(mixedHits).toBe(freshHits);
    expect(directHits).toBe(freshHits);
    for (const store of [fresh, mixed, direct])
      expect(await store.checkIntegrity()).toMatchObject({ state: 'ok' });
    for (const s of open.splice(0)) s.close();

    expect(lexicalRows('mixed.db')).toBe(lexicalRows('fresh.db'));
    expect(lexicalRows('direct.db')).toBe(lexicalRows('fresh.db'));
    expect(levels('fresh.db', 'a').main + levels('fresh.db', 'b').main).toBe(0);
    expect(levels('direct.db', 'a').fresh + levels('direct.db', 'b').fresh).toBe(0);
    expect(levels('mixed.db', 'a').main).toBeGreaterThan(0);
    expect(levels('mixed.db', 'b')).toMatchObject({ fresh: 0 });
    for (const name of ['fresh.db', 'mixed.db', 'direct.db']) expect(split(name)).toBe(0);
  });
});
