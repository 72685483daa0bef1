// The extended port on PostgreSQL beyond the conformance suite (which holds the exact-duplicate rule, filters,
// validity and asOf, history, forgetting, delete-all, contradiction links and merges): export and import in the
// shared format (a SQLite store's export: @engram/store-sqlite's cross-store test), the migration of a schema-1 database, and a failed integrity check.
import type { ExportRecord } from '@engram/store';
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
const v = (...xs: number[]): Float32Array => {
  const a = Float32Array.from(xs);
  const n = Math.hypot(...a);
  return a.map((y) => y / n);
};

async function collect(it: AsyncIterable<ExportRecord>): Promise<ExportRecord[]> {
  const out: ExportRecord[] = [];
  for await (const r of it) out.push(r);
  return out;
}

it('exports and re-imports in the shared format (idempotently)', async () => {
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
});

it('imports a long stream in batches with the outcome of every record, as one record at a time would', async () => {
  const s = await fresh({ embedding: { id: 't', dimensions: 3 } });
  const n = 1_200;
  await s.insertMemories(
    Array.from({ length: n }, (_, i) => ({
      agentId: 'a',
      kind: 'fact' as const,
      content: `imported fact ${i}`,
      vector: v(1, i, 1),
    })),
  );
  await s.appendEvents('a', 's', [{ seq: 1, type: 'message', role: 'user', content: 'hello' }]);
  const exported = await collect(s.exportRecords({ vectors: true }));
  const memories = exported.filter((r) => r.type === 'memory');
  const event = exported.find((r) => r.type === 'event');
  const first = memories[0];
  if (first?.type !== 'memory' || event === undefined) throw new Error('the export lacks a record');
  const end = exported.at(-1);
  if (end?.type !== 'end') throw new Error('the export lacks its end record');
  // Within the first batch: the same record again (unchanged), the same id with another value and the same text
  // under a new id (both conflicts); an event between the memories.
  const stream: ExportRecord[] = [
    exported[0] as ExportRecord,
    ...memories.slice(0, 10),
    first,
    { ...first, row: { ...first.row, importance: 0.25 } },
    { ...first, row: { ...first.row, id: 'copy-of-first' } },
    event,
    ...memories.slice(10),
    ...exported.filter(
      (r) => r.type !== 'memory' && r.type !== 'event' && r.type !== 'header' && r.type !== 'end',
    ),
    { type: 'end', counts: { ...end.counts, memories: n + 3 } },
  ];
  const t = await fresh({ embedding: { id: 't', dimensions: 3 } });
  expect(await t.importRecords(stream)).toMatchObject({
    imported: { memories: n, events: 1 },
    unchanged: { memories: 1 },
    conflicts: { memories: 2 },
    vectorsImported: n,
  });
  const hit = (await t.searchLexical({ agentId: 'a', terms: ['700'], limit: 5 })).hits;
  expect(hit).toHaveLength(1);
  expect(await t.getMemory('a', hit[0]?.id ?? '')).toMatchObject({
    content: 'imported fact 700',
    embeddingState: 'ready',
  });
  expect(await t.getMemory('a', 'copy-of-first')).toBeNull();
  // Again: every stored record is unchanged, the two conflicts stay conflicts.
  expect(await t.importRecords(stream)).toMatchObject({
    imported: { memories: 0, events: 0 },
    unchanged: { memories: n + 1, events: 1 },
    conflicts: { memories: 2 },
  });
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
  expect(s.info.schemaVersion).toBe(11);
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
