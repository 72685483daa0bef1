/**
 * Schema v8 → v9 (the embedding index keeps only the rows awaiting an embedding; the content-hash lookup is
 * keyed by the hash's first digits): a file made by schema 8 opens with the same backlog, the drain lists the
 * same rows in the same order, its queries read the new partial indexes, an embedded row leaves them, and the
 * lookup by content hash finds the same rows through its new index.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { contentHash } from '@engram/contracts';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase } from './native.js';
import { SCHEMA_VERSION } from './schema.js';
import { createSqliteMemoryStore, type SqliteMemoryStore } from './sqlite-store.js';

let dir: string;
const open: SqliteMemoryStore[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'engram-v9-'));
});

afterEach(() => {
  for (const s of open.splice(0)) s.close();
  rmSync(dir, { recursive: true, force: true });
});

const PROFILE = { id: 'test-4d', dimensions: 4 };

function openStore(path: string): SqliteMemoryStore {
  const store = createSqliteMemoryStore({ path, embedding: PROFILE });
  open.push(store);
  return store;
}

function closeAll(): void {
  for (const s of open.splice(0)) s.close();
}

function vector(i: number): Float32Array {
  return new Float32Array([1, (i % 5) + 1, 0.5, 0.25]);
}

async function hashLookups(store: SqliteMemoryStore): Promise<string> {
  const out: unknown[] = [];
  for (const text of ['note 5 about the deploy pipeline', 'note 8 about the deploy pipeline', 'absent']) {
    for (const agent of ['a', 'b']) {
      const all = await store.findByContentHash(agent, contentHash(text));
      const facts = await store.findByContentHash(agent, contentHash(text), 'fact');
      out.push(
        all.map((r) => [r.id, r.kind, r.lifecycle]),
        facts.map((r) => r.id),
      );
    }
  }
  return JSON.stringify(out);
}

async function backlogView(store: SqliteMemoryStore): Promise<string> {
  const pending = await store.listPendingEmbeddings({ limit: 1000, retryErrorsBelowAttempts: 3 });
  const ofB = await store.listPendingEmbeddings({ agentId: 'b', limit: 1000 });
  return JSON.stringify([
    pending.map((p) => [p.id, p.agentId, p.embeddingAttempts]),
    ofB.map((p) => p.id),
    await store.countEmbeddingBacklog(),
  ]);
}

function indexes(path: string): string[] {
  const db = openDatabase(path, { loadVectorExtension: false });
  try {
    return (
      db
        .prepare(
          "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'memories' ORDER BY name",
        )
        .all() as { name: string }[]
    ).map((r) => r.name);
  } finally {
    db.close();
  }
}

describe('schema v8 → v9', () => {
  it('carries a version-8 file forward with the same embedding backlog, read through the partial indexes', async () => {
    const path = join(dir, 'v8.db');
    const first = openStore(path);
    // Rows stored with their vector (ready), rows left pending, on two agents, interleaved.
    await first.insertMemories(
      Array.from({ length: 40 }, (_, i) => ({
        id: `m${i}`,
        agentId: i % 4 === 0 ? 'b' : 'a',
        kind: 'fact' as const,
        content: `note ${i} about the deploy pipeline`,
        ...(i % 3 === 0 ? {} : { vector: vector(i) }),
      })),
    );
    // One row in `error` after a failed attempt.
    const [m3] = await first.listPendingEmbeddings({ ids: ['m3'], limit: 1 });
    expect(
      await first.commitEmbeddings([{ id: 'm3', revision: m3?.revision ?? 0, state: 'error' }]),
    ).toMatchObject({ error: 1 });
    // The same text as an event beside the fact, and a superseded copy: the lookup returns every lifecycle and kind.
    await first.insertMemory({
      id: 'e5',
      agentId: 'a',
      kind: 'event',
      content: 'note 5 about the deploy pipeline',
    });
    await first.archiveMemory('b', 'm8');
    const before = await backlogView(first);
    const lookupsBefore = await hashLookups(first);
    expect(JSON.parse(lookupsBefore).flat().length).toBeGreaterThan(3);
    closeAll();
    // Turn the file back into what version 8 wrote: the one embedding index over every row, version 8.
    const raw = openDatabase(path, { loadVectorExtension: false });
    try {
      raw.exec(`DROP INDEX memories_embedding_pending; DROP INDEX memories_embedding_error;
        CREATE INDEX memories_embedding ON memories(embedding_state, agent_id, rid);
        DROP INDEX memories_active_hash; DROP INDEX memories_other_hash_prefix;
        CREATE UNIQUE INDEX memories_active_content ON memories(agent_id, kind, content_hash)
          WHERE lifecycle = 'active' AND kind <> 'event';
        CREATE INDEX memories_agent_hash ON memories(agent_id, content_hash);
        INSERT INTO lexical_postings SELECT * FROM lexical_postings_fresh; DROP TABLE lexical_postings_fresh;
        ALTER TABLE lexical_postings DROP COLUMN length;`);
      raw.prepare("UPDATE meta SET value = '8' WHERE key = 'schema_version'").run();
    } finally {
      raw.close();
    }
    expect(indexes(path)).toEqual(expect.arrayContaining(['memories_agent_hash', 'memories_embedding']));

    expect(SCHEMA_VERSION).toBe(20);
    const store = openStore(path);
    expect(store.info.schemaVersion).toBe(20);
    const names = indexes(path);
    expect(names).not.toContain('memories_embedding');
    expect(names).not.toContain('memories_agent_hash');
    // Version 9's prefix index over every row is, since version 12, the partial index of the rows outside the
    // exact-duplicate rule (see migrate-v12.native.test.ts).
    expect(names).not.toContain('memories_agent_hash_prefix');
    expect(names).toEqual(
      expect.arrayContaining([
        'memories_active_hash',
        'memories_other_hash_prefix',
        'memories_embedding_error',
        'memories_embedding_pending',
      ]),
    );
    expect(await backlogView(store)).toBe(before);
    expect(await hashLookups(store)).toBe(lookupsBefore);
    const listed = JSON.parse(before)[0] as [string, string, number][];
    // 14 rows were stored without a vector (every third) and one event, one of them is now an error.
    expect(listed).toHaveLength(15);
    expect(listed.find(([id]) => id === 'm3')).toEqual(['m3', 'a', 1]);

    // The drain's statements read the partial indexes, never the whole table.
    const db = openDatabase(path, { loadVectorExtension: false });
    try {
      const plan = (sql: string): string =>
        (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all() as { detail: string }[])
          .map((r) => r.detail)
          .join(' | ');
      expect(
        plan(
          "SELECT rid FROM memories m WHERE (m.embedding_state = 'pending' OR (m.embedding_state = 'error' AND m.embedding_attempts < 3)) AND m.lifecycle = 'active' ORDER BY m.rid LIMIT 10",
        ),
      ).toMatch(/memories_embedding_pending.*memories_embedding_error/);
      expect(
        plan(
          "SELECT rid FROM memories m WHERE m.embedding_state = 'pending' AND m.lifecycle = 'active' AND m.agent_id = 'b' ORDER BY m.rid LIMIT 10",
        ),
      ).toMatch(/SEARCH m USING INDEX memories_embedding_pending \(embedding_state=\? AND agent_id=\?\)/);
    } finally {
      db.close();
    }

    // Embedding a listed row takes it out of the backlog and out of the index.
    const pending = await store.listPendingEmbeddings({ agentId: 'b', limit: 1 });
    const [p] = pending;
    expect(p).toBeDefined();
    if (p === undefined) return;
    expect(
      await store.commitEmbeddings([{ id: p.id, revision: p.revision, state: 'ready', vector: vector(1) }]),
    ).toMatchObject({ ready: 1 });
    expect((await store.listPendingEmbeddings({ agentId: 'b', limit: 1000 })).map((x) => x.id)).not.toContain(
      p.id,
    );
    closeAll();
    const check = openDatabase(path, { loadVectorExtension: false });
    try {
      expect(
        check
          .prepare(
            "SELECT count(*) AS n FROM memories INDEXED BY memories_embedding_pending WHERE embedding_state = 'pending'",
          )
          .get(),
      ).toEqual({ n: 13 });
      expect(
        check.prepare("SELECT count(*) AS n FROM memories WHERE embedding_state = 'ready'").get(),
      ).toEqual({
        n: 27,
      });
    } finally {
      check.close();
    }
  });
});
