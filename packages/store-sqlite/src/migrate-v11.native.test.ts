/**
 * Schema v10 → v11 (the BM25 postings in two levels: a fresh table every write goes into, merged in bulk into
 * the main one): a file made by schema 10, all of its postings in `lexical_postings`, opens with the fresh
 * table created and empty, its postings where they were, the same BM25 hits and scores bit for bit, and keeps
 * taking inserts, edits and deletes (its old units removed from the main table, new ones found at once).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lexicalNote, searchLexicalAll } from '@engram/test-support/lexical-fixture';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { POSTINGS_MERGE } from './lexical-postings.js';
import { openDatabase } from './native.js';
import { SCHEMA_VERSION } from './schema.js';
import { createSqliteMemoryStore, type SqliteMemoryStore } from './sqlite-store.js';

let dir: string;
const open: SqliteMemoryStore[] = [];
const DEFAULT_DIRECT_BELOW = POSTINGS_MERGE.directBelow;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'engram-v11-'));
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
  ['"deploy pipeline"', 'ferns'],
];

function openStore(path: string): SqliteMemoryStore {
  const store = createSqliteMemoryStore({ path, embedding: null });
  open.push(store);
  return store;
}

function closeAll(): void {
  for (const s of open.splice(0)) s.close();
}

function searchAll(store: SqliteMemoryStore): Promise<string> {
  return searchLexicalAll(store, { agents: ['a', 'b'], queries: QUERIES, limits: [3, 50] });
}

function counts(path: string): { main: number; fresh: number | null; version: string } {
  const db = openDatabase(path, { loadVectorExtension: false });
  try {
    const n = (sql: string): number => (db.prepare(sql).get() as { n: number }).n;
    const hasFresh = n("SELECT count(*) AS n FROM sqlite_master WHERE name = 'lexical_postings_fresh'") === 1;
    return {
      main: n('SELECT count(*) AS n FROM lexical_postings'),
      fresh: hasFresh ? n('SELECT count(*) AS n FROM lexical_postings_fresh') : null,
      version: (db.prepare("SELECT value FROM meta WHERE key = 'schema_version'").get() as { value: string })
        .value,
    };
  } finally {
    db.close();
  }
}

describe('schema v10 → v11', () => {
  it('carries a version-10 file forward with its postings in place, identical BM25 hits and scores, and later writes', async () => {
    const path = join(dir, 'v10.db');
    const first = openStore(path);
    await first.insertMemories(
      Array.from({ length: 80 }, (_, i) => ({
        id: `m${i}`,
        agentId: i % 4 === 0 ? 'b' : 'a',
        kind: 'fact' as const,
        content: i === 7 ? `${content(i)} ${'walrus ferns cache budget. '.repeat(120)}` : content(i),
      })),
    );
    expect(await first.deleteMemory('a', 'm10')).toBe(true);
    const before = await searchAll(first);
    expect(JSON.parse(before).flat().length).toBeGreaterThan(100);
    closeAll();
    // Turn the file into what version 10 wrote: every posting in `lexical_postings`, no fresh table.
    const raw = openDatabase(path, { loadVectorExtension: false });
    try {
      raw.exec(`INSERT INTO lexical_postings SELECT * FROM lexical_postings_fresh;
        DROP TABLE lexical_postings_fresh;`);
      raw.prepare("UPDATE meta SET value = '10' WHERE key = 'schema_version'").run();
    } finally {
      raw.close();
    }
    const old = counts(path);
    expect(old).toMatchObject({ fresh: null, version: '10' });
    expect(old.main).toBeGreaterThan(500);

    expect(SCHEMA_VERSION).toBe(20);
    const store = openStore(path);
    expect(store.info.schemaVersion).toBe(20);
    expect(await searchAll(store)).toBe(before);
    closeAll();
    expect(counts(path)).toEqual({ main: old.main, fresh: 0, version: String(SCHEMA_VERSION) });

    // Every later write goes to the fresh table, as it would for a large agent (a small agent's go straight into
    // the main table, see `POSTINGS_MERGE.directBelow`).
    POSTINGS_MERGE.directBelow = 0;
    const again = openStore(path);
    await again.insertMemories([
      { id: 'n1', agentId: 'a', kind: 'fact', content: 'zebra walrus pipeline after the migration' },
      { id: 'n2', agentId: 'b', kind: 'fact', content: `${'schema index retry. '.repeat(150)}` },
    ]);
    const m11 = await again.getMemory('a', 'm11');
    await again.updateMemory('a', 'm11', m11?.revision ?? 0, { content: 'a much shorter zebra' });
    expect(await again.deleteMemory('a', 'm9')).toBe(true);
    const zebra = await again.searchLexical({ agentId: 'a', terms: ['zebra'], limit: 3 });
    expect(zebra.hits.map((h) => h.id).sort()).toEqual(['m11', 'n1']);
    const deploy = await again.searchLexical({ agentId: 'a', terms: ['deploy', 'walrus'], limit: 50 });
    expect(deploy.hits.map((h) => h.id)).not.toContain('m9');
    expect(await again.pruneOrphanedVectors()).toEqual({ pruned: 0 });
    closeAll();
    const after = counts(path);
    // m9's and m11's old postings left the main table; the new units' postings are in the fresh one.
    expect(after.main).toBeLessThan(old.main);
    expect(after.fresh).toBeGreaterThan(0);
  });
});
