import type { CircuitSnapshot, RetrievalExecution, Timers } from '@engram/contracts';
import { createDeterministicEmbedder } from '@engram/embedder-deterministic';
import type { MemoryKind, MemoryRecord, MemoryStore } from '@engram/store';
import type { PostgresMemoryStore } from '@engram/store-postgres';
import { describe, expect, it } from 'vitest';
import { openPgStore } from './pg-store.fixture.js';
import type { QueryEmbedder } from './ports.js';
import { createRetriever, type RetrieverConfig } from './retriever.js';

/** Cosine similarity of two vectors of the same length (the reference the explanations are checked against). */
function cosineSimilarity(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i += 1) {
    const x = a[i] ?? 0;
    const y = b[i] ?? 0;
    dot += x * y;
    na += x * x;
    nb += y * y;
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}

const embedder = createDeterministicEmbedder();

/** A real store (PostgreSQL on PGlite) bound to the deterministic embedder's profile, closed after the test. */
function openStore(): Promise<PostgresMemoryStore> {
  return openPgStore({ embedding: embedder.profile });
}

/** Inserts a row; its vector is written with it unless `vector: false` (the row then stays `pending`). */
async function add(
  store: Pick<MemoryStore, 'insertMemory'>,
  agentId: string,
  content: string,
  options: { vector?: boolean; kind?: MemoryKind; tags?: string[]; importance?: number } = {},
): Promise<MemoryRecord> {
  const [vector] = options.vector === false ? [] : await embedder.embed([content]);
  return store.insertMemory({
    agentId,
    content,
    kind: options.kind ?? 'semantic',
    ...(options.tags === undefined ? {} : { tags: options.tags }),
    ...(options.importance === undefined ? {} : { importance: options.importance }),
    ...(vector === undefined ? {} : { vector }),
  });
}

/** Timers driven by the test: nothing fires until `fire()`; `scheduled()` resolves once one is pending. */
function manualTimers() {
  let pending: { callback: () => void }[] = [];
  const delays: number[] = [];
  const waiters: (() => void)[] = [];
  const timers: Timers = {
    setTimeout(callback, ms) {
      const handle = { callback };
      pending.push(handle);
      delays.push(ms);
      for (const wake of waiters.splice(0)) wake();
      return handle;
    },
    clearTimeout(handle) {
      pending = pending.filter((h) => h !== handle);
    },
  };
  return {
    timers,
    delays,
    scheduled: (): Promise<void> =>
      pending.length > 0 ? Promise.resolve() : new Promise<void>((resolve) => waiters.push(resolve)),
    fire(): void {
      for (const handle of pending.splice(0)) handle.callback();
    },
    pending: (): number => pending.length,
  };
}

/** An embedder whose calls never settle; it records the signals it was given. */
function hangingEmbedder() {
  const signals: AbortSignal[] = [];
  const state = { calls: 0 };
  const port: QueryEmbedder = {
    profile: embedder.profile,
    embed(_texts, options) {
      state.calls += 1;
      if (options?.signal !== undefined) signals.push(options.signal);
      return new Promise<Float32Array[]>(() => {});
    },
  };
  return { port, signals, state };
}

/** Delegates to the deterministic embedder, or throws while `failing` is set; counts calls. */
function switchableEmbedder() {
  const state = { failing: true, calls: 0 };
  const port: QueryEmbedder = {
    profile: embedder.profile,
    embed(texts, options) {
      state.calls += 1;
      if (state.failing) return Promise.reject(new Error('provider down'));
      return embedder.embed(texts, options);
    },
  };
  return { port, state };
}

function recording() {
  const executions: RetrievalExecution[] = [];
  const circuit: CircuitSnapshot[] = [];
  return {
    executions,
    circuit,
    observer: {
      onRetrieval: (e: RetrievalExecution) => executions.push(e),
      onCircuitState: (s: CircuitSnapshot) => circuit.push(s),
    },
  };
}

function ids(response: { results: readonly { record: MemoryRecord }[] }): string[] {
  return response.results.map((r) => r.record.id);
}

describe('hybrid retrieval over a real store', () => {
  async function seedArms(store: PostgresMemoryStore) {
    // Pending (no vector): only the lexical arm can find it.
    const lexicalOnly = await add(store, 'a', 'Rotate the signing key with keytool-rotate every quarter', {
      vector: false,
    });
    // No query word in it, but the "outage" concept of the query's "downtime": only the vector arm can find it.
    const vectorOnly = await add(store, 'a', 'Checkout outage');
    await add(store, 'a', 'Lunch menu for the offsite');
    await add(store, 'a', 'The build uses pnpm workspaces');
    return { lexicalOnly, vectorOnly };
  }

  it('keeps a lexical-only hit and a vector-only hit through fusion, each explained', async () => {
    const store = await openStore();
    const { lexicalOnly, vectorOnly } = await seedArms(store);
    const retriever = createRetriever({ store, embedder });
    const response = await retriever.search('a', 'keytool-rotate downtime');
    expect(response.execution).toMatchObject({
      outcome: 'completed',
      degradations: [],
      arms: ['lexical', 'vector'],
    });
    const lexical = response.results.find((r) => r.record.id === lexicalOnly.id);
    const vector = response.results.find((r) => r.record.id === vectorOnly.id);
    expect(lexical?.explanation).toMatchObject({ arms: ['lexical'], lexicalRank: 1 });
    expect(lexical?.explanation.lexicalScore).toBeGreaterThan(0);
    expect(lexical?.explanation.rrf).toBeCloseTo(1 / 61, 12);
    expect(vector?.explanation).toMatchObject({ arms: ['vector'], vectorRank: 1 });
    // similarity = 1 − cosine distance, the same as the cosine of the two vectors.
    const [q, v] = await embedder.embed(['keytool-rotate downtime', vectorOnly.content]);
    expect(vector?.explanation.similarity).toBeCloseTo(
      cosineSimilarity(q as Float32Array, v as Float32Array),
      5,
    );
    expect(vector?.explanation.similarity).toBeGreaterThanOrEqual(0.2);
    expect(vector?.explanation.rrf).toBeCloseTo(1 / 61, 12);
    expect(response.execution.candidates.fts).toBe(1);
    expect(response.execution.candidates.selected).toBe(response.results.length);
    const latencies = Object.keys(response.execution.latencies).sort();
    expect(latencies).toEqual([
      'assembly',
      'authoritativeRevalidation',
      'keyword',
      'queryEmbedding',
      'total',
      'vector',
    ]);
  });

  it('runs FTS-only, vector-only and hybrid through the same pipeline', async () => {
    const store = await openStore();
    const { lexicalOnly, vectorOnly } = await seedArms(store);
    const fts = createRetriever({ store, embedder, arms: { lexical: true, vector: false } });
    const vec = createRetriever({ store, embedder, arms: { lexical: false, vector: true } });
    const ftsAnswer = await fts.search('a', 'keytool-rotate downtime');
    const vecAnswer = await vec.search('a', 'keytool-rotate downtime');
    expect(ids(ftsAnswer)).toEqual([lexicalOnly.id]);
    expect(ftsAnswer.execution.arms).toEqual(['lexical']);
    expect(ftsAnswer.execution.degradations).toEqual([]);
    expect(Object.keys(ftsAnswer.execution.latencies)).not.toContain('queryEmbedding');
    expect(ids(vecAnswer)).toContain(vectorOnly.id);
    expect(ids(vecAnswer)).not.toContain(lexicalOnly.id);
    expect(vecAnswer.execution.arms).toEqual(['vector']);
  });

  it('finds CJK text, paths and identifiers', async () => {
    const store = await openStore();
    const cjk = await add(store, 'a', '数据库备份策略是每天凌晨一次');
    const path = await add(store, 'a', 'The deploy entry point is scripts/deploy.sh');
    const ident = await add(store, 'a', 'getUserName returns the display name');
    const retriever = createRetriever({ store, embedder });
    expect(ids(await retriever.recall('a', '备份策略'))[0]).toBe(cjk.id);
    expect(ids(await retriever.recall('a', 'where is scripts/deploy.sh?'))[0]).toBe(path.id);
    expect(ids(await retriever.recall('a', 'getUserName'))[0]).toBe(ident.id);
  });

  it('never returns a deleted, superseded or archived row, even while its vector still exists', async () => {
    const store = await openStore();
    const text = 'Nightly backup of the billing database runs at 02:00';
    // One at a time: an exact duplicate of an active row is never stored twice.
    const archived = await add(store, 'a', text);
    await store.archiveMemory('a', archived.id);
    const superseded = await add(store, 'a', text);
    const { replacement } = await store.supersedeMemory('a', superseded.id, superseded.revision, {
      agentId: 'a',
      kind: 'semantic',
      content: 'Billing backups moved to a weekly schedule',
    });
    const deleted = await add(store, 'a', text);
    await store.deleteMemory('a', deleted.id);
    const active = await add(store, 'a', text);
    const [queryVector] = await embedder.embed([text]);
    const knn = await store.searchVector({ agentId: 'a', vector: queryVector as Float32Array, k: 10 });
    // The archived and superseded rows' vectors are still in the index …
    expect(knn.map((h) => h.id)).toEqual(expect.arrayContaining([active.id, archived.id, superseded.id]));
    expect(knn.map((h) => h.id)).not.toContain(deleted.id);
    // … yet no arm combination returns them.
    for (const arms of [
      { lexical: true, vector: true },
      { lexical: false, vector: true },
      { lexical: true, vector: false },
    ]) {
      const response = await createRetriever({ store, embedder, arms }).search('a', text);
      expect(ids(response)).toContain(active.id);
      for (const gone of [archived.id, superseded.id, deleted.id]) expect(ids(response)).not.toContain(gone);
      expect(response.execution.outcome).toBe('completed');
    }
    const hybrid = await createRetriever({ store, embedder }).search('a', 'billing backup weekly schedule');
    expect(ids(hybrid)).toContain(replacement.id);
  });

  it("never returns another agent's identical row", async () => {
    const store = await openStore();
    const text = 'The staging cluster password rotates on Mondays';
    const mine = await add(store, 'a', text);
    const theirs = await add(store, 'b', text);
    const retriever = createRetriever({ store, embedder });
    const response = await retriever.search('a', text);
    expect(ids(response)).toEqual([mine.id]);
    expect(ids(await retriever.search('b', text))).toEqual([theirs.id]);
    expect(ids(await retriever.search('c', text))).toEqual([]);
  });

  it('drops a row whose revision changed after the lexical search and says so', async () => {
    const store = await openStore();
    const target = await add(store, 'a', 'Rotate credentials for the analytics warehouse', { vector: false });
    const other = await add(store, 'a', 'Analytics warehouse lives in eu-west-1', { vector: false });
    // A concurrent edit lands between the lexical arm and revalidation.
    const racing: RetrieverConfig['store'] = {
      searchLexical: async (query) => {
        const result = await store.searchLexical(query);
        await store.updateMemory('a', target.id, target.revision, { importance: 0.9 });
        return result;
      },
      searchVector: (query) => store.searchVector(query),
      revalidate: (agentId, candidates) => store.revalidate(agentId, candidates),
    };
    const response = await createRetriever({
      store: racing,
      embedder,
      arms: { lexical: true, vector: false },
    }).search('a', 'analytics warehouse');
    expect(response.execution.outcome).toBe('completed');
    expect(response.execution.degradations).toEqual(['revisionChanged']);
    expect(ids(response)).toEqual([other.id]);
  });

  it('is top-k monotonic over a real corpus', async () => {
    const store = await openStore();
    const topics = ['cache', 'redis', 'invalidation', 'latency', 'deploy', 'release', 'backup', 'auth'];
    for (let i = 0; i < 48; i += 1) {
      const words = topics.filter((_, j) => (i >> (j % 5)) % 2 === 0 || j === i % topics.length);
      await add(store, 'a', `note ${i}: ${words.join(' ')} ${i % 3 === 0 ? 'slowness' : 'rollout'}`, {
        importance: (i % 5) / 4,
        vector: i % 4 !== 0,
      });
    }
    const retriever = createRetriever({ store, embedder, now: () => 2_000_000_000_000 });
    const query = 'redis cache invalidation latency';
    const full = ids(await retriever.search('a', query, { limit: 30 }));
    expect(full.length).toBe(30);
    for (let k = 1; k < 30; k += 1) {
      expect(ids(await retriever.search('a', query, { limit: k }))).toEqual(full.slice(0, k));
    }
    expect(ids(await retriever.search('a', query, { limit: 500 })).slice(0, 30)).toEqual(full);
  });

  it('filters by kinds and exact tags in both arms; persona and skill rows are never recalled by default', async () => {
    const store = await openStore();
    const text = 'Prefer small focused pull requests';
    const persona = await add(store, 'a', text, { kind: 'persona' });
    const fact = await add(store, 'a', text, { kind: 'fact', tags: ['file:src/a.ts'] });
    const episodic = await add(store, 'a', text, { kind: 'episodic', tags: ['tool:bash'] });
    const retriever = createRetriever({ store, embedder });
    const all = ids(await retriever.search('a', text));
    expect(all.sort()).toEqual([fact.id, episodic.id].sort());
    expect(all).not.toContain(persona.id);
    expect(ids(await retriever.search('a', text, { kinds: ['fact'] }))).toEqual([fact.id]);
    expect(ids(await retriever.search('a', text, { tags: ['file:src/a.ts'] }))).toEqual([fact.id]);
    const vectorOnly = createRetriever({ store, embedder, arms: { lexical: false, vector: true } });
    expect(ids(await vectorOnly.search('a', text, { tags: ['tool:bash'] }))).toEqual([episodic.id]);
    expect(ids(await vectorOnly.search('a', text, { kinds: ['persona'] }))).toEqual([persona.id]);
  });

  it('refills a starved arm with a larger budget, up to the hard cap', async () => {
    const store = await openStore();
    const text = 'Quarterly access review for the data platform';
    const archived: string[] = [];
    for (let i = 0; i < 6; i += 1) {
      const row = await add(store, 'a', text);
      await store.archiveMemory('a', row.id);
      archived.push(row.id);
    }
    const kept = await add(store, 'a', 'Quarterly access review for the data platform team');
    const small = { store, embedder, arms: { lexical: false, vector: true }, candidateBudget: 3 } as const;
    const refilled = await createRetriever({ ...small, refillMaxBudget: 12 }).search('a', text);
    expect(ids(refilled)).toEqual([kept.id]);
    expect(refilled.execution.degradations).toEqual([]);
    const capped = await createRetriever({ ...small, refillMaxBudget: 6 }).search('a', text);
    expect(ids(capped)).toEqual([]);
    expect(capped.execution.outcome).toBe('completed');
    expect(capped.execution.degradations).toEqual(['candidateBudgetExhausted']);
  });
});

describe('degradation, cancellation and failure', () => {
  async function seed(store: PostgresMemoryStore): Promise<MemoryRecord> {
    await add(store, 'a', 'Unrelated note about the team offsite');
    return add(store, 'a', 'The deploy pipeline runs database migrations first');
  }

  it('answers FTS-only and `completed` when the embedder throws', async () => {
    const store = await openStore();
    const row = await seed(store);
    const { port } = switchableEmbedder();
    const response = await createRetriever({ store, embedder: port }).search('a', 'deploy migrations');
    expect(response.execution).toMatchObject({
      outcome: 'completed',
      degradations: ['embeddingError'],
      arms: ['lexical'],
    });
    expect(ids(response)).toEqual([row.id]);
    expect(response.execution.latencies).toHaveProperty('queryEmbedding');
    expect(response.execution.latencies).not.toHaveProperty('vector');
  });

  it('answers FTS-only and `completed` when the embedder hangs past the deadline, and aborts it', async () => {
    const store = await openStore();
    const row = await seed(store);
    const hanging = hangingEmbedder();
    const clock = manualTimers();
    const retriever = createRetriever({
      store,
      embedder: hanging.port,
      timers: clock.timers,
      embeddingDeadlineMs: 1500,
    });
    const pending = retriever.search('a', 'deploy migrations');
    await clock.scheduled();
    expect(clock.delays).toEqual([1500]);
    clock.fire();
    const response = await pending;
    expect(response.execution).toMatchObject({
      outcome: 'completed',
      degradations: ['embeddingTimeout'],
      arms: ['lexical'],
    });
    expect(ids(response)).toEqual([row.id]);
    expect(hanging.signals).toHaveLength(1);
    expect(hanging.signals[0]?.aborted).toBe(true);
    expect(retriever.circuit().failures).toBe(1);
  });

  it('degrades at once, without calling the embedder, past the per-agent in-flight cap', async () => {
    const store = await openStore();
    await seed(store);
    const hanging = hangingEmbedder();
    const clock = manualTimers();
    const retriever = createRetriever({
      store,
      embedder: hanging.port,
      timers: clock.timers,
      maxInFlightEmbeddingsPerAgent: 1,
    });
    const first = retriever.search('a', 'deploy');
    await clock.scheduled();
    const second = await retriever.search('a', 'deploy');
    expect(second.execution).toMatchObject({ outcome: 'completed', degradations: ['embeddingTimeout'] });
    expect(second.execution.latencies).not.toHaveProperty('queryEmbedding');
    expect(hanging.state.calls).toBe(1);
    // Another agent has its own slots.
    const other = retriever.search('b', 'deploy');
    expect(hanging.state.calls).toBe(2);
    clock.fire();
    expect((await first).execution.degradations).toEqual(['embeddingTimeout']);
    expect((await other).execution.degradations).toEqual(['embeddingTimeout']);
    // The slot is free again.
    const third = retriever.search('a', 'deploy');
    expect(hanging.state.calls).toBe(3);
    clock.fire();
    await third;
  });

  it('trips the breaker, answers FTS-only while open, and recovers through halfOpen', async () => {
    const store = await openStore();
    const row = await seed(store);
    const flaky = switchableEmbedder();
    const rec = recording();
    let now = 1_000_000;
    const retriever = createRetriever({
      store,
      embedder: flaky.port,
      observer: rec.observer,
      now: () => now,
      circuit: { failureThreshold: 2, cooldownMs: 10_000 },
    });
    for (let i = 0; i < 2; i += 1) {
      expect((await retriever.search('a', 'deploy')).execution.degradations).toEqual(['embeddingError']);
    }
    expect(rec.circuit.map((s) => s.state)).toEqual(['closed', 'open']);
    const open = await retriever.search('a', 'deploy migrations');
    expect(open.execution).toMatchObject({
      outcome: 'completed',
      degradations: ['embeddingCircuitOpen'],
      arms: ['lexical'],
    });
    expect(ids(open)).toEqual([row.id]);
    expect(flaky.state.calls).toBe(2);
    now += 9_999;
    expect((await retriever.search('a', 'deploy')).execution.degradations).toEqual(['embeddingCircuitOpen']);
    now += 1;
    flaky.state.failing = false;
    const probe = await retriever.search('a', 'deploy migrations');
    expect(probe.execution).toMatchObject({
      outcome: 'completed',
      degradations: [],
      arms: ['lexical', 'vector'],
    });
    expect(rec.circuit.map((s) => s.state)).toEqual(['closed', 'open', 'halfOpen', 'closed']);
    expect(retriever.circuit()).toEqual({
      state: 'closed',
      failures: 2,
      opened: 1,
      halfOpenProbes: 1,
      rejected: 2,
    });
    expect(flaky.state.calls).toBe(3);
  });

  it('answers `cancelled` for an aborted signal, before or during the call, without counting a failure', async () => {
    const store = await openStore();
    await seed(store);
    const hanging = hangingEmbedder();
    const clock = manualTimers();
    const retriever = createRetriever({ store, embedder: hanging.port, timers: clock.timers });
    const before = new AbortController();
    before.abort();
    const early = await retriever.search('a', 'deploy', { signal: before.signal });
    expect(early).toEqual({
      results: [],
      execution: expect.objectContaining({ outcome: 'cancelled', degradations: [] }),
    });
    expect(hanging.state.calls).toBe(0);

    const during = new AbortController();
    const pending = retriever.search('a', 'deploy', { signal: during.signal });
    await clock.scheduled();
    during.abort();
    const late = await pending;
    expect(late.results).toEqual([]);
    expect(late.execution.outcome).toBe('cancelled');
    expect(hanging.signals[0]?.aborted).toBe(true);
    expect(clock.pending()).toBe(0);
    expect(retriever.circuit()).toMatchObject({ state: 'closed', failures: 0 });
  });

  it('answers `emptyQuery` for a query without terms', async () => {
    const store = await openStore();
    await seed(store);
    const response = await createRetriever({ store, embedder }).injection('a', ' … ?? ');
    expect(response).toEqual({
      results: [],
      execution: expect.objectContaining({ outcome: 'emptyQuery', purpose: 'injection' }),
    });
  });

  it('is FTS-only with `vectorCold` without an embedder', async () => {
    const store = await openStore();
    const row = await seed(store);
    const response = await createRetriever({ store }).search('a', 'deploy');
    expect(response.execution).toMatchObject({
      outcome: 'completed',
      degradations: ['vectorCold'],
      arms: ['lexical'],
    });
    expect(ids(response)).toEqual([row.id]);
  });

  it('answers `failed` with `storeUnusable` and no results when the store is closed', async () => {
    const store = await openStore();
    await seed(store);
    const retriever = createRetriever({ store, embedder });
    await store.close();
    const response = await retriever.search('a', 'deploy');
    expect(response).toEqual({
      results: [],
      execution: expect.objectContaining({ outcome: 'failed', degradations: ['storeUnusable'] }),
    });
  });

  it('reports every operation to the observer exactly once, whatever its outcome', async () => {
    const store = await openStore();
    await seed(store);
    const rec = recording();
    const flaky = switchableEmbedder();
    const retriever = createRetriever({ store, embedder: flaky.port, observer: rec.observer });
    const aborted = new AbortController();
    aborted.abort();
    const responses = [
      await retriever.recall('a', 'deploy'),
      await retriever.search('a', '???'),
      await retriever.decision('a', 'deploy', { signal: aborted.signal }),
      await retriever.injection('a', 'migrations'),
    ];
    flaky.state.failing = false;
    responses.push(await retriever.search('a', 'deploy pipeline'));
    await store.close();
    responses.push(await retriever.search('a', 'deploy'));
    expect(rec.executions).toHaveLength(responses.length);
    expect(rec.executions).toEqual(responses.map((r) => r.execution));
    expect(rec.executions.map((e) => [e.purpose, e.outcome])).toEqual([
      ['recall', 'completed'],
      ['search', 'emptyQuery'],
      ['decision', 'cancelled'],
      ['injection', 'completed'],
      ['search', 'completed'],
      ['search', 'failed'],
    ]);
    for (const execution of rec.executions) {
      expect(Object.isFrozen(execution)).toBe(true);
      expect(JSON.stringify(execution)).not.toMatch(/deploy|migrations/);
    }
  });
});

describe("the store's vector profile", () => {
  /** Delegates to the deterministic embedder (or `vectors`) and counts calls. */
  function countingEmbedder(
    options: { profile?: QueryEmbedder['profile'] | null; vector?: Float32Array } = {},
  ) {
    const state = { calls: 0 };
    const profile = options.profile === undefined ? embedder.profile : options.profile;
    const port: QueryEmbedder = {
      ...(profile === null ? {} : { profile }),
      embed(texts, opts) {
        state.calls += 1;
        const fixed = options.vector;
        if (fixed !== undefined) return Promise.resolve(texts.map(() => fixed));
        return embedder.embed(texts, opts);
      },
    };
    return { port, state };
  }

  it('does not embed the query for a store without a vector index: FTS-only with `vectorCold`', async () => {
    const store = await openPgStore({ embedding: null });
    const row = await store.insertMemory({ agentId: 'a', kind: 'fact', content: 'Deploys run on Fridays' });
    const counting = countingEmbedder();
    const response = await createRetriever({ store, embedder: counting.port }).search('a', 'deploys');
    expect(response.execution).toMatchObject({
      outcome: 'completed',
      degradations: ['vectorCold'],
      arms: ['lexical'],
    });
    expect(response.execution.latencies).not.toHaveProperty('queryEmbedding');
    expect(ids(response)).toEqual([row.id]);
    expect(counting.state.calls).toBe(0);
  });

  it("does not embed the query when the store's profile differs from the embedder's (id or dimensions)", async () => {
    for (const profile of [
      { id: 'another-model', dimensions: embedder.profile.dimensions },
      { id: embedder.profile.id, dimensions: embedder.profile.dimensions + 1 },
    ]) {
      const store = await openPgStore({ embedding: profile });
      const row = await store.insertMemory({ agentId: 'a', kind: 'fact', content: 'Deploys run on Fridays' });
      const counting = countingEmbedder();
      const response = await createRetriever({ store, embedder: counting.port }).search('a', 'deploys');
      expect(response.execution).toMatchObject({
        outcome: 'completed',
        degradations: ['vectorCold'],
        arms: ['lexical'],
      });
      expect(ids(response)).toEqual([row.id]);
      expect(counting.state.calls).toBe(0);
    }
  });

  it("never searches a query vector whose length differs from the store's: `embeddingError`, FTS-only", async () => {
    const store = await openStore();
    const row = await add(store, 'a', 'Deploys run on Fridays');
    let vectorSearches = 0;
    const counted: RetrieverConfig['store'] = {
      embeddingProfile: store.embeddingProfile,
      searchLexical: (query) => store.searchLexical(query),
      searchVector: (query) => {
        vectorSearches += 1;
        return store.searchVector(query);
      },
      revalidate: (agentId, candidates) => store.revalidate(agentId, candidates),
    };
    // An embedder that does not declare a profile and answers with 7 dimensions.
    const wrong = countingEmbedder({ profile: null, vector: new Float32Array(7).fill(0.5) });
    const response = await createRetriever({ store: counted, embedder: wrong.port }).search('a', 'deploys');
    expect(response.execution).toMatchObject({
      outcome: 'completed',
      degradations: ['embeddingError'],
      arms: ['lexical'],
    });
    expect(ids(response)).toEqual([row.id]);
    expect(wrong.state.calls).toBe(1);
    expect(vectorSearches).toBe(0);
    // The same port with the right vectors does search.
    const right = countingEmbedder({ profile: null });
    const ok = await createRetriever({ store: counted, embedder: right.port }).search('a', 'deploys');
    expect(ok.execution.arms).toEqual(['lexical', 'vector']);
    expect(vectorSearches).toBe(1);
  });
});

describe('access tracking', () => {
  function queue() {
    const tasks: (() => void)[] = [];
    return {
      tasks,
      defer: (task: () => void) => {
        tasks.push(task);
      },
      run: (): void => {
        for (const task of tasks.splice(0)) task();
      },
    };
  }

  it('bumps lastAccessedAt and accessCount of what recall, search and injection return — after the answer', async () => {
    const store = await openStore();
    const hit = await add(store, 'a', 'The release train leaves every Tuesday');
    const miss = await add(store, 'a', 'Lunch is served at noon');
    const q = queue();
    const retriever = createRetriever({ store, embedder, now: () => 5_000_000, defer: q.defer });
    const response = await retriever.search('a', 'release train', { limit: 1 });
    expect(ids(response)).toEqual([hit.id]);
    // Nothing written while the call ran: the write is deferred, outside the call and its latencies.
    expect(q.tasks).toHaveLength(1);
    expect(await store.getMemory('a', hit.id)).toMatchObject({ accessCount: 0, lastAccessedAt: null });
    q.run();
    const after = await store.getMemory('a', hit.id);
    expect(after).toMatchObject({
      accessCount: 1,
      lastAccessedAt: 5_000_000,
      revision: hit.revision,
      updatedAt: hit.updatedAt,
    });
    expect(await store.getMemory('a', miss.id)).toMatchObject({ accessCount: 0, lastAccessedAt: null });

    await retriever.recall('a', 'release train', { limit: 1 });
    await retriever.injection('a', 'release train', { limit: 1 });
    expect(q.tasks).toHaveLength(2);
    q.run();
    expect((await store.getMemory('a', hit.id))?.accessCount).toBe(3);
  });

  it('never records access for `decision`, an empty answer, or with trackAccess off', async () => {
    const store = await openStore();
    const row = await add(store, 'a', 'The release train leaves every Tuesday');
    const q = queue();
    const retriever = createRetriever({ store, embedder, defer: q.defer });
    expect(ids(await retriever.decision('a', 'release train'))).toEqual([row.id]);
    await retriever.search('a', 'kubernetes');
    await retriever.search('a', '?!');
    expect(q.tasks).toHaveLength(0);
    const off = createRetriever({ store, embedder, defer: q.defer, trackAccess: false });
    expect(ids(await off.search('a', 'release train'))).toEqual([row.id]);
    expect(q.tasks).toHaveLength(0);
    expect((await store.getMemory('a', row.id))?.accessCount).toBe(0);
  });

  it('works with a store port without recordAccess, and swallows a failed access write', async () => {
    const store = await openStore();
    const row = await add(store, 'a', 'The release train leaves every Tuesday');
    const q = queue();
    const readOnly: RetrieverConfig['store'] = {
      searchLexical: (query) => store.searchLexical(query),
      searchVector: (query) => store.searchVector(query),
      revalidate: (agentId, candidates) => store.revalidate(agentId, candidates),
    };
    expect(
      ids(await createRetriever({ store: readOnly, embedder, defer: q.defer }).search('a', 'release')),
    ).toEqual([row.id]);
    expect(q.tasks).toHaveLength(0);

    const throwing: RetrieverConfig['store'] = {
      ...readOnly,
      recordAccess: () => {
        throw new Error('synchronous failure');
      },
    };
    await createRetriever({ store: throwing, embedder, defer: q.defer }).search('a', 'release');
    await createRetriever({ store, embedder, defer: q.defer }).search('a', 'release');
    const failingDefer = createRetriever({
      store: { ...readOnly, recordAccess: () => Promise.resolve() },
      embedder,
      defer: () => {
        throw new Error('scheduler down');
      },
    });
    const answer = await failingDefer.search('a', 'release');
    expect(ids(answer)).toEqual([row.id]);
    expect(q.tasks).toHaveLength(2);
    await store.close(); // the real store now rejects the deferred write (ENGRAM_STORE_CLOSED): swallowed, never unhandled
    expect(() => q.run()).not.toThrow();
  });

  it('defers the write with setImmediate by default: not yet written when the answer arrives', async () => {
    const store = await openStore();
    const row = await add(store, 'a', 'The release train leaves every Tuesday');
    await createRetriever({ store, embedder }).search('a', 'release train');
    expect((await store.getMemory('a', row.id))?.accessCount).toBe(0);
    await new Promise<void>((resolve) => setImmediate(resolve));
    expect((await store.getMemory('a', row.id))?.accessCount).toBe(1);
  });
});

describe('filters on the vector arm', () => {
  it('finds a tagged row ranked below more than a budget of untagged ones: the tag applies inside the k-NN', async () => {
    const store = await openStore();
    const text = 'Quarterly access review for the data platform';
    // Eight untagged rows with the same words, hence the same vector (their punctuation differs, which the
    // embedder ignores: exact duplicates would be stored once).
    for (const variant of ['', '!', '?', ';', ',', '!!', '??', ';;'])
      await add(store, 'a', `${text}${variant}`);
    const tagged = await add(store, 'a', `${text} owners`, { tags: ['file:docs/review.md'] });
    const small = {
      store,
      embedder,
      arms: { lexical: false, vector: true },
      candidateBudget: 2,
      refillTarget: 1,
    } as const;
    for (const refillMaxBudget of [16, 4]) {
      const found = await createRetriever({ ...small, refillMaxBudget }).search('a', text, {
        tags: ['file:docs/review.md'],
      });
      expect(ids(found)).toEqual([tagged.id]);
      expect(found.execution.degradations).toEqual([]);
    }
  });

  it('finds a current row ranked below more than a budget of archived ones by refilling, and says when capped', async () => {
    const store = await openStore();
    const text = 'Quarterly access review for the data platform';
    for (let i = 0; i < 8; i += 1) {
      const row = await add(store, 'a', text);
      await store.archiveMemory('a', row.id);
    }
    const current = await add(store, 'a', `${text} owners`);
    const small = {
      store,
      embedder,
      arms: { lexical: false, vector: true },
      candidateBudget: 2,
      refillTarget: 1,
    } as const;
    const refilled = await createRetriever({ ...small, refillMaxBudget: 16 }).search('a', text);
    expect(ids(refilled)).toEqual([current.id]);
    expect(refilled.execution.degradations).toEqual([]);
    const capped = await createRetriever({ ...small, refillMaxBudget: 4 }).search('a', text);
    expect(ids(capped)).toEqual([]);
    expect(capped.execution.degradations).toEqual(['candidateBudgetExhausted']);
  });
});

describe('the vector similarity threshold', () => {
  it('drops vector hits below the threshold and keeps those at or above it', async () => {
    const store = await openStore();
    const close = await add(store, 'a', 'Payments outage during the holiday sale');
    const far = await add(store, 'a', 'Lunch menu for the offsite');
    const query = 'payments outage';
    const [q, c, f] = await embedder.embed([query, close.content, far.content]);
    const simClose = cosineSimilarity(q as Float32Array, c as Float32Array);
    const simFar = cosineSimilarity(q as Float32Array, f as Float32Array);
    expect(simClose).toBeGreaterThan(simFar);
    const vectorOnly = (similarityThreshold: number) =>
      createRetriever({ store, embedder, arms: { lexical: false, vector: true }, similarityThreshold });
    // Everything at -1; only the close row between the two similarities; nothing above both.
    expect(ids(await vectorOnly(-1).search('a', query)).sort()).toEqual([close.id, far.id].sort());
    const between = (simClose + simFar) / 2;
    const mid = await vectorOnly(between).search('a', query);
    expect(ids(mid)).toEqual([close.id]);
    expect(mid.execution.candidates.vector).toBe(1);
    expect(ids(await vectorOnly(Math.min(1, simClose + 1e-3)).search('a', query))).toEqual([]);
  });
});

describe('agent ids the store refuses, over a real store', () => {
  const refused: [string, string][] = [
    ['300 characters', 'a'.repeat(300)],
    ['a NUL byte', 'agent\u0000one'],
    ['a lone surrogate', 'agent\ud800one'],
    // Look-alikes of the stored `agent`: refused, never silently a second (empty) agent.
    ['a trailing space', 'agent '],
    ['a leading space', ' agent'],
    ['a decomposed (NFD) accent', 'age\u0301nt'],
  ];

  it.each(refused)(
    '%s: the retriever refuses it as a caller mistake before the store sees it',
    async (_label, agentId) => {
      const store = await openStore();
      await add(store, 'agent', 'pnpm workspace layout');
      // The store's own rule refuses the id: before, that rejection settled the call as a `storeError`.
      const direct = await store.searchLexical({ agentId, terms: ['pnpm'], mode: 'any', limit: 5 }).then(
        () => undefined,
        (error: unknown) => (error as { code?: string }).code,
      );
      expect(direct).toBe('ENGRAM_STORE_INVALID_INPUT');
      const reports: RetrievalExecution[] = [];
      const retriever = createRetriever({
        store,
        embedder,
        observer: { onRetrieval: (e) => reports.push(e) },
      });
      const code = await retriever.search(agentId, 'pnpm workspace').then(
        () => undefined,
        (error: unknown) => (error as { code?: string }).code,
      );
      expect(code).toBe('ENGRAM_RETRIEVAL_INVALID_INPUT');
      expect(reports).toEqual([]);
      // A valid id on the same retriever still answers, and is reported once.
      const ok = await retriever.search('agent', 'pnpm workspace');
      expect(ok.execution.outcome).toBe('completed');
      expect(reports.map((e) => [e.outcome, e.degradations])).toEqual([['completed', []]]);
    },
  );
});
