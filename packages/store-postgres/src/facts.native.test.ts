// The extended port on PostgreSQL, with the SQLite store's semantics (the exact-duplicate rule and scope and
// metadata filters are the conformance suite's): validity and `asOf`, history, forgetting (erase and keep), delete-all, contradiction links, merges, export/import in
// the shared format (from SQLite too) and the migration of a schema-1 database.
import { createSqliteMemoryStore, type ExportRecord } from '@engram/store';
import pg from 'pg';
import { afterEach, expect, it } from 'vitest';
import { MIGRATIONS } from './schema.js';
import { createPostgresMemoryStore, type PostgresMemoryStore } from './store.js';
import { freshPostgresStore, resetTestDatabase, testPgUrl } from './testing/fresh.js';

const opened: PostgresMemoryStore[] = [];
afterEach(async () => {
  for (const s of opened.splice(0)) await s.close();
});
async function fresh(config: Parameters<typeof freshPostgresStore>[0] = {}): Promise<PostgresMemoryStore> {
  const s = await freshPostgresStore(config);
  opened.push(s);
  return s;
}
function clock(start: number): { now: () => number; set: (t: number) => void } {
  let t = start;
  return { now: () => t, set: (v) => (t = v) };
}
const v = (...xs: number[]): Float32Array => {
  const a = Float32Array.from(xs);
  const n = Math.hypot(...a);
  return a.map((y) => y / n);
};

it('supersede closes validity: asOf sees the old fact, history keeps the chain, forget erases it with tombstones', async () => {
  const c = clock(1_000);
  const s = await fresh({ now: c.now });
  const old = await s.insertMemory({ agentId: 'a', kind: 'fact', content: 'the office is in Lyon' });
  c.set(2_000);
  const { replacement } = await s.supersedeMemory('a', old.id, 1, {
    agentId: 'a',
    kind: 'fact',
    content: 'the office is in Paris',
  });
  c.set(3_000);
  await s.updateMemory('a', replacement.id, 1, { content: 'the office is in Paris, rue Oberkampf' });
  expect((await s.getMemory('a', old.id))?.validTo).toBe(2_000);
  const then = await s.searchLexical({ agentId: 'a', terms: ['office'], limit: 5, time: { asOf: 1_500 } });
  expect(then.hits.map((h) => h.id)).toEqual([old.id]);
  const now = await s.searchLexical({ agentId: 'a', terms: ['office'], limit: 5 });
  expect(now.hits.map((h) => h.id)).toEqual([replacement.id]);
  expect((await s.revalidate('a', [{ id: old.id }], { asOf: 1_500 })).map((r) => r.id)).toEqual([old.id]);
  expect(await s.revalidate('a', [{ id: old.id }])).toEqual([]);
  const h = await s.history('a', replacement.id);
  expect(h.chain).toEqual([old.id, replacement.id]);
  expect(h.entries.map((e) => [e.memoryId === old.id ? 'old' : 'new', e.action])).toEqual([
    ['old', 'created'],
    ['new', 'created'],
    ['old', 'superseded'],
    ['new', 'updated'],
  ]);
  expect(h.entries[3]?.previousContent).toBe('the office is in Paris');
  c.set(4_000);
  const forgotten = await s.forgetMemory('a', replacement.id, { actor: 'user', reason: 'asked to' });
  expect(forgotten).toEqual({ forgotten: [old.id, replacement.id], mode: 'erase' });
  expect(await s.getMemory('a', old.id)).toBeNull();
  expect((await s.searchLexical({ agentId: 'a', terms: ['office'], limit: 5 })).hits).toEqual([]);
  const after = await s.history('a', replacement.id);
  expect(after.records).toEqual([]);
  expect(after.entries.filter((e) => e.action === 'forgotten').map((e) => e.actor)).toEqual(['user', 'user']);
  expect(after.entries.every((e) => e.previousContent === null)).toBe(true);
  await expect(s.forgetMemory('a', replacement.id)).rejects.toMatchObject({ code: 'ENGRAM_STORE_NOT_FOUND' });
});

it('forget keep archives and marks; deleteAll erases events and skills; conflicts resolve; merges supersede', async () => {
  const c = clock(10);
  const keep = await fresh({ forget: 'keep', now: c.now });
  const m = await keep.insertMemory({ agentId: 'a', kind: 'fact', content: 'keep me' });
  expect(await keep.forgetMemory('a', m.id)).toEqual({ forgotten: [m.id], mode: 'keep' });
  expect(await keep.getMemory('a', m.id)).toMatchObject({ lifecycle: 'archived', forgottenAt: 10 });
  await keep.close();
  opened.splice(0);

  const s = await fresh({ now: c.now });
  const older = await s.insertMemory({ agentId: 'a', kind: 'fact', content: 'the team has 5 people' });
  const newer = await s.insertMemory({ agentId: 'a', kind: 'fact', content: 'the team has 7 people' });
  expect(await s.linkConflict('a', older.id, newer.id, 'number')).toBe(true);
  expect(await s.linkConflict('a', older.id, newer.id, 'number')).toBe(false);
  expect(await s.listConflicts('a', { state: 'open' })).toMatchObject([{ olderId: older.id, state: 'open' }]);
  const link = await s.resolveConflict('a', older.id, newer.id, { outcome: 'supersede' });
  expect(link).toMatchObject({ state: 'resolved', resolvedAt: 10 });
  expect(await s.getMemory('a', older.id)).toMatchObject({ lifecycle: 'superseded', supersededBy: newer.id });
  await expect(s.resolveConflict('a', older.id, newer.id, { outcome: 'dismiss' })).rejects.toMatchObject({
    code: 'ENGRAM_STORE_REVISION_CONFLICT',
  });

  const x = await s.insertMemory({ agentId: 'a', kind: 'fact', content: 'uses postgres' });
  const y = await s.insertMemory({ agentId: 'a', kind: 'fact', content: 'uses pgvector' });
  const merged = await s.mergeMemories(
    'a',
    [
      { id: x.id, expectedRevision: 1 },
      { id: y.id, expectedRevision: 1 },
    ],
    { agentId: 'a', kind: 'fact', content: 'uses postgres with pgvector' },
  );
  expect(merged.superseded.map((r) => [r.lifecycle, r.supersededBy])).toEqual([
    ['superseded', merged.merged.id],
    ['superseded', merged.merged.id],
  ]);
  await expect(
    s.mergeMemories(
      'a',
      [
        { id: x.id, expectedRevision: 1 },
        { id: newer.id, expectedRevision: 1 },
      ],
      {
        agentId: 'a',
        kind: 'fact',
        content: 'never stored',
      },
    ),
  ).rejects.toMatchObject({ code: 'ENGRAM_STORE_REVISION_CONFLICT' });

  await s.appendEvents('a', 's', [{ seq: 1, type: 'message', role: 'user', content: 'hi' }]);
  await s.writeSkill({ agentId: 'a', name: 'deploy', description: 'd', content: 'steps' });
  const all = await s.deleteAll('a');
  expect(all).toEqual({ memories: 5, events: 1, skills: 1, mode: 'erase' });
  expect(await s.listMemories('a')).toEqual([]);
  expect(await s.listAgents()).toEqual([]);
});

async function collect(it: AsyncIterable<ExportRecord>): Promise<ExportRecord[]> {
  const out: ExportRecord[] = [];
  for await (const r of it) out.push(r);
  return out;
}

it('exports and re-imports in the shared format (idempotently), and imports a SQLite store export', async () => {
  const s = await fresh({ embedding: { id: 't', dimensions: 3 } });
  const a = await s.insertMemory({
    agentId: 'a',
    kind: 'fact',
    content: 'exported fact',
    tags: ['topic:x'],
    metadata: { b: 1, a: 2 },
    vector: v(0, 1, 0),
  });
  await s.appendEvents('a', 's', [{ seq: 1, type: 'message', role: 'user', content: 'hello' }]);
  await s.writeSkill({ agentId: 'a', name: 'deploy', description: 'd', content: 'steps' });
  const records = await collect(s.exportRecords({ vectors: true }));
  expect(records.at(-1)).toMatchObject({ type: 'end', counts: { memories: 1, events: 1, skills: 1 } });
  expect(await s.importRecords(records)).toMatchObject({
    imported: { memories: 0, events: 0, skills: 0 },
    unchanged: { memories: 1, events: 1, skills: 1 },
  });
  await s.close();
  opened.splice(0);
  const t = await fresh({ embedding: { id: 't', dimensions: 3 } });
  const summary = await t.importRecords(records);
  expect(summary).toMatchObject({ imported: { memories: 1, events: 1, skills: 1 }, vectorsImported: 1 });
  expect(await t.getMemory('a', a.id)).toMatchObject({ content: 'exported fact', embeddingState: 'ready' });
  expect((await t.searchVector({ agentId: 'a', vector: v(0, 1, 0), k: 1 }))[0]?.id).toBe(a.id);
  await expect(t.importRecords(records.slice(0, -1))).rejects.toMatchObject({
    code: 'ENGRAM_STORE_INVALID_INPUT',
  });

  const sqlite = createSqliteMemoryStore({ path: ':memory:', embedding: null });
  try {
    const m = await sqlite.insertMemory({
      agentId: 'b',
      kind: 'fact',
      content: 'from sqlite',
      userId: 'u',
      metadata: { k: 'v' },
    });
    const fromSqlite = await collect(sqlite.exportRecords());
    expect((await t.importRecords(fromSqlite)).imported.memories).toBe(1);
    expect(await t.getMemory('b', m.id)).toMatchObject({
      content: 'from sqlite',
      userId: 'u',
      metadata: { k: 'v' },
    });
  } finally {
    sqlite.close();
  }
});

it('migrates a schema-1 database: validity filled, earlier active duplicates superseded, then unique', async () => {
  await resetTestDatabase();
  const client = new pg.Client({ connectionString: testPgUrl() });
  await client.connect();
  try {
    await client.query('CREATE TABLE engram_meta (key text PRIMARY KEY, value text NOT NULL)');
    await client.query(MIGRATIONS[0]?.sql ?? '');
    await client.query(
      `INSERT INTO engram_meta VALUES ('schema_version', '1'), ('embedding_fingerprint', 'none');
       INSERT INTO memories(id, agent_id, kind, content, content_hash, importance, confidence, created_at, updated_at)
       VALUES ('m1', 'a', 'fact', 'same', 'h', 0.5, 1, 100, 100), ('m2', 'a', 'fact', 'same', 'h', 0.5, 1, 200, 200)`,
    );
  } finally {
    await client.end();
  }
  const s = await createPostgresMemoryStore({ connectionString: testPgUrl() });
  opened.push(s);
  expect(s.info.schemaVersion).toBe(2);
  expect(await s.getMemory('a', 'm1')).toMatchObject({ lifecycle: 'active', validFrom: 100, validTo: null });
  expect(await s.getMemory('a', 'm2')).toMatchObject({
    lifecycle: 'superseded',
    supersededBy: 'm1',
    validFrom: 200,
    metadata: {},
    userId: null,
  });
  await expect(s.setLifecycle('a', 'm2', 2, 'active')).rejects.toMatchObject({
    code: 'ENGRAM_STORE_CONFLICT',
  });
});

it('a failed integrity check is reported by health and refuses writes until a check passes', async () => {
  const s = await fresh();
  await s.insertMemory({ agentId: 'a', kind: 'fact', content: 'counted text' });
  expect(s.integrity.state).toBe('notChecked');
  expect((await s.checkIntegrity()).state).toBe('ok');
  const client = new pg.Client({ connectionString: testPgUrl() });
  await client.connect();
  try {
    await client.query('UPDATE lexical_stats SET docs = docs + 5');
    expect((await s.checkIntegrity()).state).toBe('failed');
    const h = await s.health();
    expect(h.ok && h.health.integrity?.state).toBe('failed');
    await expect(s.insertMemory({ agentId: 'a', kind: 'fact', content: 'refused' })).rejects.toMatchObject({
      code: 'ENGRAM_STORE_CORRUPT',
    });
    expect(await s.listMemories('a')).toHaveLength(1);
    await client.query('UPDATE lexical_stats SET docs = docs - 5');
  } finally {
    await client.end();
  }
  expect((await s.checkIntegrity()).state).toBe('ok');
  expect((await s.insertMemory({ agentId: 'a', kind: 'fact', content: 'accepted' })).content).toBe(
    'accepted',
  );
});
