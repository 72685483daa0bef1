import type { StatementKind } from '@engram/store';
import { afterEach, describe, expect, it } from 'vitest';
import { createEmbeddingDrain } from './drain.js';
import { createEventIngestor } from './ingest.js';
import { openTempStore, type TempStore } from './test-support/native.js';

let open: TempStore[] = [];
afterEach(async () => {
  for (const t of open) await t.close();
  open = [];
});

/** Drains N pending rows and counts the store statements the drain itself issued, per kind. */
async function measureDrain(n: number, batchSize: number) {
  const counts: Record<StatementKind, number> = { read: 0, write: 0, fts: 0, vector: 0, like: 0, meta: 0 };
  let counting = false;
  const t = await openTempStore({
    observer: {
      onStatement: (kind) => {
        if (counting) counts[kind] += 1;
      },
    },
  });
  open.push(t);
  await t.store.insertMemories(
    Array.from({ length: n }, (_, i) => ({
      agentId: 'a',
      kind: 'semantic' as const,
      content: `row ${i} on cache deploys`,
    })),
  );
  let batches = 0;
  const drain = createEmbeddingDrain({
    store: t.store,
    embedder: t.embedder,
    batchSize,
    maxBatchesPerRun: 10_000,
    observer: { onDrainBatch: () => (batches += 1) },
  });
  counting = true;
  const result = await drain.run({ agentId: 'a' });
  counting = false;
  const total = Object.values(counts).reduce((a, b) => a + b, 0);
  return { result, batches, counts, total };
}

describe('drain statement and batch counts', () => {
  it('takes ceil(N / batch) batches', async () => {
    for (const [n, batch] of [
      [1, 64],
      [64, 64],
      [65, 64],
      [1000, 64],
      [1000, 100],
    ] as const) {
      const { result, batches } = await measureDrain(n, batch);
      expect([n, batch, batches, result.rows]).toEqual([n, batch, Math.ceil(n / batch), n]);
    }
  });

  it('issues a constant number of statements per full batch, independent of N', async () => {
    const batch = 64;
    const runs = [
      await measureDrain(256, batch),
      await measureDrain(512, batch),
      await measureDrain(1024, batch),
    ];
    const [a, b, c] = runs;
    if (a === undefined || b === undefined || c === undefined) throw new Error('missing run');
    expect(runs.map((r) => r.batches)).toEqual([4, 8, 16]);
    // Total = statements per batch × batches + a constant per run (the final empty listing, the backlog count).
    const perBatch = (b.total - a.total) / (b.batches - a.batches);
    expect((c.total - b.total) / (c.batches - b.batches)).toBe(perBatch);
    const perRun = a.total - perBatch * a.batches;
    expect(runs.map((r) => r.total - perBatch * r.batches)).toEqual([perRun, perRun, perRun]);
    expect(perRun).toBeLessThanOrEqual(5);
    // Within a batch: one listing, one transaction, and a bounded number of statements per row. The fifth
    // constant is the store's `PRAGMA data_version` read that checks, once per write transaction that writes a
    // vector, that the file's vector index setting is still the store's (another connection may have reset it).
    expect(perBatch).toBeLessThanOrEqual(5 + 4 * batch);
    expect((c.counts.write + c.counts.vector) / c.result.rows).toBeLessThanOrEqual(3);
    // The drain never touches the lexical indexes.
    expect(c.counts.fts + c.counts.like).toBe(0);
  });
});

describe('ingestion statement counts', () => {
  it('issues a bounded number of statements per ingested event, independent of N', async () => {
    const measure = async (n: number) => {
      let statements = 0;
      let counting = false;
      const t = await openTempStore({
        observer: {
          onStatement: () => {
            if (counting) statements += 1;
          },
        },
      });
      open.push(t);
      await t.store.appendEvents(
        'a',
        's',
        Array.from({ length: n }, (_, i) => ({
          seq: i + 1,
          type: 'message' as const,
          role: 'user',
          content: `event ${i}`,
        })),
      );
      const ingestor = createEventIngestor({ store: t.store, batchSize: 100 });
      counting = true;
      const result = await ingestor.ingest('a', 's');
      counting = false;
      return { statements, result };
    };
    const small = await measure(200);
    const large = await measure(800);
    expect(small.result.batches).toBe(2);
    expect(large.result.batches).toBe(8);
    const perEvent = (m: typeof small) => m.statements / m.result.events;
    expect(Math.abs(perEvent(small) - perEvent(large))).toBeLessThan(0.05);
  });
});
