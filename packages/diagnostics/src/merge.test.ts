import { diagnosticsSnapshotSchema } from '@engram/contracts';
import { describe, expect, it } from 'vitest';
import { createDiagnosticsCollector } from './collector.js';
import { mergeSnapshots } from './merge.js';

/** A process that ran `searches` searches of `ms` each, at clock `at`, with a circuit report when asked. */
function processSnapshot(searches: number, ms: number, at: number, circuit?: 'open' | 'closed') {
  const collector = createDiagnosticsCollector({ now: () => at });
  for (let i = 0; i < searches; i += 1) {
    collector.retrievalObserver.onRetrieval({
      purpose: 'search',
      agentId: 'coder',
      startedAt: at,
      latencies: { keyword: 1, total: ms },
      candidates: { fts: 2, vector: 0, selected: 1 },
      outcome: 'completed',
      degradations: ['vectorCold'],
      arms: ['lexical'],
    });
  }
  if (circuit !== undefined) {
    collector.retrievalObserver.onCircuitState?.({
      state: circuit,
      failures: circuit === 'open' ? 5 : 0,
      opened: 1,
      halfOpenProbes: 0,
      rejected: 0,
    });
  }
  return collector.snapshot();
}

describe('mergeSnapshots: the totals of several processes', () => {
  it('sums counters, keeps the highest percentile and the widest time span, and the latest circuit', () => {
    const a = processSnapshot(3, 10, 1_000, 'open');
    const b = processSnapshot(2, 40, 2_000, 'closed');
    const merged = mergeSnapshots([a, b], 9_000);
    expect(diagnosticsSnapshotSchema.parse(merged)).toEqual(merged);
    const search = merged.agent.retrieval.search;
    expect(search.operations).toBe(5);
    expect(search.degradations.vectorCold).toBe(5);
    expect(search.latency.total).toMatchObject({ count: 5, total: 5, p50: 40, p95: 40, max: 40 });
    expect(merged.agent.firstSeenAt).toBe(1_000);
    expect(merged.agent.lastSeenAt).toBe(2_000);
    expect(merged.agent.tracked).toBe(true);
    // The circuit reported last (process b's, closed) stands; it is not added up with a's.
    expect(merged.process.queryEmbeddingCircuit.state).toEqual({
      closed: true,
      open: false,
      halfOpen: false,
    });
    expect(merged.process.queryEmbeddingCircuit.failures).toBe(0);
    expect(merged.process.collector.maxAgents).toBe(a.process.collector.maxAgents);
    // A gauge no process reported stays null; the merged snapshot is generated now, for all agents.
    expect(merged.process.extractionQueue.depth).toBeNull();
    expect(merged.generatedAt).toBe(9_000);
    expect(merged.agentId).toBeNull();
  });

  it('of no process is the empty snapshot', () => {
    const merged = mergeSnapshots([], 5);
    expect(merged.agent.tracked).toBe(false);
    expect(merged.agent.retrieval.search.operations).toBe(0);
    expect(merged.agent.retrieval.search.latency.total.p50).toBeNull();
    expect(merged.process.collector.maxAgents).toBe(64);
  });
});
