import { RETRIEVAL_PURPOSES, type RetrievalExecution } from '@engram/contracts';
import { createDeterministicEmbedder } from '@engram/embedder-deterministic';
import { describe, expect, it } from 'vitest';
import { isEngramRetrievalError } from './errors.js';
import { memoryRecord } from './memory-record.fixture.js';
import type { RetrievalStore } from './ports.js';
import { createRetriever } from './retriever.js';

// Validation and the `disabled` outcome happen before any read: a store that is never reached proves it.
const unreachable: RetrievalStore = {
  searchLexical: () => Promise.reject(new Error('unreachable')),
  searchVector: () => Promise.reject(new Error('unreachable')),
  revalidate: () => Promise.reject(new Error('unreachable')),
};

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

describe('createRetriever input validation', () => {
  it('throws a typed INVALID_INPUT error for programmer errors, before reading or reporting', async () => {
    const reports: RetrievalExecution[] = [];
    const retriever = createRetriever({
      store: unreachable,
      observer: { onRetrieval: (e) => reports.push(e) },
    });
    const bad: [string, unknown, unknown][] = [
      ['', 'q', undefined],
      ['   ', 'q', undefined],
      ['a', 42, undefined],
      ['a', 'q', { limit: 0 }],
      ['a', 'q', { limit: 1.5 }],
      ['a', 'q', { limit: Number.NaN }],
      ['a', 'q', { kinds: [] }],
      ['a', 'q', { kinds: ['nonsense'] }],
      ['a', 'q', { tags: ['no-colon'] }],
      ['a', 'q', { tags: ['file:\u0000'] }],
      ['a', 'q', { signal: {} }],
    ];
    for (const [agentId, query, options] of bad) {
      const error = await rejection(
        retriever.search(agentId, query as string, options as Parameters<typeof retriever.search>[2]),
      );
      expect(isEngramRetrievalError(error)).toBe(true);
      expect((error as { code: string }).code).toBe('ENGRAM_RETRIEVAL_INVALID_INPUT');
      expect((error as Error).message).not.toContain('nonsense');
    }
    expect(reports).toEqual([]);
  });

  it('rejects an invalid configuration with a typed INVALID_CONFIG error', () => {
    const cases = [
      { embeddingDeadlineMs: 0 },
      { maxInFlightEmbeddingsPerAgent: 0 },
      { circuit: { failureThreshold: 0 } },
      { similarityThreshold: 2 },
      { candidateBudget: 1001 },
      { candidateBudget: 50, refillTarget: 60 },
      { candidateBudget: 200, refillMaxBudget: 100 },
      { fusion: { k: -1 } },
      { arms: { lexical: 'yes', vector: true } },
    ];
    for (const extra of cases) {
      let thrown: unknown;
      try {
        createRetriever({ store: unreachable, ...(extra as object) });
      } catch (error) {
        thrown = error;
      }
      expect(isEngramRetrievalError(thrown)).toBe(true);
      expect((thrown as { code: string }).code).toBe('ENGRAM_RETRIEVAL_INVALID_CONFIG');
    }
  });

  it('freezes its resolved settings', () => {
    const retriever = createRetriever({ store: unreachable, candidateBudget: 64, fusion: { k: 30 } });
    expect(retriever.settings).toMatchObject({
      arms: { lexical: true, vector: true },
      embeddingDeadlineMs: 2000,
      maxInFlightEmbeddingsPerAgent: 4,
      failureThreshold: 5,
      cooldownMs: 30_000,
      candidateBudget: 64,
      refillTarget: 64,
      refillMaxBudget: 1000,
      maxTerms: 32,
      fusion: { k: 30, lexical: 1, vector: 1 },
    });
    expect(Object.isFrozen(retriever.settings)).toBe(true);
    expect(Object.isFrozen(retriever.settings.fusion)).toBe(true);
  });
});

describe('agent ids the store refuses are caller mistakes, refused before any read', () => {
  // Before, these reached the store, which refused them, and the call settled as a `storeError`.
  it.each([
    ['300 characters', 'a'.repeat(300), 'tooLong'],
    ['a NUL byte', 'agent\u0000one', 'controlCharacter'],
    ['a lone surrogate', 'agent\ud800one', 'loneSurrogate'],
  ])(
    '%s: a typed INVALID_INPUT error for every purpose, and nothing reported',
    async (_label, agentId, problem) => {
      const reports: RetrievalExecution[] = [];
      let reads = 0;
      const read = (): Promise<never> => {
        reads += 1;
        return Promise.reject(Object.assign(new Error('refused'), { code: 'ENGRAM_STORE_INVALID_INPUT' }));
      };
      const retriever = createRetriever({
        store: { searchLexical: read, searchVector: read, revalidate: read },
        embedder: createDeterministicEmbedder(),
        observer: { onRetrieval: (e) => reports.push(e) },
      });
      for (const purpose of RETRIEVAL_PURPOSES) {
        const error = await rejection(retriever.retrieve(purpose, agentId, 'pnpm workspace'));
        expect(isEngramRetrievalError(error)).toBe(true);
        expect((error as { code: string }).code).toBe('ENGRAM_RETRIEVAL_INVALID_INPUT');
        expect((error as Error).message).toBe(`agentId is invalid (${problem}).`);
      }
      // The observer records no execution at all, so diagnostics counts no `storeError` (nor anything else).
      expect(reports).toEqual([]);
      expect(reads).toBe(0);
    },
  );
});

describe('createRetriever outcomes that need no store', () => {
  it('answers `disabled` when both arms are off, reported once, with only the total latency', async () => {
    const reports: RetrievalExecution[] = [];
    let clock = 100;
    const retriever = createRetriever({
      store: unreachable,
      arms: { lexical: false, vector: false },
      observer: { onRetrieval: (e) => reports.push(e) },
      now: () => 1_000,
      monotonicNow: () => {
        clock += 5;
        return clock;
      },
    });
    const response = await retriever.recall('agent', 'anything');
    expect(response.results).toEqual([]);
    expect(response.execution).toEqual({
      purpose: 'recall',
      agentId: 'agent',
      startedAt: 1_000,
      latencies: { total: 5 },
      candidates: { fts: 0, vector: 0, selected: 0 },
      outcome: 'disabled',
      degradations: [],
    });
    expect(reports).toEqual([response.execution]);
    expect(Object.isFrozen(response.execution)).toBe(true);
  });

  it('answers `emptyQuery` and `cancelled` without reading, and an observer failure changes nothing', async () => {
    let calls = 0;
    const retriever = createRetriever({
      store: unreachable,
      observer: {
        onRetrieval: () => {
          calls += 1;
          throw new Error('observer down');
        },
      },
    });
    const empty = await retriever.search('agent', '  ?! ');
    expect(empty.execution.outcome).toBe('emptyQuery');
    expect(Object.keys(empty.execution.latencies).sort()).toEqual(['keyword', 'total']);
    const controller = new AbortController();
    controller.abort();
    const cancelled = await retriever.decision('agent', 'deploy', { signal: controller.signal });
    expect(cancelled.execution.outcome).toBe('cancelled');
    expect(cancelled.execution.latencies).toEqual({ total: expect.any(Number) });
    expect(calls).toBe(2);
  });

  it('reports an unexpected failure as `failed` with `unknown`, never rejecting', async () => {
    const retriever = createRetriever({
      // A malformed answer breaks the pipeline itself (not the store call): the cause is `unknown`.
      store: { ...unreachable, searchLexical: () => Promise.resolve({} as never) },
      arms: { lexical: true, vector: false },
    });
    const response = await retriever.search('agent', 'deploy');
    expect(response.execution.outcome).toBe('failed');
    expect(response.execution.degradations).toEqual(['unknown']);
  });
});

describe('store failures by arm (a store port that fails on purpose)', () => {
  const embedder = createDeterministicEmbedder();
  const row = memoryRecord({ id: 'm1', agentId: 'agent', content: 'deploy notes', contentHash: 'h' });

  const fail = (code: string) => () =>
    Promise.reject(Object.assign(new Error('secret query text'), { code }));
  const working: RetrievalStore = {
    searchLexical: () =>
      Promise.resolve({
        hits: [{ id: 'm1', revision: 1, score: 2 }],
        paths: { words: true, trigram: false, like: false },
        likeTerms: [],
        droppedTerms: 0,
      }),
    searchVector: () => Promise.resolve([{ id: 'm1', distance: 0.2, similarity: 0.8 }]),
    revalidate: () => Promise.resolve([row]),
  };

  it('fails the call with the classified cause when the lexical arm or revalidation cannot read', async () => {
    for (const [store, cause] of [
      [{ ...working, searchLexical: fail('ENGRAM_STORE_BUSY') }, 'storeTimeout'],
      [{ ...working, searchLexical: fail('ENGRAM_STORE_IO') }, 'storeError'],
      [{ ...working, revalidate: fail('ENGRAM_STORE_CORRUPT') }, 'storeUnusable'],
    ] as const) {
      const response = await createRetriever({ store, embedder }).search('agent', 'deploy');
      expect(response.results).toEqual([]);
      expect(response.execution.outcome).toBe('failed');
      expect(response.execution.degradations).toEqual([cause]);
    }
  });

  it('degrades instead of failing when only one arm is unavailable', async () => {
    const noFts = await createRetriever({
      store: { ...working, searchLexical: fail('ENGRAM_STORE_FTS_UNAVAILABLE') },
      embedder,
    }).search('agent', 'deploy');
    expect(noFts.execution).toMatchObject({
      outcome: 'completed',
      degradations: ['ftsUnavailable'],
      arms: ['vector'],
    });
    expect(noFts.results.map((r) => r.record.id)).toEqual(['m1']);
    const busyVector = await createRetriever({
      store: { ...working, searchVector: fail('ENGRAM_STORE_BUSY') },
      embedder,
    }).search('agent', 'deploy');
    expect(busyVector.execution).toMatchObject({
      outcome: 'completed',
      degradations: ['storeTimeout'],
      arms: ['lexical'],
    });
    expect(busyVector.results.map((r) => r.record.id)).toEqual(['m1']);
    expect(JSON.stringify([noFts.execution, busyVector.execution])).not.toContain('secret');
  });
});

describe('the arms run at once (a store port that records the order of its calls)', () => {
  const embedder = createDeterministicEmbedder();
  const row = memoryRecord({ id: 'm1', agentId: 'agent', content: 'deploy notes', contentHash: 'h' });
  const lexicalResult = {
    hits: [{ id: 'm1', revision: 1, score: 2 }],
    paths: { words: true, trigram: false, like: false },
    likeTerms: [],
    droppedTerms: 0,
  };
  const later = <T>(value: () => T): Promise<T> =>
    new Promise((resolve) => setTimeout(() => resolve(value()), 5));

  it('asks for the k-NN before the FTS arm settles, with the same answer', async () => {
    const events: string[] = [];
    const store: RetrievalStore = {
      searchLexical: () => {
        events.push('lexical asked');
        return later(() => {
          events.push('lexical settled');
          return lexicalResult;
        });
      },
      searchVector: () => {
        events.push('vector asked');
        return later(() => [{ id: 'm1', distance: 0.2, similarity: 0.8 }]);
      },
      revalidate: () => Promise.resolve([row]),
    };
    const response = await createRetriever({ store, embedder }).search('agent', 'deploy');
    expect(events.indexOf('vector asked')).toBeGreaterThanOrEqual(0);
    expect(events.indexOf('vector asked')).toBeLessThan(events.indexOf('lexical settled'));
    expect(response.execution).toMatchObject({ outcome: 'completed', arms: ['lexical', 'vector'] });
    expect(response.results.map((r) => r.record.id)).toEqual(['m1']);
  });

  it('fails the call on a lexical failure while the k-NN is in flight, and the k-NN failing after is handled', async () => {
    let vectorSettled = false;
    const store: RetrievalStore = {
      searchLexical: () =>
        Promise.reject(Object.assign(new Error('secret query text'), { code: 'ENGRAM_STORE_IO' })),
      searchVector: () =>
        new Promise((_, reject) =>
          setTimeout(() => {
            vectorSettled = true;
            reject(Object.assign(new Error('secret query text'), { code: 'ENGRAM_STORE_BUSY' }));
          }, 5),
        ),
      revalidate: () => Promise.resolve([row]),
    };
    const response = await createRetriever({ store, embedder }).search('agent', 'deploy');
    expect(response.execution.outcome).toBe('failed');
    expect(response.execution.degradations).toEqual(['storeError']);
    // The in-flight k-NN's rejection settles later without an unhandled rejection (vitest fails the run on one).
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(vectorSettled).toBe(true);
  });
});
