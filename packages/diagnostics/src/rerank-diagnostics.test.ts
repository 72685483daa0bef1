import type { RetrievalExecution } from '@engram/contracts';
import { diagnosticsSnapshotSchema } from '@engram/contracts';
import { describe, expect, it } from 'vitest';
import { createDiagnosticsCollector } from './collector.js';

function execution(overrides: Partial<RetrievalExecution>): RetrievalExecution {
  return {
    purpose: 'search',
    agentId: 'a1',
    startedAt: 1_700_000_000_000,
    latencies: {},
    candidates: { fts: 1, vector: 0, selected: 1 },
    outcome: 'completed',
    degradations: [],
    ...overrides,
  };
}

describe('the rerank stage in diagnostics', () => {
  it('summarises rerank latencies and counts its timeouts and errors like the vector arm degradations', () => {
    const collector = createDiagnosticsCollector();
    const observer = collector.retrievalObserver;
    for (let i = 1; i <= 10; i += 1) {
      observer.onRetrieval(execution({ latencies: { assembly: 1, rerank: 10 * i, total: 10 * i + 5 } }));
    }
    observer.onRetrieval(execution({ degradations: ['rerankTimeout'], latencies: { total: 120 } }));
    observer.onRetrieval(execution({ degradations: ['rerankError', 'vectorCold'], latencies: { total: 3 } }));

    const snapshot = diagnosticsSnapshotSchema.parse(collector.snapshot('a1'));
    const search = snapshot.agent?.retrieval.search;
    expect(search?.latency.rerank).toEqual({ count: 10, total: 10, p50: 50, p95: 100, max: 100 });
    // The other stages keep their own rings.
    expect(search?.latency.assembly).toEqual({ count: 10, total: 10, p50: 1, p95: 1, max: 1 });
    expect(search?.latency.total.count).toBe(12);
    expect(search?.degradations.rerankTimeout).toBe(1);
    expect(search?.degradations.rerankError).toBe(1);
    expect(search?.degradations.vectorCold).toBe(1);
    expect(search?.degradations.unknown).toBe(0);
  });
});
