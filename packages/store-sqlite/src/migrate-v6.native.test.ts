/**
 * Schema v4 → v6 (scopes, metadata, validity, links, history): a file written by the version-4 schema — built
 * with the version 1–4 migrations themselves, rows inserted as version 2 wrote them and indexed by the
 * version 3 and 4 steps — opens with the current store, keeps every row, gains the new fields with the values
 * a user expects (valid since creation, a superseded row closed at its supersede time) and searches as before.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { noopStoreObserver } from '@engram/contracts';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase } from './native.js';
import { META_TABLE_SQL, MIGRATIONS, SCHEMA_VERSION } from './schema.js';
import { StoreContext } from './sqlite/context.js';
import { createSqliteMemoryStore, type SqliteMemoryStore } from './sqlite-store.js';

let dir: string;
const open: SqliteMemoryStore[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'engram-v6-'));
});

afterEach(() => {
  for (const s of open.splice(0)) s.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Writes a version-4 file: migrations 1–2, rows as version 2 wrote them, then the version 3 and 4 steps. */
function writeVersion4(path: string): void {
  const db = openDatabase(path, { loadVectorExtension: false });
  const ctx = new StoreContext({
    db,
    observer: noopStoreObserver,
    now: () => 1_700_000_000_000,
    idFactory: () => 'unused',
    limits: { maxContentLength: 65_536 },
    vectorKey: path,
    encrypted: false,
    access: 'write',
    busyTimeoutMs: 5000,
  });
  try {
    db.exec(META_TABLE_SQL);
    for (const m of MIGRATIONS) if (m.version <= 2) m.up(db, ctx);
    const insert = db.prepare(
      `INSERT INTO memories(id, agent_id, kind, content, content_hash, importance, confidence, session_id,
         created_at, updated_at, lifecycle, superseded_by)
       VALUES (?, 'a', 'fact', ?, ?, 0.5, 1, ?, ?, ?, ?, ?)`,
    );
    insert.run('old', 'the deploy runs on port 8080', 'h1', 's1', 1000, 5000, 'superseded', 'new');
    insert.run('new', 'the deploy runs on port 9090', 'h2', 's1', 5000, 5000, 'active', null);
    insert.run('other', 'lunch is at noon', 'h3', null, 2000, 2000, 'active', null);
    db.prepare(
      'INSERT INTO memories_fts_words(rowid, agent, content) SELECT rid, ?, content FROM memories',
    ).run('token-a');
    for (const m of MIGRATIONS) if (m.version === 3 || m.version === 4) m.up(db, ctx);
    const meta = db.prepare('INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)');
    meta.run('schema_version', '4');
    meta.run('created_at', '1700000000000');
    meta.run('embedding_fingerprint', 'none');
  } finally {
    db.close();
  }
}

describe('schema v4 → v6', () => {
  it('carries a version-4 file forward with scopes, metadata and validity filled in', async () => {
    const path = join(dir, 'v4.db');
    writeVersion4(path);
    const store = createSqliteMemoryStore({ path, embedding: null, now: () => 9000 });
    open.push(store);
    expect(store.info.schemaVersion).toBe(SCHEMA_VERSION);
    const old = await store.getMemory('a', 'old');
    expect(old).toMatchObject({
      content: 'the deploy runs on port 8080',
      lifecycle: 'superseded',
      supersededBy: 'new',
      validFrom: 1000,
      validTo: 5000,
      userId: null,
      metadata: {},
      forgottenAt: null,
    });
    expect(await store.getMemory('a', 'new')).toMatchObject({ validFrom: 5000, validTo: null });
    // Search sees the current fact, and the old one as of a time it held.
    const current = await store.searchLexical({ agentId: 'a', terms: ['deploy'], limit: 10 });
    expect(current.hits.map((h) => h.id)).toEqual(['new']);
    const before = await store.searchLexical({
      agentId: 'a',
      terms: ['deploy'],
      limit: 10,
      time: { asOf: 3000 },
    });
    expect(before.hits.map((h) => h.id)).toEqual(['old']);
    // The history of the migrated chain follows the supersede link.
    expect((await store.history('a', 'new')).chain).toEqual(['old', 'new']);
    // New rows carry the new fields.
    const added = await store.insertMemory({
      agentId: 'a',
      kind: 'fact',
      content: 'the deploy needs approval',
      userId: 'u1',
      metadata: { team: 'infra', priority: 2 },
    });
    expect(added).toMatchObject({ userId: 'u1', metadata: { priority: 2, team: 'infra' }, validFrom: 9000 });
    const scoped = await store.searchLexical({
      agentId: 'a',
      terms: ['deploy'],
      limit: 10,
      filter: { userId: 'u1', metadata: [{ key: 'priority', op: 'range', gte: 2 }] },
    });
    expect(scoped.hits.map((h) => h.id)).toEqual([added.id]);
  });

  it('reopens a migrated file without migrating again', async () => {
    const path = join(dir, 'v4b.db');
    writeVersion4(path);
    createSqliteMemoryStore({ path, embedding: null }).close();
    const store = createSqliteMemoryStore({ path, embedding: null });
    open.push(store);
    expect(store.info.schemaVersion).toBe(SCHEMA_VERSION);
    expect((await store.listMemories('a')).map((m) => m.id)).toEqual(['new', 'old', 'other']);
  });
});
