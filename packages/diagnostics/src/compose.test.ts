import type {
  MaintenanceObserver,
  ProviderObserver,
  RetrievalExecution,
  RetrievalObserver,
  StoreObserver,
} from '@engram/contracts';
import { describe, expect, it } from 'vitest';
import { createDiagnosticsCollector } from './collector.js';
import {
  createCompositeMaintenanceObserver,
  createCompositeProviderObserver,
  createCompositeRetrievalObserver,
  createCompositeStoreObserver,
} from './compose.js';

const execution: RetrievalExecution = {
  purpose: 'decision',
  agentId: 'agent-1',
  startedAt: 0,
  latencies: { total: 3 },
  candidates: { fts: 1, vector: 1, selected: 1 },
  outcome: 'completed',
  degradations: [],
};

describe('composite observers', () => {
  it('forwards each call to every member, in order, even when an earlier member throws', () => {
    const calls: string[] = [];
    const throwing: RetrievalObserver = {
      onRetrieval() {
        calls.push('throwing');
        throw new Error('member failed');
      },
      onCircuitState() {
        throw new Error('member failed');
      },
    };
    const collector = createDiagnosticsCollector();
    const recording: RetrievalObserver = { onRetrieval: () => void calls.push('recording') };
    const composite = createCompositeRetrievalObserver(throwing, collector.retrievalObserver, recording);

    expect(() => composite.onRetrieval(execution)).not.toThrow();
    expect(() =>
      composite.onCircuitState?.({
        state: 'halfOpen',
        failures: 3,
        opened: 1,
        halfOpenProbes: 1,
        rejected: 0,
      }),
    ).not.toThrow();
    expect(calls).toEqual(['throwing', 'recording']);
    const snapshot = collector.snapshot('agent-1');
    expect(snapshot.agent.retrieval.decision.operations).toBe(1);
    expect(snapshot.process.queryEmbeddingCircuit.state.halfOpen).toBe(true);
    // The failing member is isolated by the composite: the collector itself did not fail.
    expect(snapshot.process.collector.observerFailures).toBe(0);
  });

  it('swallows a rejected promise of an async member instead of leaking an unhandled rejection', async () => {
    let rejections = 0;
    const onUnhandled = (): void => {
      rejections += 1;
    };
    process.on('unhandledRejection', onUnhandled);
    try {
      const asyncMember = {
        onStatement: async (): Promise<void> => {
          throw new Error('async member failed');
        },
      } as unknown as StoreObserver;
      const collector = createDiagnosticsCollector();
      const composite = createCompositeStoreObserver(asyncMember, collector.storeObserver);
      composite.onStatement?.('write');
      // Let the rejection settle (microtasks and one macrotask), then check nothing leaked.
      await new Promise<void>((resolve) => setImmediate(resolve));
      expect(rejections).toBe(0);
      expect(collector.snapshot().process.store.statements.write).toBe(1);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  it('tolerates members without the optional method and members whose method is not a function', () => {
    const collector = createDiagnosticsCollector();
    const odd = { onQueue: 'not a function' } as unknown as ProviderObserver;
    const composite = createCompositeProviderObserver({}, odd, collector.providerObserver);
    composite.onQueue?.({ kind: 'embedding', queued: 2, active: 1 });
    composite.onAdmission?.('embedding', 'admitted');
    composite.onRace?.('embedding', 'aborted');
    const provider = collector.snapshot().process.providers.embedding;
    expect(provider.queued).toBe(2);
    expect(provider.admissions.admitted).toBe(1);
    expect(provider.races.aborted).toBe(1);
  });

  it('fans out every maintenance method', () => {
    const a = createDiagnosticsCollector();
    const b = createDiagnosticsCollector();
    const composite: MaintenanceObserver = createCompositeMaintenanceObserver(
      a.maintenanceObserver,
      b.maintenanceObserver,
    );
    composite.onExtractionQueue?.({ depth: 3, oldestAgeMs: 10 });
    composite.onEmbeddingBacklog?.({ total: 5, activeAgents: 1 });
    composite.onDrainBatch?.({
      agentId: 'x',
      batchSize: 2,
      durationMs: 1,
      transitions: { ready: 2, error: 0, ftsOnly: 0, stale: 0 },
    });
    for (const collector of [a, b]) {
      const snapshot = collector.snapshot('x');
      expect(snapshot.process.extractionQueue.depth).toBe(3);
      expect(snapshot.process.embeddingBacklog.total).toBe(5);
      expect(snapshot.agent.embedding.transitions.ready).toBe(2);
    }
  });
});
