/**
 * "An exact duplicate is never stored twice", as a constraint of the schema (version 5): at most one active
 * row per agent, kind and content hash (events excepted). Inserts find the duplicate instead of storing it,
 * updates and lifecycle moves that would make a second one are refused, and a version-4 file that already
 * holds duplicates is resolved by the migration (the earliest kept, the others superseded by it).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { contentHash } from '@engram/contracts';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CHUNK_BUDGET } from './chunking.js';
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

describe('exact duplicates', () => {
  it('an insert of an active duplicate stores nothing and gives the existing row back', async () => {
    const store = openStore();
    const first = await store.insertUniqueMemory({
      agentId: 'a',
      kind: 'fact',
      content: 'Deploys run on Fridays',
    });
    expect(first.created).toBe(true);
    clock = 2_000;
    // The same text after normalisation (case, spacing) is the same content hash.
    const again = await store.insertUniqueMemory({
      agentId: 'a',
      kind: 'fact',
      content: '  deploys RUN on   fridays ',
      tags: ['topic:ops'],
    });
    expect(again).toEqual({ created: false, record: first.record });
    expect(
      await store.insertMemory({ agentId: 'a', kind: 'fact', content: 'Deploys run on Fridays' }),
    ).toEqual(first.record);
    // Another kind, another agent and an archived original are not duplicates.
    expect(
      (await store.insertUniqueMemory({ agentId: 'a', kind: 'semantic', content: 'Deploys run on Fridays' }))
        .created,
    ).toBe(true);
    expect(
      (await store.insertUniqueMemory({ agentId: 'b', kind: 'fact', content: 'Deploys run on Fridays' }))
        .created,
    ).toBe(true);
    await store.archiveMemory('a', first.record.id);
    const revived = await store.insertUniqueMemory({
      agentId: 'a',
      kind: 'fact',
      content: 'Deploys run on Fridays',
    });
    expect(revived.created).toBe(true);
    expect(revived.record.id).not.toBe(first.record.id);
    const active = await store.listMemories('a', { lifecycles: ['active'], kinds: ['fact'] });
    expect(active.map((r) => r.id)).toEqual([revived.record.id]);
    expect(rawCount(path, 'SELECT count(*) AS n FROM memories')).toBe(4);
  });

  it('events are archival history: the same text at two seqs is two rows', async () => {
    const store = openStore();
    const a = await store.insertUniqueMemory({
      agentId: 'a',
      kind: 'event',
      content: 'ok',
      seqFrom: 1,
      seqTo: 1,
    });
    const b = await store.insertUniqueMemory({
      agentId: 'a',
      kind: 'event',
      content: 'ok',
      seqFrom: 2,
      seqTo: 2,
    });
    expect([a.created, b.created]).toEqual([true, true]);
    expect(a.record.id).not.toBe(b.record.id);
  });

  it('a batch stores each distinct text once: duplicates inside it and of stored rows give that row', async () => {
    const store = openStore();
    const stored = await store.insertMemory({
      agentId: 'a',
      kind: 'fact',
      content: 'The cache holds 512 entries',
    });
    const records = await store.insertMemories([
      { agentId: 'a', kind: 'fact', content: 'Backups run nightly' },
      { agentId: 'a', kind: 'fact', content: 'backups run NIGHTLY' },
      { agentId: 'a', kind: 'fact', content: 'The cache holds 512 entries' },
    ]);
    expect(records[1]).toEqual(records[0]);
    expect(records[2]).toEqual(stored);
    expect(rawCount(path, 'SELECT count(*) AS n FROM memories')).toBe(2);
    // One word-index entry per stored row: the skipped inserts wrote no derived row.
    expect(rawCount(path, 'SELECT count(*) AS n FROM lexical_docs')).toBe(2);
  });

  it('a long (chunked) memory is stored once, its chunks once', async () => {
    const store = openStore();
    const content = Array.from(
      { length: 40 },
      (_, i) => `Paragraph ${i} of the runbook explains step ${i}.`,
    ).join('\n\n');
    expect(content.length).toBeGreaterThan(CHUNK_BUDGET);
    const first = await store.insertUniqueMemory({ agentId: 'a', kind: 'episodic', content });
    const chunks = rawCount(path, 'SELECT count(*) AS n FROM memory_chunks');
    expect(chunks).toBeGreaterThan(1);
    const again = await store.insertUniqueMemory({ agentId: 'a', kind: 'episodic', content });
    expect(again).toEqual({ created: false, record: first.record });
    expect(rawCount(path, 'SELECT count(*) AS n FROM memory_chunks')).toBe(chunks);
    expect(rawCount(path, 'SELECT count(*) AS n FROM memories')).toBe(1);
  });

  it('an update or a lifecycle move that would make a second active duplicate is refused, changing nothing', async () => {
    const store = openStore();
    const a = await store.insertMemory({ agentId: 'a', kind: 'fact', content: 'The port is 8080' });
    const b = await store.insertMemory({ agentId: 'a', kind: 'fact', content: 'The port is 9090' });
    await expect(
      store.updateMemory('a', b.id, b.revision, { content: 'the port is 8080' }),
    ).rejects.toMatchObject({
      code: 'ENGRAM_STORE_CONFLICT',
    });
    const s = await store.insertMemory({ agentId: 'a', kind: 'semantic', content: 'The port is 8080' });
    await expect(store.updateMemory('a', s.id, s.revision, { kind: 'fact' })).rejects.toMatchObject({
      code: 'ENGRAM_STORE_CONFLICT',
    });
    expect(await store.getMemory('a', b.id)).toEqual(b);
    expect(await store.getMemory('a', s.id)).toEqual(s);
    // A row archived while its twin was stored cannot come back to active beside it.
    const archived = await store.archiveMemory('a', a.id);
    const twin = await store.insertMemory({ agentId: 'a', kind: 'fact', content: 'The port is 8080' });
    await expect(store.setLifecycle('a', a.id, archived.revision, 'active')).rejects.toMatchObject({
      code: 'ENGRAM_STORE_CONFLICT',
    });
    await expect(
      store.updateMemory('a', a.id, archived.revision, { lifecycle: 'active' }),
    ).rejects.toMatchObject({ code: 'ENGRAM_STORE_CONFLICT' });
    expect(await store.getMemory('a', a.id)).toEqual(archived);
    // Once the twin is gone, it can.
    await store.archiveMemory('a', twin.id);
    expect((await store.setLifecycle('a', a.id, archived.revision, 'active')).lifecycle).toBe('active');
  });

  it('supersede: a replacement with the old text is a new row; one that duplicates another row links to it', async () => {
    const store = openStore();
    const old = await store.insertMemory({ agentId: 'a', kind: 'fact', content: 'Release on Monday' });
    const other = await store.insertMemory({ agentId: 'a', kind: 'fact', content: 'Release on Tuesday' });
    const same = await store.supersedeMemory('a', old.id, old.revision, {
      agentId: 'a',
      kind: 'fact',
      content: 'Release on Monday',
    });
    expect(same.replacement.id).not.toBe(old.id);
    expect(same.superseded).toMatchObject({ lifecycle: 'superseded', supersededBy: same.replacement.id });
    const linked = await store.supersedeMemory('a', same.replacement.id, same.replacement.revision, {
      agentId: 'a',
      kind: 'fact',
      content: 'release on TUESDAY',
    });
    expect(linked.replacement).toEqual(other);
    expect(linked.superseded).toMatchObject({ lifecycle: 'superseded', supersededBy: other.id });
    expect(await store.getMemory('a', same.replacement.id)).toEqual(linked.superseded);
    expect(rawCount(path, 'SELECT count(*) AS n FROM memories')).toBe(3);
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
    db.exec('DROP INDEX memories_active_content');
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
    expect(SCHEMA_VERSION).toBe(8);
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
