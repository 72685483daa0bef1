import type { MaintenancePassReport } from '@engram/contracts';
import { createEmbeddingDrain, createMaintenanceRunner } from '@engram/maintenance';
import { openDatabase, type SqliteDatabase } from '@engram/store-sqlite/raw';
import { afterEach, describe, expect, it } from 'vitest';
import { createFakeTime, openTempStore, type TempStore } from './maintenance-support.js';

let stores: TempStore[] = [];
let raws: SqliteDatabase[] = [];
afterEach(() => {
  for (const db of raws) db.close();
  for (const t of stores) t.close();
  raws = [];
  stores = [];
});

/**
 * A second, raw connection to the store's file (better-sqlite3 with sqlite-vec loaded), used to break the
 * store the way a crash, a bug or a hand edit would: behind the store's back.
 */
function rawConnection(path: string): SqliteDatabase {
  const db = openDatabase(path);
  raws.push(db);
  return db;
}

function ridOf(db: SqliteDatabase, id: string): number {
  const row = db.prepare('SELECT rid FROM memories WHERE id = ?').get(id) as { rid: number } | undefined;
  if (row === undefined) throw new Error('row not found');
  return row.rid;
}

function count(db: SqliteDatabase, sql: string, ...params: unknown[]): number {
  return (db.prepare(sql).get(...params) as { n: number }).n;
}

const vectors = (db: SqliteDatabase, rid: number): number =>
  count(db, 'SELECT count(*) AS n FROM memories_vec WHERE rowid = ?', rid);

describe('cheap phase over a store broken behind its back', () => {
  it('resets a ready row without a vector (or with a foreign fingerprint) to pending and prunes an orphaned vector', async () => {
    const time = createFakeTime();
    const t = openTempStore({ now: time.clock.now });
    stores.push(t);
    const { store, embedder } = t;
    const [lost, orphan, foreign, intact] = await store.insertMemories([
      { agentId: 'a', kind: 'semantic', content: 'the staging cache runs on redis' },
      { agentId: 'a', kind: 'semantic', content: 'deploys are frozen during the holidays' },
      { agentId: 'a', kind: 'semantic', content: 'the build uses turbo with remote caching' },
      { agentId: 'a', kind: 'semantic', content: 'release notes live in the changelog' },
    ]);
    const [otherLost] = await store.insertMemories([
      { agentId: 'b', kind: 'semantic', content: 'the staging cache runs on redis' },
    ]);
    if (!(lost && orphan && foreign && intact && otherLost)) throw new Error('insert failed');
    const drain = createEmbeddingDrain({ store, embedder });
    expect((await drain.run()).transitions.ready).toBe(5);

    const raw = rawConnection(t.path);
    const lostRid = ridOf(raw, lost.id);
    const orphanRid = ridOf(raw, orphan.id);
    const intactRid = ridOf(raw, intact.id);
    const otherRid = ridOf(raw, otherLost.id);
    // 1. A `ready` row whose vector vanished: silently unindexed for the vector arm.
    raw.prepare('DELETE FROM memories_vec WHERE rowid = ?').run(lostRid);
    // 2. A vector whose memory row (with its tags and lexical entries) vanished: a ghost in the vector index.
    raw.prepare('DELETE FROM memory_tags WHERE rid = ?').run(orphanRid);
    raw.prepare('DELETE FROM memories_fts_words WHERE rowid = ?').run(orphanRid);
    raw.prepare('DELETE FROM memories_fts_trigram WHERE rowid = ?').run(orphanRid);
    raw.prepare('DELETE FROM lexical_postings WHERE rid = ?').run(orphanRid);
    raw.prepare('DELETE FROM lexical_postings_fresh WHERE rid = ?').run(orphanRid);
    raw.prepare('DELETE FROM lexical_docs WHERE rid = ?').run(orphanRid);
    raw.prepare('DELETE FROM memories WHERE rid = ?').run(orphanRid);
    // 3. A `ready` row stamped with another embedder's fingerprint (mixed vectors).
    raw
      .prepare("UPDATE memories SET embedding_fingerprint = 'other-embedder:128' WHERE id = ?")
      .run(foreign.id);
    // 4. The same breakage for another agent: a pass of agent `a` must not touch it.
    raw.prepare('DELETE FROM memories_vec WHERE rowid = ?').run(otherRid);

    // The breakage is real: the store still calls the row ready, but vector search cannot find it.
    expect(await store.getMemory('a', lost.id)).toMatchObject({ embeddingState: 'ready' });
    const [lostVector] = await embedder.embed([lost.content]);
    if (lostVector === undefined) throw new Error('embed failed');
    const before = await store.searchVector({ agentId: 'a', vector: lostVector, k: 10 });
    expect(before.map((h) => h.id)).not.toContain(lost.id);
    expect(vectors(raw, orphanRid)).toBe(1);

    const reports: MaintenancePassReport[] = [];
    const runner = createMaintenanceRunner({
      store,
      clock: time.clock,
      observer: { onMaintenancePass: (r) => reports.push(r) },
    });
    const { report } = await runner.run('a');
    expect(report?.cheap).toEqual({ outcome: 'completed', repaired: 2, archived: 0, pruned: 1 });
    expect(reports.map((r) => r.cheap)).toEqual([report?.cheap]);

    expect(await store.getMemory('a', lost.id)).toMatchObject({
      embeddingState: 'pending',
      embeddingFingerprint: null,
    });
    expect(await store.getMemory('a', foreign.id)).toMatchObject({
      embeddingState: 'pending',
      embeddingFingerprint: null,
    });
    expect(vectors(raw, orphanRid)).toBe(0);
    // Healthy rows keep their vector and state; the other agent is untouched.
    expect(vectors(raw, intactRid)).toBe(1);
    expect(await store.getMemory('a', intact.id)).toMatchObject({ embeddingState: 'ready' });
    expect(await store.getMemory('b', otherLost.id)).toMatchObject({ embeddingState: 'ready' });
    expect(await store.countEmbeddingBacklog()).toMatchObject({ total: 2, byAgent: { a: 2 } });

    // The drain re-embeds the repaired rows: `lost` is found by its own vector again.
    const redrained = await drain.run({ agentId: 'a' });
    expect(redrained.transitions).toEqual({ ready: 2, error: 0, ftsOnly: 0, stale: 0 });
    expect(await store.getMemory('a', lost.id)).toMatchObject({ embeddingState: 'ready' });
    expect(vectors(raw, lostRid)).toBe(1);
    const [best] = await store.searchVector({ agentId: 'a', vector: lostVector, k: 1 });
    expect(best?.id).toBe(lost.id);
    expect(best?.similarity).toBeGreaterThan(0.999);

    // A second pass finds nothing left to repair or prune; agent b's pass repairs b's row only.
    time.advance(1000);
    expect((await runner.run('a')).report?.cheap).toMatchObject({ repaired: 0, pruned: 0 });
    expect((await runner.run('b')).report?.cheap).toMatchObject({ repaired: 1, pruned: 0 });
    expect(await store.getMemory('b', otherLost.id)).toMatchObject({ embeddingState: 'pending' });
  });
});
