import { diagnosticsSnapshotAllSchema, diagnosticsSnapshotSchema } from '@engram/contracts';
import { describe, expect, it } from 'vitest';
import { createDiagnosticsCollector } from './collector.js';

describe('snapshot assembly', () => {
  it('parses a live snapshot after a JSON round trip (the health endpoint path)', () => {
    const collector = createDiagnosticsCollector();
    collector.retrievalObserver.onRetrieval({
      purpose: 'recall',
      agentId: 'a',
      startedAt: 0,
      latencies: { total: 4 },
      candidates: { fts: 1, vector: 0, selected: 1 },
      outcome: 'completed',
      degradations: ['vectorCold'],
    });
    const wire = JSON.parse(JSON.stringify(collector.snapshot('a'))) as unknown;
    expect(diagnosticsSnapshotSchema.parse(wire).agent.retrieval.recall.degradations.vectorCold).toBe(1);
    const all = JSON.parse(JSON.stringify(collector.snapshotAll())) as unknown;
    expect(diagnosticsSnapshotAllSchema.parse(all).agents).toHaveLength(1);
  });
});
