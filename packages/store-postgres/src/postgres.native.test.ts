// Store-specific behaviour of the PostgreSQL store: migrations under the advisory lock, the embedder binding,
// time-ordered default ids, halfvec above 2,000 dimensions, filtered k-NN that never starves, compare-and-set and idempotency under
// concurrent writers, errors when the server is unreachable, and the documented differences from SQLite (the one
// that needs a SQLite store to show it is in @engram/store-sqlite's cross-store test).
import pg from 'pg';
import { afterEach, expect, it } from 'vitest';
import { createPostgresMemoryStore, type PostgresMemoryStore } from './store.js';
import { freshPostgresStore, resetTestDatabase, testPgUrl } from './testing/fresh.js';

const opened: PostgresMemoryStore[] = [];
async function open(config: Parameters<typeof createPostgresMemoryStore>[0]): Promise<PostgresMemoryStore> {
  const store = await createPostgresMemoryStore(config);
  opened.push(store);
  return store;
}
afterEach(async () => {
  for (const s of opened.splice(0)) await s.close();
});

async function sql<T>(text: string, params: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: testPgUrl() });
  await client.connect();
  try {
    return (await client.query(text, params)).rows as T[];
  } finally {
    await client.end();
  }
}

function unit(dims: number, seed: number): Float32Array {
  const v = new Float32Array(dims);
  let x = seed * 7919 + 1;
  for (let i = 0; i < dims; i += 1) {
    x = (x * 48271) % 2147483647;
    v[i] = x / 2147483647 - 0.5;
  }
  const n = Math.hypot(...v);
  return v.map((y) => y / n);
}

it('concurrent opens migrate once under the advisory lock and agree on the schema', async () => {
  await resetTestDatabase();
  const url = testPgUrl();
  const stores = await Promise.all(
    [0, 1, 2, 3].map(() =>
      open({ connectionString: url, poolSize: 2, embedding: { id: 'm', dimensions: 4 } }),
    ),
  );
  expect(stores.map((s) => s.info.schemaVersion)).toEqual([11, 11, 11, 11]);
  const versions = await sql<{ value: string }>("SELECT value FROM engram_meta WHERE key = 'schema_version'");
  expect(versions).toEqual([{ value: '11' }]);
});

it('a newer schema is refused, another embedder is a mismatch, an omitted one is adopted', async () => {
  const first = await freshPostgresStore({ embedding: { id: 'e1', dimensions: 4 } });
  opened.push(first);
  const url = testPgUrl();
  await expect(open({ connectionString: url, embedding: { id: 'e2', dimensions: 4 } })).rejects.toMatchObject(
    {
      code: 'ENGRAM_STORE_FINGERPRINT_MISMATCH',
    },
  );
  const adopted = await open({ connectionString: url });
  expect(adopted.embeddingProfile).toEqual({ id: 'e1', dimensions: 4 });
  await sql("UPDATE engram_meta SET value = '99' WHERE key = 'schema_version'");
  await expect(open({ connectionString: url })).rejects.toMatchObject({
    code: 'ENGRAM_STORE_SCHEMA_TOO_NEW',
  });
});

it('makes time-ordered ids (UUID version 7) when the caller gives none, as the SQLite store does', async () => {
  const store = await freshPostgresStore({ embedding: null });
  opened.push(store);
  const made: string[] = [];
  for (let b = 0; b < 3; b += 1) {
    const rows = await store.insertMemories(
      Array.from({ length: 50 }, (_, i) => ({
        agentId: 'a',
        kind: 'semantic' as const,
        content: `note ${b} ${i}`,
      })),
    );
    made.push(...rows.map((r) => r.id));
  }
  expect(
    made.filter((id) => !/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(id)),
  ).toEqual([]);
  expect([...made].sort()).toEqual(made);
  expect(new Set(made).size).toBe(150);
});

it('stores halfvec above 2,000 dimensions and still finds the nearest row', async () => {
  const store = await freshPostgresStore({ embedding: { id: 'big', dimensions: 2048 } });
  opened.push(store);
  const a = await store.insertMemory({ agentId: 'a', kind: 'fact', content: 'one', vector: unit(2048, 1) });
  await store.insertMemory({ agentId: 'a', kind: 'fact', content: 'two', vector: unit(2048, 2) });
  const type = await sql<{ t: string }>(
    "SELECT format_type(atttypid, atttypmod) AS t FROM pg_attribute WHERE attrelid = 'memory_vectors'::regclass AND attname = 'embedding'",
  );
  expect(type).toEqual([{ t: 'halfvec(2048)' }]);
  const hits = await store.searchVector({ agentId: 'a', vector: unit(2048, 1), k: 1 });
  expect(hits.map((h) => h.id)).toEqual([a.id]);
  expect(hits[0]?.similarity ?? 0).toBeGreaterThan(0.999);
});

it('a small agent among many is never starved by the HNSW filter, and the index recall is measured', async () => {
  const store = await freshPostgresStore({ embedding: { id: 'r', dimensions: 16 } });
  opened.push(store);
  const big = Array.from({ length: 1500 }, (_, i) => ({
    agentId: 'big',
    kind: 'fact' as const,
    content: `row ${i}`,
    vector: unit(16, i),
  }));
  for (let i = 0; i < big.length; i += 250) await store.insertMemories(big.slice(i, i + 250));
  const small = await store.insertMemories(
    Array.from({ length: 12 }, (_, i) => ({
      agentId: 'small',
      kind: 'fact' as const,
      content: `mine ${i}`,
      vector: unit(16, 5000 + i),
    })),
  );
  const mine = await store.searchVector({ agentId: 'small', vector: unit(16, 3), k: 12 });
  expect(new Set(mine.map((h) => h.id))).toEqual(new Set(small.map((r) => r.id)));
  // Recall@10 of the approximate index against an exact scan, over 20 queries of the big agent.
  const exact = await open({ connectionString: testPgUrl(), vectorSearch: { exact: true } });
  let found = 0;
  for (let q = 0; q < 20; q += 1) {
    const query = { agentId: 'big', vector: unit(16, 10_000 + q), k: 10 };
    const approx = new Set((await store.searchVector(query)).map((h) => h.id));
    for (const h of await exact.searchVector(query)) if (approx.has(h.id)) found += 1;
  }
  expect(found / 200).toBeGreaterThanOrEqual(0.9);
});

it('a user among many of a large agent is never starved by the HNSW filter; the scoped answer is exact', async () => {
  const store = await freshPostgresStore({ embedding: { id: 'r', dimensions: 16 } });
  opened.push(store);
  // 1,500 memories of one agent over 100 other users, 5 of the agent's own and 12 of one user: the user scope
  // (`forUser`: the agent's own and the user's) passes 17 of 1,517 vectors, which the k-NN's filter must not starve.
  const others = Array.from({ length: 1500 }, (_, i) => ({
    agentId: 'big',
    kind: 'fact' as const,
    content: `row ${i}`,
    userId: `other-${i % 100}`,
    vector: unit(16, i),
  }));
  for (let i = 0; i < others.length; i += 250) await store.insertMemories(others.slice(i, i + 250));
  const own = await store.insertMemories(
    Array.from({ length: 5 }, (_, i) => ({
      agentId: 'big',
      kind: 'fact' as const,
      content: `own ${i}`,
      vector: unit(16, 7000 + i),
    })),
  );
  const mine = await store.insertMemories(
    Array.from({ length: 12 }, (_, i) => ({
      agentId: 'big',
      kind: 'fact' as const,
      content: `mine ${i}`,
      userId: 'carol',
      vector: unit(16, 8000 + i),
    })),
  );
  const query = unit(16, 3);
  const forCarol = await store.searchVector({
    agentId: 'big',
    vector: query,
    k: 20,
    filter: { forUser: 'carol' },
  });
  expect(new Set(forCarol.map((h) => h.id))).toEqual(new Set([...own, ...mine].map((r) => r.id)));
  const carolOnly = await store.searchVector({
    agentId: 'big',
    vector: query,
    k: 20,
    filter: { userId: 'carol' },
  });
  expect(new Set(carolOnly.map((h) => h.id))).toEqual(new Set(mine.map((r) => r.id)));
  // The nearest of the scope in order, as the exact scan ranks them.
  const exact = await open({ connectionString: testPgUrl(), vectorSearch: { exact: true } });
  const scoped = { agentId: 'big', vector: query, k: 8, filter: { forUser: 'carol' } };
  expect((await store.searchVector(scoped)).map((h) => h.id)).toEqual(
    (await exact.searchVector(scoped)).map((h) => h.id),
  );
});

it('two writers holding one revision: exactly one compare-and-set wins', async () => {
  const a = await freshPostgresStore({ embedding: null });
  opened.push(a);
  const b = await open({ connectionString: testPgUrl() });
  const m = await a.insertMemory({ agentId: 'x', kind: 'fact', content: 'shared row' });
  const results = await Promise.allSettled([
    a.updateMemory('x', m.id, 1, { content: 'writer a' }),
    b.updateMemory('x', m.id, 1, { content: 'writer b' }),
  ]);
  expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
  expect(
    results.filter((r) => r.status === 'rejected').map((r) => (r.reason as { code: string }).code),
  ).toEqual(['ENGRAM_STORE_REVISION_CONFLICT']);
  expect((await a.getMemory('x', m.id))?.revision).toBe(2);
  const ev = (content: string) => [{ seq: 1, type: 'message' as const, role: 'user', content }];
  const appends = await Promise.allSettled([
    a.appendEvents('x', 's', ev('one')),
    b.appendEvents('x', 's', ev('two')),
  ]);
  expect(appends.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
  expect(await a.readEvents('x', 's', 1, 1)).toHaveLength(1);
});

it('an unreachable server is an I/O error at open; a URL of another database is invalid input', async () => {
  await expect(
    createPostgresMemoryStore({ connectionString: 'postgres://postgres@127.0.0.1:1/none' }),
  ).rejects.toMatchObject({ code: 'ENGRAM_STORE_IO' });
  await expect(createPostgresMemoryStore({ connectionString: 'mysql://x' })).rejects.toMatchObject({
    code: 'ENGRAM_STORE_INVALID_INPUT',
  });
  // The SQLite store's quantised vector index is refused here, not silently ignored.
  await expect(
    createPostgresMemoryStore({
      connectionString: 'postgres://postgres@127.0.0.1:1/none',
      vectorIndex: { quantization: 'bit' },
    } as Parameters<typeof createPostgresMemoryStore>[0]),
  ).rejects.toMatchObject({ code: 'ENGRAM_STORE_INVALID_INPUT' });
});

it('refreshes the planner statistics after a bulk insert (servers without autovacuum plan for empty tables)', async () => {
  const reltuples = async (): Promise<number> =>
    Number(
      (await sql<{ n: number }>("SELECT reltuples AS n FROM pg_class WHERE relname = 'memories'"))[0]?.n,
    );
  const off = await freshPostgresStore({ embedding: null, analyzeAfterRows: null });
  opened.push(off);
  await off.insertMemories(
    [1, 2, 3].map((i) => ({ agentId: 'a', kind: 'fact' as const, content: `row ${i}` })),
  );
  expect(await reltuples()).toBe(-1);
  const on = await open({ connectionString: testPgUrl(), analyzeAfterRows: 5 });
  await on.insertMemories([4, 5].map((i) => ({ agentId: 'a', kind: 'fact' as const, content: `row ${i}` })));
  expect(await reltuples()).toBe(-1);
  await on.insertMemories(
    [6, 7, 8].map((i) => ({ agentId: 'a', kind: 'fact' as const, content: `row ${i}` })),
  );
  expect(await reltuples()).toBe(8);
});

it('documented differences: no orphan vectors (cascades), no vector-store gauge, jsonb key order', async () => {
  const gauges: unknown[] = [];
  const store = await freshPostgresStore({
    embedding: { id: 'd', dimensions: 3 },
    observer: { onVectorStores: (g) => gauges.push(g) },
  });
  opened.push(store);
  const kept = await store.insertMemory({
    agentId: 'a',
    kind: 'fact',
    content: 'kept row',
    metadata: { aa: 1, b: 2 },
    vector: new Float32Array([1, 0, 0]),
  });
  const gone = await store.insertMemory({
    agentId: 'a',
    kind: 'fact',
    content: 'deleted behind the store',
    vector: new Float32Array([0, 1, 0]),
  });
  // A row deleted by hand takes its vector with it (ON DELETE CASCADE): nothing is left to prune.
  await sql('DELETE FROM memories WHERE id = $1', [gone.id]);
  expect(Number((await sql<{ n: string }>('SELECT count(*) AS n FROM memory_vectors'))[0]?.n)).toBe(1);
  expect(await store.pruneOrphanedVectors()).toEqual({ pruned: 0 });
  // What is left to prune: the vector of a row that is no longer `ready`.
  await sql("UPDATE memories SET embedding_state = 'error' WHERE id = $1", [kept.id]);
  expect(await store.pruneOrphanedVectors('a')).toEqual({ pruned: 1 });
  await store.close();
  expect(gauges).toEqual([]);
  // jsonb orders keys shorter first (SQLite returns them sorted by name): the values are the same.
  const reread = await open({ connectionString: testPgUrl() });
  const meta = (await reread.getMemory('a', kept.id))?.metadata ?? {};
  expect(Object.keys(meta)).toEqual(['b', 'aa']);
  expect(meta).toEqual({ aa: 1, b: 2 });
});

it('a large batch writes every row with its vector once; duplicates in it and of stored rows resolve; a taken id fails it whole', async () => {
  const store = await freshPostgresStore({ embedding: { id: 'd', dimensions: 3 } });
  opened.push(store);
  const stored = await store.insertMemory({ agentId: 'a', kind: 'fact', content: 'stored fact 7' });
  const batch = Array.from({ length: 600 }, (_, i) => ({
    agentId: 'a',
    kind: 'fact' as const,
    // Every tenth text repeats the one before it; text 7 is already stored.
    content: `stored fact ${i % 10 === 9 ? i - 1 : i}`,
    vector: unit(3, i),
  }));
  const records = await store.insertMemories(batch);
  expect(records).toHaveLength(600);
  expect(records[7]).toEqual(stored);
  expect(records[9]).toEqual(records[8]);
  expect(new Set(records.map((r) => r.id)).size).toBe(600 - 60);
  const count = async (table: string): Promise<number> =>
    Number((await sql<{ n: string }>(`SELECT count(*) AS n FROM ${table}`))[0]?.n);
  expect(await count('memories')).toBe(600 - 60);
  // The stored row had no vector; every new row has its own.
  expect(await count('memory_vectors')).toBe(600 - 60 - 1);
  expect(records[8]?.embeddingState).toBe('ready');
  // A duplicate whose caller-chosen id is taken fails the whole batch, writing nothing.
  await expect(
    store.insertMemories([
      { agentId: 'a', kind: 'fact', content: 'a new fact' },
      { id: stored.id, agentId: 'a', kind: 'fact', content: 'stored fact 7' },
    ]),
  ).rejects.toMatchObject({ code: 'ENGRAM_STORE_CONFLICT' });
  expect(await count('memories')).toBe(600 - 60);
});
