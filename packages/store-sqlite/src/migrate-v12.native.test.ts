/**
 * Schema v11 → v12 (one content-hash index entry per row): a file made by schema 11 opens with the same answers
 * to the lookup by content hash, its two old hash indexes replaced by the unique index of the rows the
 * exact-duplicate rule covers and the prefix index of the others; every row is in exactly one of them, the rule
 * still holds (insert, content update, reactivation, a raw write), and every statement on content hashes reads
 * one of the two indexes, never the whole table.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { contentHash } from '@engram/contracts';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase } from './native.js';
import { ACTIVE_CONTENT_INDEX_SQL, HASH_PREFIX_INDEX_SQL, SCHEMA_VERSION } from './schema.js';
import type { StoreContext } from './sqlite/context.js';
import { setLifecycle } from './sqlite/lifecycle.js';
import { openStoreContext } from './sqlite/open.js';
import { FIND_BY_CONTENT_HASH_SQL, findByContentHash } from './sqlite/read.js';
import { insertMemories, insertUniqueMemory, updateMemory } from './sqlite/write.js';
import { createSqliteMemoryStore, type SqliteMemoryStore } from './sqlite-store.js';

let dir: string;
const open: SqliteMemoryStore[] = [];
let ctx: StoreContext | undefined;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'engram-v12-'));
});

afterEach(() => {
  for (const s of open.splice(0)) s.close();
  ctx?.close();
  ctx = undefined;
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

const PNPM = 'The build uses pnpm';
const CI = 'Tests run in CI';
const TEXTS = [PNPM, CI, 'absent'];

/** Every lookup by hash a caller can make here: both agents, every text, without a kind and with each kind used. */
async function hashLookups(store: SqliteMemoryStore): Promise<string> {
  const out: unknown[] = [];
  for (const text of TEXTS) {
    for (const agent of ['a', 'b']) {
      for (const kind of [undefined, 'fact', 'semantic', 'event'] as const) {
        const rows = await store.findByContentHash(agent, contentHash(text), kind);
        out.push(rows.map((r) => [r.id, r.kind, r.lifecycle]));
      }
    }
  }
  return JSON.stringify(out);
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

/** A file with the same text under every lifecycle, as a fact, a semantic memory, two events and another agent. */
async function writeRows(store: SqliteMemoryStore): Promise<void> {
  let t = 1_000;
  const at = (): number => {
    t += 1;
    return t;
  };
  await store.insertMemories([
    { id: 'f-archived', agentId: 'a', kind: 'fact', content: PNPM, createdAt: at() },
    { id: 'e1', agentId: 'a', kind: 'event', content: PNPM, createdAt: at() },
    { id: 'e2', agentId: 'a', kind: 'event', content: PNPM, createdAt: at() },
    { id: 's1', agentId: 'a', kind: 'semantic', content: PNPM, createdAt: at() },
    { id: 'b1', agentId: 'b', kind: 'fact', content: PNPM, createdAt: at() },
    { id: 'ci', agentId: 'a', kind: 'fact', content: CI, createdAt: at() },
  ]);
  await store.archiveMemory('a', 'f-archived');
  await store.insertMemory({ id: 'f-old', agentId: 'a', kind: 'fact', content: PNPM, createdAt: at() });
  await store.supersedeMemory('a', 'f-old', 1, {
    id: 'f-new',
    agentId: 'a',
    kind: 'fact',
    content: 'The build uses pnpm 10',
    createdAt: at(),
  });
  await store.insertMemory({ id: 'f-active', agentId: 'a', kind: 'fact', content: PNPM, createdAt: at() });
}

describe('schema v11 → v12', () => {
  it('carries a version-11 file forward: the same lookups, one hash index entry per row, the rule kept', async () => {
    const path = join(dir, 'v11.db');
    const first = openStore(path);
    await writeRows(first);
    const before = await hashLookups(first);
    // The text is stored active, archived and superseded as a fact, as a semantic memory, twice as an event.
    expect(JSON.parse(before)[0]).toEqual([
      ['f-archived', 'fact', 'archived'],
      ['e1', 'event', 'active'],
      ['e2', 'event', 'active'],
      ['s1', 'semantic', 'active'],
      ['f-old', 'fact', 'superseded'],
      ['f-active', 'fact', 'active'],
    ]);
    // Each kind finds its own rows only, in every lifecycle (the two indexes each answer part of a lookup); the
    // other agent's copy is its own.
    expect(JSON.parse(before).slice(1, 8)).toEqual([
      [
        ['f-archived', 'fact', 'archived'],
        ['f-old', 'fact', 'superseded'],
        ['f-active', 'fact', 'active'],
      ],
      [['s1', 'semantic', 'active']],
      [
        ['e1', 'event', 'active'],
        ['e2', 'event', 'active'],
      ],
      [['b1', 'fact', 'active']],
      [['b1', 'fact', 'active']],
      [],
      [],
    ]);
    closeAll();
    // Turn the file back into what version 11 wrote: the rule's index keyed (agent, kind, hash) and the lookup's
    // prefix index over every row.
    const raw = openDatabase(path, { loadVectorExtension: false });
    try {
      raw.exec(`DROP INDEX memories_active_hash; DROP INDEX memories_other_hash_prefix;
        ${ACTIVE_CONTENT_INDEX_SQL}; ${HASH_PREFIX_INDEX_SQL}`);
      raw.prepare("UPDATE meta SET value = '11' WHERE key = 'schema_version'").run();
    } finally {
      raw.close();
    }
    expect(indexes(path)).toEqual(
      expect.arrayContaining(['memories_active_content', 'memories_agent_hash_prefix']),
    );

    expect(SCHEMA_VERSION).toBeGreaterThanOrEqual(12);
    const store = openStore(path);
    expect(store.info.schemaVersion).toBe(SCHEMA_VERSION);
    const names = indexes(path);
    expect(names).not.toContain('memories_active_content');
    expect(names).not.toContain('memories_agent_hash_prefix');
    expect(names).toEqual(expect.arrayContaining(['memories_active_hash', 'memories_other_hash_prefix']));
    expect(await hashLookups(store)).toBe(before);

    // The rule holds: a duplicate insert gives the active row back and stores nothing; a content update onto an
    // active text and a reactivation of the archived copy are refused; a second event and another kind are not
    // duplicates.
    expect(
      await store.insertUniqueMemory({ agentId: 'a', kind: 'fact', content: 'the build uses  PNPM' }),
    ).toMatchObject({ created: false, record: { id: 'f-active' } });
    await expect(store.updateMemory('a', 'ci', 1, { content: PNPM })).rejects.toMatchObject({
      code: 'ENGRAM_STORE_CONFLICT',
    });
    const archived = await store.getMemory('a', 'f-archived');
    await expect(
      store.setLifecycle('a', 'f-archived', archived?.revision ?? 0, 'active'),
    ).rejects.toMatchObject({ code: 'ENGRAM_STORE_CONFLICT' });
    expect(await store.insertUniqueMemory({ agentId: 'a', kind: 'event', content: PNPM })).toMatchObject({
      created: true,
    });
    expect(await store.insertUniqueMemory({ agentId: 'a', kind: 'episodic', content: PNPM })).toMatchObject({
      created: true,
    });
    closeAll();

    const db = openDatabase(path, { loadVectorExtension: false });
    try {
      const count = (sql: string): number => (db.prepare(sql).get() as { n: number }).n;
      const all = count('SELECT count(*) AS n FROM memories');
      const active = count(
        "SELECT count(*) AS n FROM memories INDEXED BY memories_active_hash WHERE lifecycle = 'active' AND kind <> 'event'",
      );
      const other = count(
        "SELECT count(*) AS n FROM memories INDEXED BY memories_other_hash_prefix WHERE NOT (lifecycle = 'active' AND kind <> 'event')",
      );
      // 6 active non-event rows (f-active, f-new, s1, b1, ci, the episodic one) and 5 others (3 events, the
      // archived and the superseded fact).
      expect([all, active, other]).toEqual([11, 6, 5]);
      // A raw write cannot break the rule either: the schema refuses a second active fact with the text.
      expect(() => db.prepare("UPDATE memories SET lifecycle = 'active' WHERE id = 'f-old'").run()).toThrow(
        /UNIQUE/,
      );
    } finally {
      db.close();
    }
  });
});

describe("schema v11 → v12 on a file without the rule's index", () => {
  it('resolves the duplicates such a file holds (as version 5 did) and opens it, nothing deleted', async () => {
    const path = join(dir, 'damaged.db');
    const first = openStore(path);
    await first.insertMemories([
      { id: 'one', agentId: 'a', kind: 'fact', content: PNPM, createdAt: 1_000 },
      { id: 'two', agentId: 'a', kind: 'fact', content: CI, createdAt: 2_000 },
    ]);
    closeAll();
    // A version-11 file whose rule index was lost, then a second active copy of the text written around it.
    const raw = openDatabase(path, { loadVectorExtension: false });
    try {
      raw.exec(
        `DROP INDEX memories_active_hash; DROP INDEX memories_other_hash_prefix; ${HASH_PREFIX_INDEX_SQL}`,
      );
      raw
        .prepare("UPDATE memories SET content = ?, content_hash = ? WHERE id = 'two'")
        .run(PNPM, contentHash(PNPM));
      raw.prepare("UPDATE meta SET value = '11' WHERE key = 'schema_version'").run();
    } finally {
      raw.close();
    }

    const store = openStore(path);
    expect(store.info.schemaVersion).toBe(SCHEMA_VERSION);
    const rows = await store.findByContentHash('a', contentHash(PNPM), 'fact');
    // The earliest copy stays active; the later one is superseded by it, with its lineage.
    expect(rows.map((r) => [r.id, r.lifecycle, r.supersededBy])).toEqual([
      ['one', 'active', null],
      ['two', 'superseded', 'one'],
    ]);
    expect(indexes(path)).toEqual(
      expect.arrayContaining(['memories_active_hash', 'memories_other_hash_prefix']),
    );
  });
});

/** Runs `fn` and returns the SQL of the statements it prepared. */
async function preparedBy(c: StoreContext, fn: () => Promise<unknown>): Promise<string[]> {
  const before = new Set(c.statements.keys());
  await fn();
  return [...c.statements.keys()].filter((sql) => !before.has(sql));
}

describe('the statements on content hashes read an index', () => {
  it('the lookup and the duplicate checks seek the v12 indexes, never scan the table', async () => {
    const c = openStoreContext({ path: ':memory:', embedding: null });
    ctx = c;
    const hash = contentHash(PNPM);
    const statements = [
      ...(await preparedBy(c, () =>
        insertMemories(c, [
          { id: 'f1', agentId: 'a', kind: 'fact', content: PNPM },
          { id: 'e1', agentId: 'a', kind: 'event', content: PNPM },
          { id: 'f2', agentId: 'a', kind: 'fact', content: CI },
        ]),
      )),
      ...(await preparedBy(c, async () => {
        expect((await insertUniqueMemory(c, { agentId: 'a', kind: 'fact', content: PNPM })).created).toBe(
          false,
        );
      })),
      ...(await preparedBy(c, async () => {
        expect((await findByContentHash(c, 'a', hash)).map((r) => r.id)).toEqual(['e1', 'f1']);
        expect((await findByContentHash(c, 'a', hash, 'event')).map((r) => r.id)).toEqual(['e1']);
      })),
      ...(await preparedBy(c, async () => {
        await expect(updateMemory(c, 'a', 'f2', 1, { content: PNPM })).rejects.toMatchObject({
          code: 'ENGRAM_STORE_CONFLICT',
        });
        await setLifecycle(c, 'a', 'f1', 1, 'archived');
        expect((await setLifecycle(c, 'a', 'f1', 2, 'active')).lifecycle).toBe('active');
      })),
    ];
    expect(statements).toContain(FIND_BY_CONTENT_HASH_SQL);
    const onHash = statements.filter((sql) => sql.includes('content_hash') && /^\s*SELECT/i.test(sql));
    expect(onHash.length).toBeGreaterThanOrEqual(2);
    const db = c.db;
    for (const sql of onHash) {
      const named = [...new Set([...sql.matchAll(/@(\w+)/g)].map((m) => m[1] as string))];
      const positional = sql.match(/\?/g)?.length ?? 0;
      const stmt = db.prepare(`EXPLAIN QUERY PLAN ${sql}`);
      const plan = (
        (named.length > 0
          ? stmt.all(Object.fromEntries(named.map((n) => [n, 'x'])))
          : stmt.all(...Array.from({ length: positional }, () => 'x'))) as { detail: string }[]
      ).map((r) => r.detail);
      expect(plan.filter((d) => /SCAN memories/.test(d))).toEqual([]);
      expect(plan.join(' | ')).toMatch(
        /SEARCH memories USING INDEX memories_(active_hash|other_hash_prefix)/,
      );
    }
    const findPlan = (
      db.prepare(`EXPLAIN QUERY PLAN ${FIND_BY_CONTENT_HASH_SQL}`).all({ agent: 'a', hash, kind: null }) as {
        detail: string;
      }[]
    ).map((r) => r.detail);
    expect(findPlan).toEqual(
      expect.arrayContaining([
        'SEARCH memories USING INDEX memories_active_hash (agent_id=? AND content_hash=?)',
        'SEARCH memories USING INDEX memories_other_hash_prefix (agent_id=? AND <expr>=?)',
      ]),
    );
  });
});
