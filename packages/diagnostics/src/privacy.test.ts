import type {
  CircuitSnapshot,
  DrainBatchReport,
  ExtractionReport,
  MaintenancePassReport,
  RetrievalExecution,
  StoreHealthDto,
} from '@engram/contracts';
import {
  createHealthDto,
  diagnosticsSnapshotAllSchema,
  diagnosticsSnapshotSchema,
  healthDtoSchema,
  processSnapshotSchema,
} from '@engram/contracts';
import { describe, expect, it } from 'vitest';
import { createDiagnosticsCollector } from './collector.js';
import { createCompositeRetrievalObserver } from './compose.js';
import { mergeSnapshots } from './merge.js';

// Every string a careless implementation could copy carries this marker; the snapshot must contain none.
const CANARY = 'CANARY-5e1d';
const canary = (where: string): string => `${CANARY}:${where}`;
const canaryError = (where: string): Error => {
  const error = new Error(canary(`${where}.message`));
  error.stack = canary(`${where}.stack`);
  return Object.assign(error, { code: canary(`${where}.code`), cause: canary(`${where}.cause`) });
};

/** A report with the fields the port declares plus text-bearing extras, cast through unknown. */
function withExtras<T>(report: T, where: string): T {
  return {
    ...report,
    query: canary(`${where}.query`),
    content: canary(`${where}.content`),
    sql: `SELECT * FROM memories WHERE content MATCH '${canary(where)}'`,
    error: canaryError(where),
    vector: Float32Array.from([0.1, 0.2]),
    [canary(`${where}.key`)]: 1,
  } as unknown as T;
}

function retrieval(agentId: string, i: number): RetrievalExecution {
  return withExtras(
    {
      purpose: (['recall', 'search', 'decision', 'injection'] as const)[i % 4] ?? 'search',
      agentId,
      startedAt: 1_000 + i,
      latencies: { keyword: 1, queryEmbedding: 2 + (i % 7), vector: 3, total: 10 + i, [canary('stage')]: 4 },
      candidates: { fts: i % 11, vector: i % 5, selected: 3, ids: [canary('candidate-id')] },
      outcome:
        (['completed', 'completed', 'cancelled', 'failed', 'emptyQuery'] as const)[i % 5] ?? 'completed',
      degradations: ['embeddingTimeout', canary('cause'), 'vectorCold'],
      arms: ['lexical', canary('arm')],
    } as unknown as RetrievalExecution,
    'retrieval',
  );
}

function extraction(agentId: string, i: number): ExtractionReport {
  return withExtras(
    {
      agentId,
      outcome: i % 3 === 0 ? 'failed' : 'completed',
      durationMs: 50 + i,
      candidates: 3,
      decisions: { ADD: 1, UPDATE: 1, SUPERSEDE: 0, NOOP: 1, CHALLENGE: 0, [canary('decision')]: 9 },
      invalidOutputs: 1,
      conflicts: 0,
      modelOutput: canary('model-output'),
    } as unknown as ExtractionReport,
    'extraction',
  );
}

function drain(agentId: string, i: number): DrainBatchReport {
  return withExtras(
    {
      agentId,
      batchSize: 16,
      durationMs: 20 + i,
      transitions: { ready: 15, error: 1, ftsOnly: 0, stale: 0, [canary('transition')]: 3 },
      rowIds: [canary('row-id')],
    } as unknown as DrainBatchReport,
    'drain',
  );
}

function pass(agentId: string, i: number): MaintenancePassReport {
  return withExtras(
    {
      agentId,
      durationMs: 300 + i,
      cheap: { outcome: 'completed', repaired: 1, archived: 2, pruned: 0, note: canary('cheap') },
      heavy: {
        outcome: i % 2 === 0 ? 'completed' : 'skipped',
        modelCalls: 4,
        inputTokens: 2_000,
        invalidOutputs: 1,
        conflicts: canary('conflicts'),
        denials: { challenge: 0, merge: 1, reflection: 0, persona: 0, [canary('step')]: 2 },
        steps: {
          challenge: 'completed',
          merge: canary('step-outcome'),
          reflection: 'skipped',
          persona: 'gated',
        },
        prompt: canary('prompt'),
      },
    } as unknown as MaintenancePassReport,
    'maintenance',
  );
}

const storeHealth: StoreHealthDto = {
  totals: { memories: 3, events: 1, facts: 1, skills: 1 },
  byKind: { event: 1, fact: 1, semantic: 0, episodic: 0, reflection: 0, persona: 0, skill: 1 },
  byLifecycle: { active: 3, archived: 0, superseded: 0, conflicted: 0 },
  byEmbeddingState: { pending: 0, ready: 3, error: 0, ftsOnly: 0 },
};

describe('privacy: snapshots carry numbers, booleans, timestamps and closed enum keys only', () => {
  it('lets no canary from contents, queries, errors, SQL or extra keys reach any serialised snapshot', () => {
    const collector = createDiagnosticsCollector({ maxAgents: 8 });
    const hostile = new Proxy(
      {},
      {
        get() {
          throw canaryError('hostile');
        },
      },
    );
    // A failing observer beside the collector, as a composition root might wire it.
    const retrievalPort = createCompositeRetrievalObserver(
      {
        onRetrieval() {
          throw canaryError('sibling-observer');
        },
      },
      collector.retrievalObserver,
    );
    const agents = ['agent-1', 'agent-2', 'agent-3', 'agent-4', 'agent-5', 'agent-6'];

    for (let i = 0; i < 600; i += 1) {
      const agentId = agents[i % agents.length] ?? 'agent-1';
      retrievalPort.onRetrieval(retrieval(agentId, i));
      collector.maintenanceObserver.onExtraction?.(extraction(agentId, i));
      collector.maintenanceObserver.onDrainBatch?.(drain(agentId, i));
      if (i % 10 === 0) collector.maintenanceObserver.onMaintenancePass?.(pass(agentId, i));
    }
    // Text where numbers belong, unknown enum values, over-long ids, hostile objects.
    retrievalPort.onRetrieval({
      ...retrieval('agent-1', 1),
      purpose: canary('purpose'),
    } as RetrievalExecution);
    retrievalPort.onRetrieval({
      ...retrieval('agent-1', 1),
      outcome: canary('outcome'),
    } as RetrievalExecution);
    retrievalPort.onRetrieval(retrieval(`${CANARY}${'x'.repeat(300)}`, 1));
    retrievalPort.onRetrieval(hostile as RetrievalExecution);
    collector.maintenanceObserver.onExtraction?.({
      ...extraction('agent-2', 1),
      durationMs: canary('duration') as unknown as number,
      candidates: canary('count') as unknown as number,
    });
    collector.maintenanceObserver.onMaintenancePass?.(hostile as MaintenancePassReport);
    collector.maintenanceObserver.onExtractionQueue?.(
      withExtras({ depth: 4, oldestAgeMs: 1_200 }, 'extraction-queue'),
    );
    collector.maintenanceObserver.onExtractionQueue?.({ depth: canary('depth'), oldestAgeMs: 1 } as never);
    collector.maintenanceObserver.onEmbeddingBacklog?.(withExtras({ total: 90, activeAgents: 3 }, 'backlog'));
    collector.providerObserver.onQueue?.(
      withExtras({ kind: 'model' as const, queued: 2, active: 1 }, 'queue'),
    );
    collector.providerObserver.onQueue?.({ kind: canary('kind'), queued: 1, active: 1 } as never);
    collector.providerObserver.onAdmission?.('model', 'admitted');
    collector.providerObserver.onAdmission?.('model', canary('admission') as never);
    collector.providerObserver.onRace?.(canary('kind') as never, 'deadline');
    collector.providerObserver.onRace?.('embedding', 'aborted');
    collector.storeObserver.onStatement?.('read');
    collector.storeObserver.onStatement?.(`SELECT '${canary('statement')}'` as never);
    collector.storeObserver.onVectorStores?.(withExtras({ openStores: 1, leases: 2 }, 'vector-stores'));
    collector.storeObserver.onVectorWarmup?.('cold');
    collector.storeObserver.onVectorWarmup?.(canary('warmup') as never);
    collector.retrievalObserver.onCircuitState?.(
      withExtras<CircuitSnapshot>(
        { state: 'open', failures: 5, opened: 1, halfOpenProbes: 0, rejected: 2 },
        'circuit',
      ),
    );
    collector.retrievalObserver.onCircuitState?.({ state: canary('state') } as never);

    const snapshots = [
      collector.snapshot(),
      ...collector.listAgents().map((agentId) => collector.snapshot(agentId)),
      collector.snapshot('agent-unknown'),
    ];
    const all = collector.snapshotAll();
    const health = createHealthDto(withExtras(storeHealth, 'store-health'), collector.snapshot('agent-6'));
    const serialised = [
      ...snapshots.map((s) => JSON.stringify(s)),
      JSON.stringify(all),
      JSON.stringify(health),
      JSON.stringify(collector.listAgents()),
    ];
    for (const json of serialised) {
      expect(json).not.toMatch(/canary/i);
      expect(json).not.toMatch(/SELECT|MATCH|stack|message/);
    }
    for (const snapshot of snapshots) diagnosticsSnapshotSchema.parse(snapshot);
    diagnosticsSnapshotAllSchema.parse(all);
    healthDtoSchema.parse(health);

    // The workload really was recorded (this test cannot pass on an empty collector).
    const merged = snapshots[0];
    expect(merged?.agent.retrieval.search.operations).toBeGreaterThan(0);
    expect(merged?.agent.extraction.decisions.ADD).toBeGreaterThan(0);
    expect(merged?.agent.embedding.transitions.ready).toBeGreaterThan(0);
    expect(merged?.agent.maintenance.heavy.denials.merge).toBeGreaterThan(0);
    expect(merged?.agent.maintenance.heavy.invalidOutputs).toBeGreaterThan(0);
    expect(merged?.agent.retrieval.recall.arms.lexical).toBeGreaterThan(0);
    expect(merged?.process.queryEmbeddingCircuit.state.open).toBe(true);
    expect(merged?.process.extractionQueue.depth).toBe(4);
    expect(merged?.process.collector.recordsRejected).toBeGreaterThan(0);
    expect(merged?.process.collector.observerFailures).toBe(2);
    expect(all.agents.map((a) => a.agentId)).toEqual([
      'agent-2',
      'agent-6',
      'agent-5',
      'agent-4',
      'agent-3',
      'agent-1',
    ]);
  });

  it('publishes, merges and serves process snapshots of numbers, booleans, null and enum keys only', () => {
    // Two processes' collectors fed hostile reports; each publishes its whole-process snapshot, the page
    // serves them listed and merged.
    const published = [0, 1].map((p) => {
      const collector = createDiagnosticsCollector({ maxAgents: 4 });
      for (let i = 0; i < 120; i += 1) {
        const agentId = `agent-${(i + p) % 3}`;
        collector.retrievalObserver.onRetrieval(retrieval(agentId, i));
        collector.maintenanceObserver.onExtraction?.(extraction(agentId, i));
        collector.maintenanceObserver.onDrainBatch?.(drain(agentId, i));
        if (i % 10 === 0) collector.maintenanceObserver.onMaintenancePass?.(pass(agentId, i));
      }
      collector.maintenanceObserver.onExtractionQueue?.(
        withExtras({ depth: 2 + p, oldestAgeMs: 5 }, 'queue'),
      );
      collector.storeObserver.onStatement?.(`SELECT '${canary('statement')}'` as never);
      return collector.snapshot();
    });
    const totals = mergeSnapshots(published, 5_000);
    const dto = createHealthDto(withExtras(storeHealth, 'store-health'), totals, {
      list: published.map((runtime, i) => ({
        id: String(i).repeat(32),
        self: i === 0,
        startedAt: 1_000 + i,
        beatAt: 2_000 + i,
        runtime,
      })),
      skipped: 0,
    });
    /** Every leaf a number, boolean or null; every key an identifier (the process ids are the only strings). */
    const contentFree = (value: unknown, path: string): void => {
      if (value === null || typeof value === 'number' || typeof value === 'boolean') return;
      expect(typeof value, path).toBe('object');
      for (const [key, inner] of Object.entries(value as object)) {
        expect(key, path).toMatch(/^[A-Za-z][A-Za-z0-9_]{0,63}$/);
        contentFree(inner, `${path}.${key}`);
      }
    };
    for (const snapshot of [...published, totals]) {
      processSnapshotSchema.parse(snapshot);
      contentFree(JSON.parse(JSON.stringify(snapshot)), 'snapshot');
    }
    const served = JSON.stringify(healthDtoSchema.parse(JSON.parse(JSON.stringify(dto))));
    expect(served).not.toMatch(/canary/i);
    expect(served).not.toMatch(/SELECT|MATCH|stack|message/);
    // The figures are really there: summed across the processes, the queue depths added up.
    expect(totals.agent.retrieval.search.operations).toBe(
      (published[0]?.agent.retrieval.search.operations ?? 0) +
        (published[1]?.agent.retrieval.search.operations ?? 0),
    );
    expect(totals.agent.retrieval.search.operations).toBeGreaterThan(0);
    expect(totals.process.extractionQueue.depth).toBe(5);
  });
});
