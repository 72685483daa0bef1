/**
 * Schema v11 → v12 (the content-hash lookup keyed by the hash's first 4 bytes as a blob instead of the agent and
 * the hash's first 16 hex digits as text): a file made by schema 11 opens with the new index built from its rows and the old one
 * gone, `findByContentHash` answers exactly as before through an index seek, and two hashes sharing the key
 * are told apart by the full hash.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase } from './native.js';
import { SCHEMA_VERSION } from './schema.js';
import { FIND_BY_CONTENT_HASH_SQL } from './sqlite/read.js';
import { createSqliteMemoryStore, type SqliteMemoryStore } from './sqlite-store.js';
import type { MemoryKind } from './types.js';

let dir: string;
const open: SqliteMemoryStore[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'engram-v12-'));
});

afterEach(() => {
  for (const s of open.splice(0)) s.close();
  rmSync(dir, { recursive: true, force: true });
});

function openStore(path: string): SqliteMemoryStore {
  const store = createSqliteMemoryStore({ path, embedding: null });
  open.push(store);
  return store;
}

function closeAll(): void {
  for (const s of open.splice(0)) s.close();
}

/** Two contents whose hashes share their first 8 hex digits (`0adf80f7`), found by a birthday search. */
const SAME_KEY = ['collision probe 14565', 'collision probe 24048'] as const;

const KINDS: readonly MemoryKind[] = ['fact', 'event', 'semantic'];

/** Every row's lookup by its own hash (all kinds and by its kind), plus a miss, as one comparable string. */
async function lookups(store: SqliteMemoryStore, hashes: readonly [string, string][]): Promise<string> {
  const out: unknown[] = [];
  for (const [agentId, hash] of hashes) {
    out.push((await store.findByContentHash(agentId, hash)).map((r) => [r.id, r.kind, r.lifecycle]));
    for (const kind of KINDS) {
      out.push((await store.findByContentHash(agentId, hash, kind)).map((r) => r.id));
    }
  }
  out.push(await store.findByContentHash('a', 'f'.repeat(64)));
  out.push(await store.findByContentHash('a', 'not hex at all'));
  return JSON.stringify(out);
}

function schema(path: string): { indexes: string[]; version: string; plan: string } {
  const db = openDatabase(path, { loadVectorExtension: false });
  try {
    const indexes = (
      db
        .prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND name LIKE 'memories_%hash_%'")
        .all() as { name: string }[]
    ).map((r) => r.name);
    const version = (
      db.prepare("SELECT value FROM meta WHERE key = 'schema_version'").get() as { value: string }
    ).value;
    const plan = (
      db
        .prepare(`EXPLAIN QUERY PLAN ${FIND_BY_CONTENT_HASH_SQL}`)
        .all({ agent: 'a', hash: 'ab', kind: null }) as {
        detail: string;
      }[]
    )
      .map((r) => r.detail)
      .join('; ');
    return { indexes, version, plan };
  } finally {
    db.close();
  }
}

describe('schema v11 → v12', () => {
  it('carries a version-11 file forward: the compact key index built, the old one dropped, the same lookups', async () => {
    const path = join(dir, 'v11.db');
    const first = openStore(path);
    await first.insertMemories(
      Array.from({ length: 60 }, (_, i) => ({
        id: `m${i}`,
        agentId: i % 3 === 0 ? 'b' : 'a',
        kind: KINDS[i % 3] as MemoryKind,
        content: `note ${i % 40} about the walrus`,
      })),
    );
    await first.insertMemory({ id: 'x1', agentId: 'a', kind: 'fact', content: SAME_KEY[0] });
    await first.insertMemory({ id: 'x2', agentId: 'a', kind: 'fact', content: SAME_KEY[1] });
    await first.archiveMemory('a', 'm1');
    const all = await first.listMemories('a', { limit: 200 });
    const allB = await first.listMemories('b', { limit: 200 });
    const hashes: [string, string][] = [
      ...all.map((r): [string, string] => ['a', r.contentHash]),
      ...allB.map((r): [string, string] => ['b', r.contentHash]),
    ];
    expect(hashes.length).toBe(62);
    const before = await lookups(first, hashes);
    closeAll();
    // Turn the file into what version 11 wrote: the lookup keyed by the hash's first 16 digits as text.
    const raw = openDatabase(path, { loadVectorExtension: false });
    try {
      raw.exec(`DROP INDEX memories_hash_key;
        CREATE INDEX memories_agent_hash_prefix ON memories(agent_id, substr(content_hash, 1, 16));`);
      raw.prepare("UPDATE meta SET value = '11' WHERE key = 'schema_version'").run();
    } finally {
      raw.close();
    }
    expect(schema(path)).toMatchObject({ indexes: ['memories_agent_hash_prefix'], version: '11' });

    expect(SCHEMA_VERSION).toBe(12);
    const store = openStore(path);
    expect(store.info.schemaVersion).toBe(12);
    expect(await lookups(store, hashes)).toBe(before);
    closeAll();
    const after = schema(path);
    expect(after.indexes).toEqual(['memories_hash_key']);
    expect(after.version).toBe('12');
    // An index seek on the key, not a scan of the agent's rows.
    expect(after.plan).toContain('USING INDEX memories_hash_key (<expr>=?)');
  });

  it('tells apart two hashes that share the key, and keeps a new file on the compact index', async () => {
    const path = join(dir, 'new.db');
    const store = openStore(path);
    const [one, two] = await store.insertMemories(
      SAME_KEY.map((content, i) => ({ id: `k${i}`, agentId: 'a', kind: 'fact' as const, content })),
    );
    expect(one?.contentHash.slice(0, 8)).toBe(two?.contentHash.slice(0, 8));
    expect(one?.contentHash).not.toBe(two?.contentHash);
    expect((await store.findByContentHash('a', one?.contentHash ?? '')).map((r) => r.id)).toEqual(['k0']);
    expect((await store.findByContentHash('a', two?.contentHash ?? '')).map((r) => r.id)).toEqual(['k1']);
    expect(await store.findByContentHash('b', one?.contentHash ?? '')).toEqual([]);
    closeAll();
    expect(schema(path).indexes).toEqual(['memories_hash_key']);
  });
});
