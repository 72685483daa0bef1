/**
 * "An exact duplicate is never stored twice" in the SQLite store's own tables (the rule as the port shows it is
 * the conformance suite's, in @engram/test-support): skipped inserts write no derived row, and a version-4 file
 * that already holds duplicates is resolved by the migration (the earliest kept, the others superseded by it).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { contentHash } from '@engram/contracts';
import { CHUNK_BUDGET } from '@engram/store/port-kit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase } from './native.js';
import { SCHEMA_VERSION } from './schema.js';
import { createSqliteMemoryStore, type SqliteMemoryStore } from './sqlite-store.js';

let dir: string;
let path: string;
let clock: number;
const open: SqliteMemoryStore[] = [];

function openStore(file = path): SqliteMemoryStore {
  let n = 0;
  const store = createSqliteMemoryStore({
    path: file,
    embedding: null,
    now: () => clock,
    idFactory: () => {
      n += 1;
      return `gen-${clock}-${n}`;
    },
  });
  open.push(store);
  return store;
}

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'engram-dedupe-'));
  path = join(dir, 'store.db');
  clock = 1_000;
});

afterEach(() => {
  for (const s of open.splice(0)) s.close();
  rmSync(dir, { recursive: true, force: true });
});

function rawCount(file: string, sql: string, ...params: unknown[]): number {
  const db = openDatabase(file, { loadVectorExtension: false });
  try {
    return (db.prepare(sql).get(...params) as { n: number }).n;
  } finally {
    db.close();
  }
}

describe('exact duplicates leave no derived rows', () => {
  it('a batch with duplicates writes one BM25 unit per stored row: the skipped inserts wrote nothing', async () => {
    const store = openStore();
    await store.insertMemory({ agentId: 'a', kind: 'fact', content: 'The cache holds 512 entries' });
    await store.insertMemories([
      { agentId: 'a', kind: 'fact', content: 'Backups run nightly' },
      { agentId: 'a', kind: 'fact', content: 'backups run NIGHTLY' },
      { agentId: 'a', kind: 'fact', content: 'The cache holds 512 entries' },
    ]);
    expect(rawCount(path, 'SELECT count(*) AS n FROM memories')).toBe(2);
    expect(rawCount(path, 'SELECT count(*) AS n FROM lexical_docs')).toBe(2);
  });

  it('a long (chunked) memory inserted twice keeps its chunk rows once', async () => {
    const store = openStore();
    const content = Array.from(
      { length: 40 },
      (_, i) => `Paragraph ${i} of the runbook explains step ${i}.`,
    ).join('\n\n');
    expect(content.length).toBeGreaterThan(CHUNK_BUDGET);
    await store.insertUniqueMemory({ agentId: 'a', kind: 'episodic', content });
    const chunks = rawCount(path, 'SELECT count(*) AS n FROM memory_chunks');
    expect(chunks).toBeGreaterThan(1);
    await store.insertUniqueMemory({ agentId: 'a', kind: 'episodic', content });
    expect(rawCount(path, 'SELECT count(*) AS n FROM memory_chunks')).toBe(chunks);
  });
});

/**
 * A file exactly as schema version 4 left it, holding duplicates: written by this store, then the version-5
 * index dropped and the version set back to 4 (version 5 adds nothing else), and rows archived while their
 * twins were inserted made active again, as an unconstrained writer would have left them.
 */
async function writeVersion4WithDuplicates(file: string): Promise<Record<string, string>> {
  const store = openStore(file);
  const ids: Record<string, string> = {};
  const put = async (key: string, kind: 'fact' | 'event' | 'semantic', content: string, agentId = 'a') => {
    ids[key] = (await store.insertMemory({ agentId, kind, content, createdAt: clock })).id;
    clock += 1;
  };
  clock = 5_000;
  await put('late', 'fact', 'The build uses pnpm');
  await store.archiveMemory('a', ids.late as string);
  clock = 1_000;
  await put('early', 'fact', 'the build uses PNPM');
  await store.archiveMemory('a', ids.early as string);
  clock = 1_000;
  await put('tie', 'fact', 'The build  uses pnpm');
  await put('semantic', 'semantic', 'The build uses pnpm');
  await put('other-agent', 'fact', 'The build uses pnpm', 'b');
  await put('event-1', 'event', 'The build uses pnpm');
  await put('event-2', 'event', 'The build uses pnpm');
  await put('unique', 'fact', 'Tests run in CI');
  store.close();
  const db = openDatabase(file, { loadVectorExtension: false });
  try {
    // The rule's unique index (version 5's `memories_active_content`, keyed anew by version 12).
    db.exec('DROP INDEX memories_active_hash');
    // What version 6 added.
    db.exec(`DROP INDEX memories_agent_user; DROP INDEX memories_agent_session;
      DROP INDEX memories_agent_superseded_by; DROP TABLE memory_links; DROP TABLE memory_history;`);
    for (const column of ['user_id', 'metadata', 'valid_from', 'valid_to', 'forgotten_at']) {
      db.exec(`ALTER TABLE memories DROP COLUMN ${column}`);
    }
    db.prepare("UPDATE meta SET value = '4' WHERE key = 'schema_version'").run();
    db.prepare("UPDATE memories SET lifecycle = 'active' WHERE id IN (?, ?)").run(ids.late, ids.early);
  } finally {
    db.close();
  }
  return ids;
}

describe('schema v4 → v5', () => {
  it('resolves the duplicates a version-4 file holds (earliest kept, the others superseded by it), then constrains', async () => {
    const file = join(dir, 'v4.db');
    const ids = await writeVersion4WithDuplicates(file);
    expect(rawCount(file, "SELECT count(*) AS n FROM memories WHERE lifecycle = 'active'")).toBe(8);
    const hash = contentHash('The build uses pnpm');
    expect(
      rawCount(
        file,
        "SELECT count(*) AS n FROM memories WHERE agent_id = 'a' AND kind = 'fact' AND content_hash = ?",
        hash,
      ),
    ).toBe(3);

    clock = 9_000;
    const store = openStore(file);
    expect(SCHEMA_VERSION).toBe(20);
    expect(store.info.schemaVersion).toBe(SCHEMA_VERSION);
    const byId = async (key: string) =>
      store.getMemory(key === 'other-agent' ? 'b' : 'a', ids[key] as string);
    // The earliest (created first; on a tie, inserted first) stays; the others point at it. Nothing is deleted.
    expect(await byId('early')).toMatchObject({ lifecycle: 'active', revision: 2 });
    for (const key of ['late', 'tie']) {
      expect(await byId(key)).toMatchObject({
        lifecycle: 'superseded',
        supersededBy: ids.early,
        revision: key === 'late' ? 3 : 2,
        updatedAt: 9_000,
      });
    }
    for (const key of ['semantic', 'other-agent', 'event-1', 'event-2', 'unique']) {
      expect(await byId(key)).toMatchObject({ lifecycle: 'active', revision: 1 });
    }
    expect(rawCount(file, 'SELECT count(*) AS n FROM memories')).toBe(8);
    const hits = await store.searchLexical({ agentId: 'a', terms: ['pnpm'], kinds: ['fact'], limit: 10 });
    expect(hits.hits.map((h) => h.id)).toEqual([ids.early]);
    // From now on the schema holds the rule.
    const again = await store.insertUniqueMemory({
      agentId: 'a',
      kind: 'fact',
      content: 'The build uses pnpm',
    });
    expect(again).toMatchObject({ created: false, record: { id: ids.early } });
    store.close();
    const db = openDatabase(file, { loadVectorExtension: false });
    try {
      expect(() => db.prepare("UPDATE memories SET lifecycle = 'active' WHERE id = ?").run(ids.late)).toThrow(
        /UNIQUE/,
      );
    } finally {
      db.close();
    }
  });
});

describe('a batch insert stores what one-by-one inserts store', () => {
  /** Every row of the memory tables and their derived tables, in key order. */
  function rows(file: string): string {
    const db = openDatabase(file, { loadVectorExtension: false });
    try {
      return JSON.stringify(
        [
          'SELECT * FROM memories ORDER BY rid',
          'SELECT * FROM memory_tags ORDER BY agent_id, tag, rid',
          'SELECT * FROM memory_chunks ORDER BY agent_id, rid, idx',
          'SELECT rowid, * FROM memories_fts_words ORDER BY rowid',
          'SELECT rowid, * FROM memories_fts_trigram ORDER BY rowid',
          'SELECT * FROM (SELECT * FROM lexical_postings UNION ALL SELECT * FROM lexical_postings_fresh) ORDER BY agent_id, term, rid',
          'SELECT * FROM lexical_docs ORDER BY rid',
          'SELECT * FROM lexical_stats ORDER BY agent_id',
          "SELECT * FROM sqlite_sequence WHERE name = 'memories'",
        ].map((sql) => db.prepare(sql).all()),
      );
    } finally {
      db.close();
    }
  }

  it('keeps the same rows, row ids and duplicates, and returns the same records', async () => {
    const long = `${'walrus ferns cache budget. '.repeat(Math.ceil(CHUNK_BUDGET / 20))}`;
    const inputs = Array.from({ length: 150 }, (_, i) => ({
      // Every other row names its id; the rest get generated ones.
      ...(i % 2 === 0 ? { id: `m${i}` } : {}),
      agentId: i % 3 === 0 ? 'b' : 'a',
      kind: (['fact', 'event', 'semantic'] as const)[i % 3] ?? 'fact',
      // Contents repeat, so rows of this batch duplicate each other (events are stored every time).
      content: i === 7 ? long : i % 10 === 4 ? `会议记录 note ${i % 20}` : `note ${i % 40} about the cache`,
      ...(i % 5 === 0 ? { tags: [`t:${i % 2}`] } : {}),
    }));
    // A skipped duplicate whose id a later row of the batch takes: one by one, the id was still free.
    inputs.push({ id: 'late', agentId: 'a', kind: 'fact', content: 'note 2 about the cache' });
    inputs.push({ id: 'late', agentId: 'a', kind: 'fact', content: 'a new note' });
    const batched = openStore(join(dir, 'batched.db'));
    const single = openStore(join(dir, 'single.db'));
    await batched.insertMemory({ agentId: 'a', kind: 'fact', content: 'note 2 about the cache' });
    await single.insertMemory({ agentId: 'a', kind: 'fact', content: 'note 2 about the cache' });
    const fromBatch = await batched.insertMemories(inputs);
    const oneByOne = [];
    for (const input of inputs) oneByOne.push(await single.insertMemory(input));
    expect(fromBatch).toEqual(oneByOne);
    expect(new Set(fromBatch.map((r) => r.id)).size).toBeLessThan(inputs.length);
    for (const s of open.splice(0)) s.close();
    expect(rows(join(dir, 'batched.db'))).toBe(rows(join(dir, 'single.db')));
  });

  it('refuses a batch whose skipped duplicate names an id an earlier row took, and stores none of it', async () => {
    const store = openStore();
    await expect(
      store.insertMemories([
        { id: 'x', agentId: 'a', kind: 'fact', content: 'first' },
        { id: 'y', agentId: 'a', kind: 'fact', content: 'second' },
        { id: 'x', agentId: 'a', kind: 'fact', content: 'second' },
      ]),
    ).rejects.toMatchObject({ code: 'ENGRAM_STORE_CONFLICT' });
    expect(await store.listMemories('a')).toEqual([]);
  });
});
