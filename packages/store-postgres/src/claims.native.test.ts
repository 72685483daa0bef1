// Claims (`claimLeaseMs`) seen through the store port alone: several stores on one database are several
// workers. Each lists (claims) rows no other live claim holds; a claim whose lease ran out is taken over, and
// its old holder's late commit is `stale`. (Worker processes running the maintenance drain on this store are
// tested in @engram/maintenance.)
import { setTimeout as sleep } from 'node:timers/promises';
import type { EmbeddingOutcome, PendingEmbedding } from '@engram/store';
import { expect, it } from 'vitest';
import { createPostgresMemoryStore } from './store.js';
import { freshPostgresStore, testPgUrl } from './testing/fresh.js';

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
