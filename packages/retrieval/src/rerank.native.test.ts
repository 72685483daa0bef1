import type { RetrievalExecution, Timers } from '@engram/contracts';
import type { MemoryStore } from '@engram/store';
import type { PostgresMemoryStore } from '@engram/store-postgres';
import { describe, expect, it } from 'vitest';
import { isEngramRetrievalError } from './errors.js';
import { openPgStore } from './pg-store.fixture.js';
import type { Reranker } from './ports.js';
import {
  createRetriever,
  type RerankConfig,
  type RetrievalResponse,
  type RetrieverConfig,
} from './retriever.js';

const LEXICAL_ONLY = { lexical: true, vector: false } as const;

/** Five memories that all match "deploy"; the lexical arm ranks the shorter, denser ones first. */
async function seed(store: Pick<MemoryStore, 'insertMemory'>): Promise<void> {
  const contents = [
    'deploy deploy deploy',
    'deploy the service',
    'we deploy on fridays after the review',
    'the deploy of the billing service needs the canary flag set first',
    'notes: deploy runbook, with the rollback steps and the preferred order of the database migrations',
  ];
  for (const content of contents) await store.insertMemory({ agentId: 'a', content, kind: 'semantic' });
}

/** A real reranker of the port: scores each document by how often it says "preferred" or "canary". */
function keywordReranker() {
  const calls: { query: string; documents: readonly string[]; signal: AbortSignal | undefined }[] = [];
  const port: Reranker = {
    id: 'keyword-reranker',
    rerank(query, documents, options) {
      calls.push({ query, documents, signal: options?.signal });
      return Promise.resolve(
        documents.map((d) => (d.includes('preferred') ? 2 : 0) + (d.includes('canary') ? 1 : 0)),
      );
    },
  };
  return { port, calls };
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
  };
}

async function fixture(
  extra: Partial<RetrieverConfig> = {},
): Promise<{ store: PostgresMemoryStore; executions: RetrievalExecution[]; fusedOrder: string[] }> {
  const store = await openPgStore();
  await seed(store);
  const executions: RetrievalExecution[] = [];
  const plain = createRetriever({ store, arms: LEXICAL_ONLY, trackAccess: false, ...extra });
  const fused = await plain.search('a', 'deploy', { limit: 5 });
  return { store, executions, fusedOrder: fused.results.map((r) => r.record.content) };
}

const contents = (response: RetrievalResponse): string[] => response.results.map((r) => r.record.content);

describe('the rerank stage', () => {
  it('reorders the fused head by the reranker, shows its score and ranks, and keeps the limit after it', async () => {
    const { store, executions, fusedOrder } = await fixture();
    const reranker = keywordReranker();
    const retriever = createRetriever({
      store,
      arms: LEXICAL_ONLY,
      trackAccess: false,
      observer: { onRetrieval: (e) => executions.push(e) },
      rerank: { model: reranker.port, candidates: 5 },
    });
    const response = await retriever.search('a', 'deploy', { limit: 2 });
    // The reranker saw the five fused candidates' text and the query, nothing else.
    expect(reranker.calls).toHaveLength(1);
    expect(reranker.calls[0]?.query).toBe('deploy');
    expect(reranker.calls[0]?.documents).toEqual(fusedOrder);
    // Its two best come first, though the fusion ranked them last; then the limit of two applies.
    expect(contents(response)).toEqual([
      fusedOrder.find((c) => c.includes('preferred')),
      fusedOrder.find((c) => c.includes('canary')),
    ]);
    const [first, second] = response.results;
    expect(first?.explanation.rerank).toEqual({
      score: 2,
      rank: 1,
      fusedRank: fusedOrder.findIndex((c) => c.includes('preferred')) + 1,
    });
    expect(second?.explanation.rerank?.rank).toBe(2);
    expect(response.execution.degradations).toEqual([]);
    expect(response.execution.candidates.selected).toBe(2);
    expect(response.execution.latencies.rerank).toBeGreaterThanOrEqual(0);
    expect(executions[0]?.latencies).toHaveProperty('rerank');
  });

  it('reranks only the first `candidates`; the rest follow in the fused order', async () => {
    const { store, fusedOrder } = await fixture();
    const reranker = keywordReranker();
    const retriever = createRetriever({
      store,
      arms: LEXICAL_ONLY,
      trackAccess: false,
      rerank: { model: reranker.port, candidates: 2 },
    });
    const response = await retriever.search('a', 'deploy', { limit: 5 });
    expect(reranker.calls[0]?.documents).toHaveLength(2);
    // Neither of the first two says "preferred" or "canary": ties keep the fused order.
    expect(contents(response)).toEqual(fusedOrder);
    expect(response.results.map((r) => r.explanation.rerank?.rank)).toEqual([
      1,
      2,
      undefined,
      undefined,
      undefined,
    ]);
  });

  it('keeps the fused order and reports rerankTimeout when the reranker exceeds its budget', async () => {
    const { store, fusedOrder } = await fixture();
    const clock = manualTimers();
    const signals: AbortSignal[] = [];
    const hanging: Reranker = {
      rerank(_query, _documents, options) {
        if (options?.signal !== undefined) signals.push(options.signal);
        return new Promise<number[]>(() => {});
      },
    };
    const retriever = createRetriever({
      store,
      arms: LEXICAL_ONLY,
      trackAccess: false,
      timers: clock.timers,
      rerank: { model: hanging, timeoutMs: 250 },
    });
    const pending = retriever.search('a', 'deploy', { limit: 3 });
    await clock.scheduled();
    expect(clock.delays).toEqual([250]);
    clock.fire();
    const response = await pending;
    expect(response.execution).toMatchObject({ outcome: 'completed', degradations: ['rerankTimeout'] });
    expect(response.execution.latencies).toHaveProperty('rerank');
    expect(contents(response)).toEqual(fusedOrder.slice(0, 3));
    expect(response.results.every((r) => r.explanation.rerank === undefined)).toBe(true);
    expect(signals[0]?.aborted).toBe(true);
  });

  it('keeps the fused order and reports rerankError on a rejection or malformed scores, with no content', async () => {
    const { store, fusedOrder } = await fixture();
    const failing: Reranker[] = [
      { rerank: () => Promise.reject(new Error('provider down: deploy runbook')) },
      {
        rerank: () => {
          throw new Error('sync failure');
        },
      },
      { rerank: () => Promise.resolve([1]) },
      { rerank: (_q, documents) => Promise.resolve(documents.map(() => Number.NaN)) },
    ];
    for (const model of failing) {
      const executions: RetrievalExecution[] = [];
      const retriever = createRetriever({
        store,
        arms: LEXICAL_ONLY,
        trackAccess: false,
        observer: { onRetrieval: (e) => executions.push(e) },
        rerank: { model },
      });
      const response = await retriever.search('a', 'deploy', { limit: 5 });
      expect(response.execution).toMatchObject({ outcome: 'completed', degradations: ['rerankError'] });
      expect(contents(response)).toEqual(fusedOrder);
      expect(JSON.stringify(executions)).not.toContain('runbook');
    }
  });

  it('never reranks a decision lookup', async () => {
    const { store } = await fixture();
    const reranker = keywordReranker();
    const retriever = createRetriever({
      store,
      arms: LEXICAL_ONLY,
      trackAccess: false,
      rerank: { model: reranker.port },
    });
    const response = await retriever.decision('a', 'deploy', { limit: 2 });
    expect(reranker.calls).toHaveLength(0);
    expect(response.results).toHaveLength(2);
    expect(response.execution.latencies).not.toHaveProperty('rerank');
  });

  it('cancels the call when the caller aborts during the rerank', async () => {
    const { store } = await fixture();
    const controller = new AbortController();
    const signals: AbortSignal[] = [];
    const hanging: Reranker = {
      rerank(_query, _documents, options) {
        if (options?.signal !== undefined) signals.push(options.signal);
        queueMicrotask(() => controller.abort());
        return new Promise<number[]>(() => {});
      },
    };
    const retriever = createRetriever({
      store,
      arms: LEXICAL_ONLY,
      trackAccess: false,
      rerank: { model: hanging },
    });
    const response = await retriever.search('a', 'deploy', { signal: controller.signal });
    expect(response.execution.outcome).toBe('cancelled');
    expect(response.results).toEqual([]);
    expect(signals[0]?.aborted).toBe(true);
  });

  it('refuses an invalid rerank configuration with INVALID_CONFIG', async () => {
    const store = await openPgStore();
    const model = keywordReranker().port;
    const cases: unknown[] = [
      { model: {} },
      { model: null },
      { model, candidates: 0 },
      { model, candidates: 101 },
      { model, timeoutMs: 0 },
      { model, timeoutMs: 1.5 },
      'yes',
    ];
    for (const rerank of cases) {
      let thrown: unknown;
      try {
        createRetriever({ store, rerank: rerank as RerankConfig });
      } catch (error) {
        thrown = error;
      }
      expect(isEngramRetrievalError(thrown)).toBe(true);
      expect((thrown as { code: string }).code).toBe('ENGRAM_RETRIEVAL_INVALID_CONFIG');
    }
    expect(createRetriever({ store }).settings.rerank).toBeNull();
    expect(createRetriever({ store, rerank: { model } }).settings.rerank).toEqual({
      candidates: 20,
      timeoutMs: 1000,
    });
  });
});
