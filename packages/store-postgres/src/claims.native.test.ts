// Claims (`claimLeaseMs`) seen through the store port alone: several stores on one database are several
// workers. Each lists (claims) rows no other live claim holds; a claim whose lease ran out is taken over, and
// its old holder's late commit is `stale`. (Worker processes running the maintenance drain on this store are
// tested in @engram/maintenance.)
import { setTimeout as sleep } from 'node:timers/promises';
import type { EmbeddingOutcome, PendingEmbedding } from '@engram/store';
import pg from 'pg';
import { expect, it } from 'vitest';
import { MIGRATIONS } from './schema.js';
import { createPostgresMemoryStore } from './store.js';
import { freshPostgresStore, resetTestDatabase, testPgUrl } from './testing/fresh.js';

const PROFILE = { id: 'claims-test', dimensions: 4 };

function ready(rows: readonly PendingEmbedding[]): EmbeddingOutcome[] {
  return rows.map((r) => ({
    id: r.id,
    revision: r.revision,
    state: 'ready' as const,
    vector: new Float32Array([0.5, 0.5, 0.5, 0.5]),
  }));
}

it('workers claim disjoint rows, and a claim whose lease ran out is taken over: its late commit is stale', async () => {
  const a = await freshPostgresStore({ embedding: PROFILE, claimLeaseMs: 600_000 });
  const open = (claimLeaseMs: number) =>
    createPostgresMemoryStore({
      connectionString: testPgUrl(),
      poolSize: 2,
      embedding: PROFILE,
      claimLeaseMs,
    });
  const b = await open(600_000);
  const short = await open(100);
  try {
    const rows = await a.insertMemories(
      Array.from({ length: 15 }, (_, i) => ({
        agentId: 'agent',
        kind: 'fact' as const,
        content: `fact ${i}`,
      })),
    );
    const ids = (list: readonly PendingEmbedding[]) => list.map((r) => r.id);
    const byA = await a.listPendingEmbeddings({ limit: 5 });
    const byB = await b.listPendingEmbeddings({ limit: 5 });
    const byShort = await short.listPendingEmbeddings({ limit: 5 });
    // Three workers, fifteen rows: each took five, none taken twice, in insertion order.
    expect([...ids(byA), ...ids(byB), ...ids(byShort)]).toEqual(rows.map((r) => r.id));
    // A live claim is skipped: B, asking for every row, gets its own back first and none of A's.
    const again = ids(await b.listPendingEmbeddings({ limit: 15 }));
    expect(again.slice(0, 5)).toEqual(ids(byB));
    expect(again.filter((id) => ids(byA).includes(id))).toEqual([]);
    // Once the short lease has run out, B takes those rows over (A's long claim still holds).
    let taken: readonly PendingEmbedding[] = [];
    while (taken.length < 10) {
      await sleep(50);
      taken = await b.listPendingEmbeddings({ limit: 15 });
    }
    expect(ids(taken).sort()).toEqual([...ids(byB), ...ids(byShort)].sort());
    // The old holder's late commit changes nothing; the new holder's and A's commits settle every row.
    expect(await short.commitEmbeddings(ready(byShort))).toEqual({
      ready: 0,
      error: 0,
      ftsOnly: 0,
      stale: 5,
    });
    expect(await b.commitEmbeddings(ready(taken))).toEqual({ ready: 10, error: 0, ftsOnly: 0, stale: 0 });
    expect(await a.commitEmbeddings(ready(byA))).toEqual({ ready: 5, error: 0, ftsOnly: 0, stale: 0 });
    expect((await a.countEmbeddingBacklog()).total).toBe(0);
    for (const r of rows) expect((await a.getMemory(r.agentId, r.id))?.embeddingState).toBe('ready');
  } finally {
    await Promise.all([a.close(), b.close(), short.close()]);
  }
});

it('a schema-2 database gets the maintenance lease table; one worker holds an agent, the other waits its turn', async () => {
  await resetTestDatabase();
  const client = new pg.Client({ connectionString: testPgUrl() });
  await client.connect();
  try {
    await client.query('CREATE TABLE engram_meta (key text PRIMARY KEY, value text NOT NULL)');
    await client.query(MIGRATIONS[0]?.sql ?? '');
    await client.query(MIGRATIONS[1]?.sql ?? '');
    await client.query(
      "INSERT INTO engram_meta VALUES ('schema_version', '2'), ('embedding_fingerprint', 'none')",
    );
  } finally {
    await client.end();
  }
  const a = await createPostgresMemoryStore({ connectionString: testPgUrl(), poolSize: 2 });
  const b = await createPostgresMemoryStore({ connectionString: testPgUrl(), poolSize: 2 });
  try {
    expect(a.info.schemaVersion).toBe(11);
    const first = await a.claimMaintenance('agent', { leaseMs: 100 });
    expect(first.claimed).toBe(true);
    expect(await b.claimMaintenance('agent', { leaseMs: 60_000 })).toEqual({ claimed: false });
    // Another agent is free; the same owner extends its own lease.
    expect((await b.claimMaintenance('other', { leaseMs: 60_000 })).claimed).toBe(true);
    expect((await a.claimMaintenance('agent', { leaseMs: 100 })).claimed).toBe(true);
    // The deadline is on the server clock: once the short lease ran out, B takes the agent over.
    let taken = await b.claimMaintenance('agent', { leaseMs: 60_000 });
    while (!taken.claimed) {
      await sleep(50);
      taken = await b.claimMaintenance('agent', { leaseMs: 60_000 });
    }
    expect(await a.claimMaintenance('agent', { leaseMs: 60_000 })).toEqual({ claimed: false });
    // A release by a non-holder changes nothing; the holder's release frees the agent at once.
    await a.releaseMaintenance('agent');
    expect((await a.claimMaintenance('agent', { leaseMs: 60_000 })).claimed).toBe(false);
    await b.releaseMaintenance('agent');
    expect((await a.claimMaintenance('agent', { leaseMs: 60_000 })).claimed).toBe(true);
  } finally {
    await Promise.all([a.close(), b.close()]);
  }
});
