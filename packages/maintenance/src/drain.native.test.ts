import type { DrainBatchReport } from '@engram/contracts';
import type { NewMemory } from '@engram/store';
import { afterEach, describe, expect, it } from 'vitest';
import { createEmbeddingDrain } from './drain.js';
import { EngramMaintenanceError } from './errors.js';
import { createProviderGateway } from './gateway.js';
import type { EmbedderPort } from './ports.js';
import { createFakeTime, flush } from './test-support/fake-time.js';
import { openTempStore, type TempStore } from './test-support/native.js';

let open: TempStore[] = [];
afterEach(async () => {
  for (const t of open) await t.close();
  open = [];
});
async function temp(options?: Parameters<typeof openTempStore>[0]): Promise<TempStore> {
  const t = await openTempStore(options);
  open.push(t);
  return t;
}

function rows(agentId: string, n: number, prefix = 'memory'): NewMemory[] {
  return Array.from({ length: n }, (_, i) => ({
    agentId,
    kind: 'semantic' as const,
    content: `${prefix} ${i} about deploy pipelines and cache keys`,
  }));
}

describe('embedding drain over a real store', () => {
  it('drains a thousand pending rows to ready in ceil(N / batch) bounded batches', async () => {
    const { store, embedder } = await temp();
    await store.insertMemories(rows('a', 1000));
    const batches: DrainBatchReport[] = [];
    const backlog: { total: number; activeAgents: number }[] = [];
    const progress: [number, number][] = [];
    const drain = createEmbeddingDrain({
      store,
      embedder,
      batchSize: 64,
      maxBatchesPerRun: 100,
      observer: { onDrainBatch: (r) => batches.push(r), onEmbeddingBacklog: (g) => backlog.push(g) },
      onProgress: (done, total) => progress.push([done, total]),
    });
    expect((await store.countEmbeddingBacklog()).total).toBe(1000);
    const result = await drain.run({ agentId: 'a' });
    expect(result).toMatchObject({
      outcome: 'completed',
      skipped: null,
      batches: Math.ceil(1000 / 64),
      rows: 1000,
    });
    expect(result.transitions).toEqual({ ready: 1000, error: 0, ftsOnly: 0, stale: 0 });
    expect(result.backlog).toBe(0);
    expect(batches).toHaveLength(16);
    expect(batches.every((b) => b.batchSize <= 64 && b.agentId === 'a')).toBe(true);
    expect(batches.reduce((n, b) => n + b.transitions.ready, 0)).toBe(1000);
    expect(backlog.at(-1)).toEqual({ total: 0, activeAgents: 0 });
    expect(progress[0]).toEqual([0, 1000]);
    expect(progress.at(-1)).toEqual([1000, 1000]);
    const health = await store.health('a');
    expect(health.ok && health.health.byEmbeddingState).toEqual({
      pending: 0,
      ready: 1000,
      error: 0,
      ftsOnly: 0,
    });
  });

  it('embeds every chunk of a long memory exactly once; the memory is ready and found by its chunk', async () => {
    const { store, embedder } = await temp();
    const paragraph = (i: number): string =>
      `Session ${i}: the team reviewed the release checklist, the flaky integration tests and the on-call rota. ` +
      'Everyone agreed to keep the deploy window short and to write down what broke. '.repeat(4);
    const long = Array.from({ length: 14 }, (_, i) =>
      i === 9 ? `${paragraph(i)} The lighthouse keeper's kayak needs new paddles.` : paragraph(i),
    ).join('\n\n');
    await store.insertMemories([
      { id: 'long', agentId: 'a', kind: 'semantic', content: long },
      ...rows('a', 5),
    ]);
    const embedded: string[] = [];
    const recording: EmbedderPort = {
      profile: embedder.profile,
      embed: async (texts, options) => {
        embedded.push(...texts);
        return embedder.embed(texts, options);
      },
    };
    const drain = createEmbeddingDrain({ store, embedder: recording, batchSize: 4, maxBatchesPerRun: 100 });
    const result = await drain.run({ agentId: 'a' });
    expect(result.outcome).toBe('completed');
    expect(result.backlog).toBe(0);
    const chunkTexts = embedded.filter((t) => t.length > 100);
    // Each chunk once: as many distinct texts as embedded, together covering the memory.
    expect(chunkTexts.length).toBeGreaterThan(5);
    expect(new Set(chunkTexts).size).toBe(chunkTexts.length);
    expect(chunkTexts.every((t) => t.length <= 1000 && long.includes(t))).toBe(true);
    expect(embedded).toHaveLength(chunkTexts.length + 5);
    expect(await store.getMemory('a', 'long')).toMatchObject({ embeddingState: 'ready' });
    const kayak = chunkTexts.find((t) => t.includes('kayak')) ?? '';
    const [query] = await embedder.embed([kayak]);
    const hits = await store.searchVector({ agentId: 'a', vector: query as Float32Array, k: 3 });
    expect(hits[0]?.id).toBe('long');
    expect(long.slice(hits[0]?.chunk?.start, hits[0]?.chunk?.end)).toContain('kayak');
    // A second run has nothing left to embed.
    expect(await drain.run({ agentId: 'a' })).toMatchObject({ rows: 0 });
  });

  it('stops at the batch bound and leaves the rest for the next run', async () => {
    const { store, embedder } = await temp();
    await store.insertMemories(rows('a', 300));
    await store.insertMemories(rows('b', 10));
    const drain = createEmbeddingDrain({ store, embedder, batchSize: 50, maxBatchesPerRun: 4 });
    const first = await drain.run({ agentId: 'a' });
    expect(first).toMatchObject({ batches: 4, rows: 200, backlog: 100 });
    const all = await drain.run({ maxBatches: 10 });
    expect(all).toMatchObject({ outcome: 'completed', batches: 3, rows: 110, backlog: 0 });
  });

  it('never attaches a stale vector to a row edited while it was being embedded', async () => {
    const { store, embedder } = await temp();
    const [target] = await store.insertMemories([
      { agentId: 'a', kind: 'semantic', content: 'the staging cache uses redis' },
      { agentId: 'a', kind: 'semantic', content: 'deploys happen on fridays' },
    ]);
    if (target === undefined) throw new Error('insert failed');
    let edited = false;
    const editing: EmbedderPort = {
      profile: embedder.profile,
      async embed(texts, options) {
        const vectors = await embedder.embed(texts, options);
        if (!edited) {
          edited = true;
          // The edit lands after the vectors were computed and before the drain commits them.
          await store.updateMemory('a', target.id, target.revision, {
            content: 'the staging cache uses memcached',
          });
        }
        return vectors;
      },
    };
    const drain = createEmbeddingDrain({ store, embedder: editing });
    const first = await drain.run({ agentId: 'a', maxBatches: 1 });
    expect(first.transitions).toEqual({ ready: 1, error: 0, ftsOnly: 0, stale: 1 });
    const afterFirst = await store.getMemory('a', target.id);
    expect(afterFirst).toMatchObject({ embeddingState: 'pending', revision: 2, embeddingFingerprint: null });
    // No vector of the old text is attached to the row.
    const [oldVector] = await embedder.embed(['the staging cache uses redis']);
    if (oldVector === undefined) throw new Error('embed failed');
    const hits = await store.searchVector({ agentId: 'a', vector: oldVector, k: 10 });
    expect(hits.map((h) => h.id)).not.toContain(target.id);
    const second = await drain.run({ agentId: 'a' });
    expect(second.transitions).toEqual({ ready: 1, error: 0, ftsOnly: 0, stale: 0 });
    const [newVector] = await embedder.embed(['the staging cache uses memcached']);
    if (newVector === undefined) throw new Error('embed failed');
    const [best] = await store.searchVector({ agentId: 'a', vector: newVector, k: 1 });
    expect(best?.id).toBe(target.id);
    expect(best?.similarity).toBeGreaterThan(0.999);
  });

  it('moves malformed vectors and failed calls to error, retried by later runs up to the bound', async () => {
    const { store, embedder } = await temp();
    const inserted = await store.insertMemories([
      { agentId: 'a', kind: 'semantic', content: 'good row one' },
      { agentId: 'a', kind: 'semantic', content: 'NAN row' },
      { agentId: 'a', kind: 'semantic', content: 'SHORT row' },
      { agentId: 'a', kind: 'semantic', content: '!!! ???' },
    ]);
    let broken = true;
    const flaky: EmbedderPort = {
      profile: embedder.profile,
      async embed(texts, options) {
        const vectors = await embedder.embed(texts, options);
        if (!broken) return vectors;
        return vectors.map((v, i) => {
          if (texts[i]?.startsWith('NAN')) return new Float32Array(128).fill(Number.NaN);
          if (texts[i]?.startsWith('SHORT')) return new Float32Array(3).fill(0.5);
          return v;
        });
      },
    };
    const drain = createEmbeddingDrain({ store, embedder: flaky, maxAttempts: 2 });
    const first = await drain.run({ agentId: 'a' });
    // The all-zero vector of a featureless text is lexical-only, not an error.
    expect(first.transitions).toEqual({ ready: 1, error: 2, ftsOnly: 1, stale: 0 });
    expect(first.outcome).toBe('completed');
    const nan = await store.getMemory('a', inserted[1]?.id ?? '');
    expect(nan).toMatchObject({ embeddingState: 'error', embeddingAttempts: 1 });
    // Each failed row keeps why: an unusable vector is the drain's own code.
    expect((await store.listFailedEmbeddings('a')).map((f) => f.errorCode)).toEqual([
      'ENGRAM_EMBEDDING_MALFORMED_VECTOR',
      'ENGRAM_EMBEDDING_MALFORMED_VECTOR',
    ]);
    // Still broken: retried once more (attempt 2), then no longer.
    const second = await drain.run({ agentId: 'a' });
    expect(second.transitions).toEqual({ ready: 0, error: 2, ftsOnly: 0, stale: 0 });
    broken = false;
    const third = await drain.run({ agentId: 'a' });
    expect(third).toMatchObject({ batches: 0, rows: 0 });
    expect(await store.getMemory('a', inserted[2]?.id ?? '')).toMatchObject({
      embeddingState: 'error',
      embeddingAttempts: 2,
    });
  });

  it('retries rows whose embed call failed on a later run, where they become ready', async () => {
    const { store, embedder } = await temp();
    await store.insertMemories(rows('a', 5));
    let fail = true;
    const failing: EmbedderPort = {
      profile: embedder.profile,
      async embed(texts, options) {
        if (fail) throw new Error('provider down');
        return embedder.embed(texts, options);
      },
    };
    const drain = createEmbeddingDrain({ store, embedder: failing });
    const first = await drain.run({ agentId: 'a' });
    // Failed once; not retried within the same run.
    expect(first).toMatchObject({ outcome: 'completed', batches: 1, transitions: { error: 5, ready: 0 } });
    // An untyped failure keeps no code (never its message): the rows read `unknown`.
    expect(new Set((await store.listFailedEmbeddings('a')).map((f) => f.errorCode))).toEqual(
      new Set(['unknown']),
    );
    fail = false;
    const second = await drain.run({ agentId: 'a' });
    expect(second).toMatchObject({ batches: 1, transitions: { ready: 5, error: 0 } });
  });

  it('reports an all-agents run per real agent, stale rows under the agent that edited them', async () => {
    const { store, embedder } = await temp();
    await store.insertMemories(rows('a', 3));
    const [edited] = await store.insertMemories(rows('b', 2));
    if (edited === undefined) throw new Error('missing row');
    let calls = 0;
    const editing: EmbedderPort = {
      profile: embedder.profile,
      async embed(texts, options) {
        calls += 1;
        // Agent b edits a row while the first batch is being embedded: that row is stale, and it is b's.
        if (calls === 1)
          await store.updateMemory('b', edited.id, edited.revision, { content: 'edited text' });
        return embedder.embed(texts, options);
      },
    };
    const reports: DrainBatchReport[] = [];
    const drain = createEmbeddingDrain({
      store,
      embedder: editing,
      batchSize: 10,
      observer: { onDrainBatch: (r) => reports.push(r) },
    });
    const result = await drain.run();
    expect(result).toMatchObject({
      outcome: 'completed',
      rows: 6,
      transitions: { ready: 5, error: 0, ftsOnly: 0, stale: 1 },
      backlog: 0,
    });
    // The first batch held both agents: one report each, never a placeholder id.
    expect(new Set(reports.map((r) => r.agentId))).toEqual(new Set(['a', 'b']));
    const first = reports.slice(0, 2).map((r) => [r.agentId, r.batchSize, r.transitions]);
    expect(first.sort()).toEqual([
      ['a', 3, { ready: 3, error: 0, ftsOnly: 0, stale: 0 }],
      ['b', 2, { ready: 1, error: 0, ftsOnly: 0, stale: 1 }],
    ]);
    // The edited row came back in a later batch of b alone.
    expect(reports.slice(2).map((r) => [r.agentId, r.batchSize, r.transitions.ready])).toEqual([['b', 1, 1]]);
    const sum = (key: keyof DrainBatchReport['transitions']) =>
      reports.reduce((n, r) => n + r.transitions[key], 0);
    expect([sum('ready'), sum('error'), sum('ftsOnly'), sum('stale')]).toEqual([5, 0, 0, 1]);
    expect(reports.reduce((n, r) => n + r.batchSize, 0)).toBe(result.rows);
    expect(result.batches).toBe(2);
  });

  it('marks rows ftsOnly without an embedder', async () => {
    const { store } = await temp({ withProfile: false });
    await store.insertMemories(rows('a', 7));
    const drain = createEmbeddingDrain({ store });
    const result = await drain.run();
    expect(result).toMatchObject({ outcome: 'completed', transitions: { ftsOnly: 7, ready: 0 }, backlog: 0 });
  });

  it('runs one drain per agent at a time: a concurrent run returns busy at once', async () => {
    const { store, embedder } = await temp();
    await store.insertMemories(rows('a', 3));
    await store.insertMemories(rows('b', 3));
    let release: () => void = () => undefined;
    const blocked = new Promise<void>((r) => {
      release = r;
    });
    const slow: EmbedderPort = {
      profile: embedder.profile,
      async embed(texts, options) {
        await blocked;
        return embedder.embed(texts, options);
      },
    };
    const drain = createEmbeddingDrain({ store, embedder: slow });
    const running = drain.run({ agentId: 'a' });
    expect(await drain.run({ agentId: 'a' })).toMatchObject({
      outcome: 'skipped',
      skipped: 'busy',
      batches: 0,
    });
    expect(await drain.run()).toMatchObject({ skipped: 'busy' });
    const other = drain.run({ agentId: 'b' });
    release();
    expect(await running).toMatchObject({ outcome: 'completed', rows: 3 });
    expect(await other).toMatchObject({ outcome: 'completed', rows: 3 });
  });

  it('defers on a local rejection and cancels on abort, leaving rows pending', async () => {
    const { store, embedder } = await temp();
    await store.insertMemories(rows('a', 4));
    const limited: EmbedderPort = {
      profile: embedder.profile,
      embed: () => Promise.reject(new EngramMaintenanceError('ENGRAM_MAINTENANCE_RATE_LIMITED', 'limited')),
    };
    const deferred = await createEmbeddingDrain({ store, embedder: limited }).run({ agentId: 'a' });
    expect(deferred).toMatchObject({ outcome: 'deferred', batches: 0, backlog: 4 });
    const controller = new AbortController();
    const aborting: EmbedderPort = {
      profile: embedder.profile,
      async embed(texts) {
        controller.abort();
        return embedder.embed(texts);
      },
    };
    const cancelled = await createEmbeddingDrain({ store, embedder: aborting }).run({
      agentId: 'a',
      signal: controller.signal,
    });
    expect(cancelled).toMatchObject({ outcome: 'cancelled', batches: 0, backlog: 4 });
  });

  it('through the real gateway: a queued deadline or a rate limit defers, only a provider failure costs an attempt', async () => {
    const { store, embedder } = await temp();
    const [row] = await store.insertMemories(rows('a', 2));
    if (row === undefined) throw new Error('insert failed');
    const time = createFakeTime();
    let hang = true;
    const slow: EmbedderPort = {
      profile: embedder.profile,
      embed: (texts, options) =>
        hang ? new Promise<Float32Array[]>(() => undefined) : embedder.embed(texts, options),
    };
    const gateway = createProviderGateway({
      embedder: slow,
      limits: { global: 1, perKey: 1, maxQueue: 4 },
      rateLimit: { tokensPerInterval: 3, intervalMs: 60_000 },
      deadlineMs: 1000,
      clock: time.clock,
      timers: time.timers,
    });
    // Another caller holds the only slot, so the drain's request waits in the queue until its deadline.
    const blocker = gateway
      .embedderFor('other')
      ?.embed(['x'])
      .catch(() => 'rejected');
    const reports: DrainBatchReport[] = [];
    const drain = createEmbeddingDrain({
      store,
      embedder: gateway.embedderFor('drain'),
      clock: time.clock,
      observer: { onDrainBatch: (r) => reports.push(r) },
    });
    const queued = drain.run({ agentId: 'a' });
    await flush();
    expect(gateway.stats().queued.embedding).toBe(1);
    time.advance(1000);
    expect(await queued).toMatchObject({ outcome: 'deferred', batches: 0, backlog: 2 });
    expect(await blocker).toBe('rejected');
    expect(await store.getMemory('a', row.id)).toMatchObject({
      embeddingState: 'pending',
      embeddingAttempts: 0,
    });
    // Only the blocker, which the provider held past the deadline, is a provider failure.
    expect(gateway.stats().failures.embedding).toBe(1);

    // A running request that times out is a provider failure: the rows cost one attempt (`error`).
    const timedOut = drain.run({ agentId: 'a' });
    await flush();
    time.advance(1000);
    expect(await timedOut).toMatchObject({ outcome: 'completed', transitions: { error: 2 } });
    expect(await store.getMemory('a', row.id)).toMatchObject({
      embeddingState: 'error',
      embeddingAttempts: 1,
    });
    // The provider's typed code is kept with each failed row.
    const failed = await store.listFailedEmbeddings('a');
    expect(failed.map((f) => [f.errorCode, f.attempts])).toHaveLength(2);
    expect(new Set(failed.map((f) => f.errorCode)).size).toBe(1);
    expect(failed[0]?.errorCode).toMatch(/^ENGRAM_[A-Z_]+$/);
    expect(gateway.stats().failures.embedding).toBe(2);
    // The batch report carries its size, its duration on the injected clock and the real transitions.
    expect(reports).toEqual([
      {
        agentId: 'a',
        batchSize: 2,
        durationMs: 1000,
        transitions: { ready: 0, error: 2, ftsOnly: 0, stale: 0 },
      },
    ]);

    // Three admissions spent the bucket: the next run is rate limited and defers, rows untouched.
    hang = false;
    expect(await drain.run({ agentId: 'a' })).toMatchObject({ outcome: 'deferred', batches: 0 });
    expect(await store.getMemory('a', row.id)).toMatchObject({
      embeddingState: 'error',
      embeddingAttempts: 1,
    });
    expect(gateway.stats().decisions.embedding).toEqual({ admitted: 3, rateLimited: 1, capacityRejected: 0 });
    expect(gateway.stats().failures.embedding).toBe(2);
    time.advance(60_000);
    expect(await drain.run({ agentId: 'a' })).toMatchObject({
      outcome: 'completed',
      transitions: { ready: 2 },
    });
  });

  it('refuses an embedder whose profile differs from the store', async () => {
    const { store } = await temp();
    const other: EmbedderPort = { profile: { id: 'other', dimensions: 128 }, embed: async () => [] };
    expect(() => createEmbeddingDrain({ store, embedder: other })).toThrow(
      expect.objectContaining({ code: 'ENGRAM_MAINTENANCE_PROFILE_MISMATCH' }),
    );
  });
});
