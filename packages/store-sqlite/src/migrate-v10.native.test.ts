/**
 * Schema v9 → v10 (each BM25 posting carries its unit's length; the scoring statement no longer joins the
 * units' length rows): a file made by schema 9 opens with every posting's length filled from its unit, the
 * same BM25 hits and scores bit for bit, and later writes keep the lengths right.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lexicalNote, lexicalWord, searchLexicalAll } from '@engram/test-support/lexical-fixture';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase } from './native.js';
import { SCHEMA_VERSION } from './schema.js';
import { createSqliteMemoryStore, type SqliteMemoryStore } from './sqlite-store.js';

let dir: string;
const open: SqliteMemoryStore[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'engram-v10-'));
});

afterEach(() => {
  for (const s of open.splice(0)) s.close();
  rmSync(dir, { recursive: true, force: true });
});

function content(i: number): string {
  const extra =
    i % 5 === 0
      ? ` ${lexicalWord(i, 2)} ${lexicalWord(i, 3)} extra words make this unit longer than most`
      : '';
  return lexicalNote(i, { tail: extra });
}

const QUERIES: readonly (readonly string[])[] = [
  ['deploy', 'walrus'],
  ['pipeline'],
  ['cache', 'retry', 'budget'],
  ['连接', 'schema'],
  ['"deploy pipeline"', 'ferns'],
  ['longer', 'index', 'token'],
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

/** Postings whose length differs from their unit's length row (or is missing). */
function wrongLengths(path: string): number {
  const db = openDatabase(path, { loadVectorExtension: false });
  try {
    return (
      db
        .prepare(
          `SELECT count(*) AS n FROM (SELECT * FROM lexical_postings UNION ALL SELECT * FROM lexical_postings_fresh) p LEFT JOIN lexical_docs d ON d.rid = p.rid
           WHERE p.length IS NULL OR d.length IS NULL OR p.length <> d.length`,
        )
        .get() as { n: number }
    ).n;
  } finally {
    db.close();
  }
}

describe('schema v9 → v10', () => {
  it('carries a version-9 file forward with every posting length filled and identical BM25 hits and scores', async () => {
    const path = join(dir, 'v9.db');
    const first = openStore(path);
    await first.insertMemories(
      Array.from({ length: 80 }, (_, i) => ({
        id: `m${i}`,
        agentId: i % 4 === 0 ? 'b' : 'a',
        kind: 'fact' as const,
        // One long memory is chunked: its chunks are units of their own lengths.
        content: i === 7 ? `${content(i)} ${'walrus ferns cache budget. '.repeat(120)}` : content(i),
      })),
    );
    const m9 = await first.getMemory('a', 'm9');
    await first.updateMemory('a', 'm9', m9?.revision ?? 0, { content: 'deploy deploy walrus only now' });
    expect(await first.deleteMemory('a', 'm10')).toBe(true);
    const before = await searchAll(first);
    expect(JSON.parse(before).flat().length).toBeGreaterThan(100);
    closeAll();
    // Turn the file back into what version 9 wrote: postings without their unit's length, version 9.
    const raw = openDatabase(path, { loadVectorExtension: false });
    try {
      // Version 9 kept every posting in one table.
      raw.exec(
        'INSERT INTO lexical_postings SELECT * FROM lexical_postings_fresh; DROP TABLE lexical_postings_fresh;',
      );
      raw.exec('ALTER TABLE lexical_postings DROP COLUMN length');
      raw.prepare("UPDATE meta SET value = '9' WHERE key = 'schema_version'").run();
    } finally {
      raw.close();
    }

    expect(SCHEMA_VERSION).toBe(20);
    const store = openStore(path);
    expect(store.info.schemaVersion).toBe(20);
    expect(await searchAll(store)).toBe(before);
    closeAll();
    expect(wrongLengths(path)).toBe(0);

    // Writes after the migration keep every posting's length equal to its unit's.
    const again = openStore(path);
    await again.insertMemories([
      { id: 'n1', agentId: 'a', kind: 'fact', content: 'walrus walrus pipeline after the migration' },
      { id: 'n2', agentId: 'b', kind: 'fact', content: `${'schema index retry. '.repeat(150)}` },
    ]);
    const m11 = await again.getMemory('a', 'm11');
    await again.updateMemory('a', 'm11', m11?.revision ?? 0, { content: 'a much shorter zebra' });
    const zebra = await again.searchLexical({ agentId: 'a', terms: ['zebra'], limit: 3 });
    expect(zebra.hits.map((h) => h.id)).toEqual(['m11']);
    closeAll();
    expect(wrongLengths(path)).toBe(0);
  });

  it('a new file writes each posting with its unit length', async () => {
    const path = join(dir, 'new.db');
    const store = openStore(path);
    await store.insertMemories(
      Array.from({ length: 30 }, (_, i) => ({
        id: `m${i}`,
        agentId: 'a',
        kind: 'fact' as const,
        content: content(i),
      })),
    );
    closeAll();
    expect(wrongLengths(path)).toBe(0);
  });
});
