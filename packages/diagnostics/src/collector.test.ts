import type {
  DrainBatchReport,
  ExtractionReport,
  MaintenancePassReport,
  RetrievalExecution,
} from '@engram/contracts';
import {
  createEmptyAgentDiagnostics,
  type DiagnosticsSnapshot,
  diagnosticsSnapshotSchema,
} from '@engram/contracts';
import { describe, expect, it } from 'vitest';
import { createDiagnosticsCollector, MemoryDiagnosticsCollector } from './collector.js';
import { isEngramDiagnosticsError } from './errors.js';

const HOUR = 60 * 60 * 1000;
const DAY = 24 * HOUR;

/** A settable clock: tests never sleep. */
function manualClock(start = 1_700_000_000_000): {
  now: () => number;
  advance: (ms: number) => void;
  set: (ms: number) => void;
} {
  let time = start;
  return {
    now: () => time,
    advance: (ms) => {
      time += ms;
    },
    set: (ms) => {
      time = ms;
    },
  };
}

function execution(agentId: string, overrides: Partial<RetrievalExecution> = {}): RetrievalExecution {
  return {
    purpose: 'search',
    agentId,
    startedAt: 1_000,
    latencies: {
      keyword: 1,
      queryEmbedding: 4,
      vector: 3,
      authoritativeRevalidation: 2,
      assembly: 1,
      total: 11,
    },
    candidates: { fts: 20, vector: 15, selected: 5 },
    outcome: 'completed',
    degradations: [],
    ...overrides,
  };
}

function extraction(agentId: string, overrides: Partial<ExtractionReport> = {}): ExtractionReport {
  return {
    agentId,
    outcome: 'completed',
    durationMs: 120,
    candidates: 4,
    decisions: { ADD: 2, UPDATE: 1, SUPERSEDE: 0, NOOP: 1, CHALLENGE: 0 },
    invalidOutputs: 1,
    conflicts: 1,
    ...overrides,
  };
}

function drainBatch(agentId: string, overrides: Partial<DrainBatchReport> = {}): DrainBatchReport {
  return {
    agentId,
    batchSize: 32,
    durationMs: 40,
    transitions: { ready: 30, error: 1, ftsOnly: 0, stale: 1 },
    ...overrides,
  };
}

function maintenancePass(agentId: string): MaintenancePassReport {
  return {
    agentId,
    durationMs: 900,
    cheap: { outcome: 'completed', repaired: 2, archived: 3, pruned: 1 },
    heavy: {
      outcome: 'completed',
      modelCalls: 8,
      inputTokens: 12_000,
      invalidOutputs: 2,
      conflicts: 1,
      denials: { challenge: 1, merge: 0, reflection: 0, persona: 0 },
      steps: { challenge: 'completed', merge: 'completed', reflection: 'skipped', persona: 'failed' },
    },
  };
}

function parse(snapshot: DiagnosticsSnapshot): DiagnosticsSnapshot {
  return diagnosticsSnapshotSchema.parse(snapshot);
}

describe('recording retrievals', () => {
  it('counts operations, outcomes and degradations per purpose and summarises stages and candidates', () => {
    const collector = createDiagnosticsCollector({ now: manualClock().now });
    const observer = collector.retrievalObserver;
    for (let i = 1; i <= 20; i += 1) {
      observer.onRetrieval(
        execution('a1', {
          latencies: { keyword: i, total: 10 * i },
          candidates: { fts: i, vector: 0, selected: 1 },
        }),
      );
    }
    observer.onRetrieval(
      execution('a1', {
        purpose: 'recall',
        outcome: 'completed',
        // A set: the duplicate counts once.
        degradations: ['embeddingTimeout', 'embeddingTimeout', 'vectorCold'],
        latencies: { keyword: 2, total: 7 },
        arms: ['lexical', 'lexical'],
      }),
    );
    observer.onRetrieval(execution('a1', { purpose: 'recall', arms: ['lexical', 'vector'], latencies: {} }));
    observer.onRetrieval(execution('a1', { purpose: 'recall', outcome: 'cancelled', latencies: {} }));

    const snapshot = parse(collector.snapshot('a1'));
    const search = snapshot.agent.retrieval.search;
    expect(search.operations).toBe(20);
    expect(search.outcomes).toEqual({ completed: 20, disabled: 0, emptyQuery: 0, cancelled: 0, failed: 0 });
    expect(search.latency.keyword).toEqual({ count: 20, total: 20, p50: 10, p95: 19, max: 20 });
    expect(search.latency.total).toEqual({ count: 20, total: 20, p50: 100, p95: 190, max: 200 });
    // Stages that did not run stay empty: null, never 0.
    expect(search.latency.vector).toEqual({ count: 0, total: 0, p50: null, p95: null, max: null });
    expect(search.candidates.fts.max).toBe(20);
    expect(search.candidates.vector).toEqual({ count: 20, total: 20, p50: 0, p95: 0, max: 0 });

    const recall = snapshot.agent.retrieval.recall;
    expect(recall.operations).toBe(3);
    expect(recall.outcomes.completed).toBe(2);
    // One FTS-only call and one hybrid call; a call without `arms` (no arm ran) adds nothing.
    expect(recall.arms).toEqual({ lexical: 2, vector: 1 });
    expect(search.arms).toEqual({ lexical: 0, vector: 0 });
    expect(recall.outcomes.cancelled).toBe(1);
    expect(recall.degradations.embeddingTimeout).toBe(1);
    expect(recall.degradations.vectorCold).toBe(1);
    expect(recall.degradations.unknown).toBe(0);
    expect(recall.latency.total).toEqual({ count: 1, total: 1, p50: 7, p95: 7, max: 7 });
    expect(snapshot.agent.retrieval.decision.operations).toBe(0);
    expect(snapshot.agent.tracked).toBe(true);
  });

  it('rejects non-finite and negative values and unknown enum values, counting them, without creating keys', () => {
    const collector = createDiagnosticsCollector();
    const observer = collector.retrievalObserver;
    observer.onRetrieval(
      execution('a1', {
        latencies: { keyword: Number.NaN, vector: -3, total: Number.POSITIVE_INFINITY, assembly: 2 },
        candidates: { fts: -1, vector: 2, selected: 1 },
      }),
    );
    observer.onRetrieval({ ...execution('a1'), purpose: 'bogus' } as unknown as RetrievalExecution);
    observer.onRetrieval({ ...execution('a1'), outcome: 'weird' } as unknown as RetrievalExecution);
    observer.onRetrieval({ ...execution('a1'), degradations: ['nope'] } as unknown as RetrievalExecution);
    observer.onRetrieval({ ...execution('a1'), arms: ['bm25'] } as unknown as RetrievalExecution);
    observer.onRetrieval(execution(''));

    const snapshot = parse(collector.snapshot('a1'));
    // 4 bad values + bad purpose + bad outcome + bad cause + bad arm + empty agent id.
    expect(snapshot.process.collector.recordsRejected).toBe(9);
    expect(snapshot.process.collector.observerFailures).toBe(0);
    const search = snapshot.agent.retrieval.search;
    expect(search.operations).toBe(3);
    expect(search.arms).toEqual({ lexical: 0, vector: 0 });
    // The two later valid records carry every stage; the first only its one valid latency (assembly).
    expect(search.latency.keyword.count).toBe(2);
    expect(search.latency.vector.count).toBe(2);
    expect(search.latency.total.count).toBe(2);
    expect(search.latency.assembly.count).toBe(3);
    expect(search.candidates.fts.count).toBe(2);
    expect(Object.keys(snapshot.agent.retrieval)).toEqual(['recall', 'search', 'decision', 'injection']);
    expect(snapshot.process.collector.agentsTracked).toBe(1);
  });
});

describe('recording retrievals across snapshots', () => {
  it('keeps counting after a snapshot and drops a stage or candidate value that is not a number', () => {
    const collector = createDiagnosticsCollector({ now: manualClock().now });
    const observer = collector.retrievalObserver;
    observer.onRetrieval(execution('a1', { arms: ['vector'], degradations: ['vectorCold'] }));
    expect(parse(collector.snapshot('a1')).agent.retrieval.search.arms).toEqual({ lexical: 0, vector: 1 });
    observer.onRetrieval(execution('a1', { arms: ['lexical', 'vector'], outcome: 'failed' }));
    observer.onRetrieval({
      ...execution('a1', { latencies: { keyword: 3 } }),
      latencies: { keyword: '5', vector: null, total: 4 },
      candidates: { fts: '2', selected: 1 },
    } as unknown as RetrievalExecution);
    const snapshot = parse(collector.snapshot('a1'));
    const search = snapshot.agent.retrieval.search;
    expect(search.operations).toBe(3);
    expect(search.arms).toEqual({ lexical: 1, vector: 2 });
    expect(search.outcomes.failed).toBe(1);
    expect(search.outcomes.completed).toBe(2);
    expect(search.degradations.vectorCold).toBe(1);
    // '5', null and '2' are refused and counted (the first two records carry every stage); 4 and 1 are kept.
    expect(snapshot.process.collector.recordsRejected).toBe(3);
    expect(search.latency.keyword.count).toBe(2);
    expect(search.latency.vector.count).toBe(2);
    expect(search.latency.total).toMatchObject({ count: 3, p50: 11, max: 11 });
    expect(search.latency.total.total).toBe(3);
    expect(search.candidates.fts.count).toBe(2);
    expect(search.candidates.selected).toMatchObject({ count: 3, max: 5 });
  });
});

describe('recording background work', () => {
  it('records extraction, drain batches and maintenance passes per agent', () => {
    const collector = createDiagnosticsCollector();
    collector.maintenanceObserver.onExtraction?.(extraction('a1'));
    collector.maintenanceObserver.onExtraction?.(extraction('a1', { outcome: 'skipped', durationMs: 0 }));
    collector.maintenanceObserver.onDrainBatch?.(drainBatch('a1'));
    collector.maintenanceObserver.onDrainBatch?.(drainBatch('a1', { batchSize: 8, durationMs: 10 }));
    collector.maintenanceObserver.onMaintenancePass?.(maintenancePass('a1'));

    const { agent } = parse(collector.snapshot('a1'));
    expect(agent.extraction.chunks).toBe(2);
    expect(agent.extraction.outcomes).toEqual({ completed: 1, cancelled: 0, failed: 0, skipped: 1 });
    expect(agent.extraction.decisions).toEqual({ ADD: 4, UPDATE: 2, SUPERSEDE: 0, NOOP: 2, CHALLENGE: 0 });
    expect(agent.extraction.candidates).toBe(8);
    expect(agent.extraction.invalidOutputs).toBe(2);
    expect(agent.extraction.conflicts).toBe(2);
    // The skipped chunk did no work: it is counted, but its 0 ms is not a duration sample.
    expect(agent.extraction.duration).toEqual({ count: 1, total: 1, p50: 120, p95: 120, max: 120 });

    expect(agent.embedding.batches).toBe(2);
    expect(agent.embedding.rows).toBe(40);
    expect(agent.embedding.transitions).toEqual({ ready: 60, error: 2, ftsOnly: 0, stale: 2 });
    expect(agent.embedding.batchSize).toEqual({ count: 2, total: 2, p50: 8, p95: 32, max: 32 });

    expect(agent.maintenance.passes).toBe(1);
    expect(agent.maintenance.cheap).toEqual({
      outcomes: { completed: 1, skipped: 0, gated: 0, failed: 0, cancelled: 0 },
      repaired: 2,
      archived: 3,
      pruned: 1,
    });
    expect(agent.maintenance.heavy.modelCalls).toBe(8);
    expect(agent.maintenance.heavy.inputTokens).toBe(12_000);
    expect(agent.maintenance.heavy.invalidOutputs).toBe(2);
    expect(agent.maintenance.heavy.conflicts).toBe(1);
    expect(agent.maintenance.heavy.denials).toEqual({ challenge: 1, merge: 0, reflection: 0, persona: 0 });
    expect(agent.maintenance.heavy.steps.persona).toEqual({
      completed: 0,
      skipped: 0,
      gated: 0,
      failed: 1,
      cancelled: 0,
    });
    expect(agent.maintenance.heavy.steps.reflection.skipped).toBe(1);
    expect(agent.maintenance.duration.max).toBe(900);
  });

  it('counts invalid model answers by schema name, ignoring any other key', () => {
    const collector = createDiagnosticsCollector();
    const pass = maintenancePass('a1');
    const withSchemas = {
      ...pass,
      heavy: { ...pass.heavy, invalidBySchema: { memory_merge: 1, memory_persona: 1, 'SECRET-NAME': 5 } },
    } as MaintenancePassReport;
    collector.maintenanceObserver.onMaintenancePass?.(withSchemas);
    collector.maintenanceObserver.onMaintenancePass?.(withSchemas);
    const snapshot = parse(collector.snapshot('a1'));
    expect(snapshot.agent.maintenance.heavy.invalidBySchema).toEqual({
      memory_candidates: 0,
      memory_decision: 0,
      memory_challenge: 0,
      memory_merge: 2,
      memory_reflection: 0,
      memory_persona: 2,
    });
    expect(JSON.stringify(snapshot)).not.toContain('SECRET');
  });
});

describe('zero-filled snapshots', () => {
  it('gives an unknown agent an empty agent part and the live process part', () => {
    const collector = createDiagnosticsCollector();
    collector.storeObserver.onStatement?.('read');
    collector.retrievalObserver.onRetrieval(execution('known'));
    const snapshot = parse(collector.snapshot('stranger'));
    expect(snapshot.agentId).toBe('stranger');
    expect(snapshot.agent).toEqual(createEmptyAgentDiagnostics());
    expect(snapshot.process.store.statements.read).toBe(1);
    expect(snapshot.process.collector.agentsTracked).toBe(1);
  });

  it('fills every enum-keyed record in an empty and in a populated snapshot alike', () => {
    const collector = createDiagnosticsCollector();
    const empty = parse(collector.snapshot());
    collector.retrievalObserver.onRetrieval(execution('a1', { degradations: ['unknown'] }));
    collector.maintenanceObserver.onMaintenancePass?.(maintenancePass('a1'));
    collector.providerObserver.onAdmission?.('model', 'rateLimited');
    const populated = parse(collector.snapshot('a1'));

    const keyShape = (value: unknown): unknown => {
      if (value === null || typeof value !== 'object') return 'leaf';
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, keyShape(v)]));
    };
    expect(keyShape(populated)).toEqual(keyShape(empty));
    expect(Object.keys(populated.process.providers.embedding.admissions)).toEqual([
      'admitted',
      'rateLimited',
      'capacityRejected',
    ]);
    expect(populated.process.providers.embedding.admissions.rateLimited).toBe(0);
    expect(populated.process.providers.model.admissions.rateLimited).toBe(1);
  });

  it('merges every tracked agent when no agent id is given', () => {
    const collector = createDiagnosticsCollector();
    collector.retrievalObserver.onRetrieval(execution('a1', { latencies: { total: 5 } }));
    collector.retrievalObserver.onRetrieval(execution('a2', { latencies: { total: 50 } }));
    collector.maintenanceObserver.onDrainBatch?.(drainBatch('a2'));
    const all = parse(collector.snapshot());
    expect(all.agentId).toBeNull();
    expect(all.agent.tracked).toBe(true);
    expect(all.agent.retrieval.search.operations).toBe(2);
    expect(all.agent.retrieval.search.latency.total).toEqual({
      count: 2,
      total: 2,
      p50: 5,
      p95: 50,
      max: 50,
    });
    expect(all.agent.embedding.batches).toBe(1);
    expect(parse(createDiagnosticsCollector().snapshot()).agent.tracked).toBe(false);
  });
});

describe('agent LRU', () => {
  it('evicts the least recently used agent when full; touching moves an agent to the back', () => {
    const collector = createDiagnosticsCollector({ maxAgents: 3 });
    const record = (id: string): void => collector.retrievalObserver.onRetrieval(execution(id));
    record('a');
    record('b');
    record('c');
    record('a'); // a is now the most recent; b is the least recent
    expect(collector.listAgents()).toEqual(['a', 'c', 'b']);
    record('d');
    expect(collector.listAgents()).toEqual(['d', 'a', 'c']);
    const snapshot = parse(collector.snapshot('b'));
    expect(snapshot.agent.tracked).toBe(false);
    expect(snapshot.process.collector.agentsEvicted).toBe(1);
    expect(snapshot.process.collector.agentsTracked).toBe(3);
    // The survivor kept its figures.
    expect(parse(collector.snapshot('a')).agent.retrieval.search.operations).toBe(2);
  });

  it('lists every tracked agent, most recent first, in snapshotAll', () => {
    const collector = createDiagnosticsCollector({ maxAgents: 2 });
    collector.retrievalObserver.onRetrieval(execution('x'));
    collector.maintenanceObserver.onExtraction?.(extraction('y'));
    const all = collector.snapshotAll();
    expect(all.agents.map((a) => a.agentId)).toEqual(['y', 'x']);
    expect(all.agents[0]?.agent.extraction.chunks).toBe(1);
    expect(all.agents[1]?.agent.retrieval.search.operations).toBe(1);
  });

  it('never moves a process gauge when an agent is evicted', () => {
    const collector = createDiagnosticsCollector({ maxAgents: 1 });
    collector.maintenanceObserver.onExtractionQueue?.({ depth: 7, oldestAgeMs: 1_500 });
    collector.maintenanceObserver.onEmbeddingBacklog?.({ total: 120, activeAgents: 3 });
    collector.storeObserver.onVectorStores?.({ openStores: 2, leases: 5 });
    collector.providerObserver.onQueue?.({ kind: 'embedding', queued: 4, active: 2 });
    const before = parse(collector.snapshot()).process;
    for (const id of ['a', 'b', 'c', 'd']) collector.retrievalObserver.onRetrieval(execution(id));
    const after = parse(collector.snapshot()).process;
    expect(after.collector.agentsEvicted).toBe(3);
    expect(after.extractionQueue).toEqual(before.extractionQueue);
    expect(after.embeddingBacklog).toEqual(before.embeddingBacklog);
    expect(after.vectorStores).toEqual(before.vectorStores);
    expect(after.providers).toEqual(before.providers);
  });
});

describe('agent TTL', () => {
  it('sweeps idle agents on snapshot, never on the record path while there is room', () => {
    const clock = manualClock(0);
    const collector = createDiagnosticsCollector({ maxAgents: 4, agentTtlMs: DAY, now: clock.now });
    collector.retrievalObserver.onRetrieval(execution('old'));
    clock.set(DAY);
    // `old` is past its TTL, but recording another agent with room to spare must not sweep it.
    collector.retrievalObserver.onRetrieval(execution('fresh'));
    // Rewinding the clock makes `old` young again: it is still listed only if the record path left it alone.
    clock.set(1);
    expect(collector.listAgents()).toEqual(['fresh', 'old']);
    clock.set(DAY);
    const all = collector.snapshotAll(); // a snapshot sweeps
    expect(all.agents.map((a) => a.agentId)).toEqual(['fresh']);
    expect(all.process.collector.agentsExpired).toBe(1);
    expect(all.process.collector.agentsEvicted).toBe(0);
  });

  it('keeps an agent idle for less than the TTL', () => {
    const clock = manualClock();
    const collector = createDiagnosticsCollector({ agentTtlMs: DAY, now: clock.now });
    collector.retrievalObserver.onRetrieval(execution('a'));
    clock.advance(DAY - 1);
    expect(collector.listAgents()).toEqual(['a']);
    expect(collector.cleanup()).toBe(0);
    clock.advance(1);
    expect(collector.cleanup()).toBe(1);
    expect(collector.listAgents()).toEqual([]);
  });

  it('sweeps expired agents before evicting when full, so a live agent survives', () => {
    const clock = manualClock();
    const full = createDiagnosticsCollector({ maxAgents: 2, agentTtlMs: HOUR, now: clock.now });
    full.retrievalObserver.onRetrieval(execution('stale'));
    clock.advance(HOUR / 2);
    full.retrievalObserver.onRetrieval(execution('recent'));
    clock.advance(HOUR / 2);
    // Table full: `stale` (idle one hour) is swept, `recent` (idle half an hour) is kept, nothing is evicted.
    full.retrievalObserver.onRetrieval(execution('new'));
    const snapshot = full.snapshotAll();
    expect(snapshot.agents.map((a) => a.agentId)).toEqual(['new', 'recent']);
    expect(snapshot.process.collector.agentsExpired).toBe(1);
    expect(snapshot.process.collector.agentsEvicted).toBe(0);
  });

  it('starts an agent afresh when it records again after its TTL', () => {
    const clock = manualClock();
    const collector = createDiagnosticsCollector({ agentTtlMs: HOUR, now: clock.now });
    collector.retrievalObserver.onRetrieval(execution('a'));
    clock.advance(HOUR);
    collector.retrievalObserver.onRetrieval(execution('a'));
    const snapshot = parse(collector.snapshot('a'));
    expect(snapshot.agent.retrieval.search.operations).toBe(1);
    expect(snapshot.agent.firstSeenAt).toBe(snapshot.agent.lastSeenAt);
    expect(snapshot.process.collector.agentsExpired).toBe(1);
  });
});

describe('process-wide gauges', () => {
  it('writes absolute values, keeps high-water marks and counts warm-ups, statements and admissions', () => {
    const clock = manualClock(5_000);
    const collector = createDiagnosticsCollector({ now: clock.now });
    const before = parse(collector.snapshot()).process;
    expect(before.vectorStores.openStores).toBeNull();
    expect(before.vectorStores.openStoresHighWater).toBeNull();
    expect(before.extractionQueue.depth).toBeNull();

    collector.storeObserver.onVectorStores?.({ openStores: 3, leases: 9 });
    collector.storeObserver.onVectorStores?.({ openStores: 1, leases: 2 });
    collector.storeObserver.onVectorWarmup?.('cold');
    collector.storeObserver.onVectorWarmup?.('warm');
    collector.storeObserver.onVectorWarmup?.('warm');
    collector.storeObserver.onStatement?.('fts');
    collector.storeObserver.onStatement?.('vector');
    collector.storeObserver.onStatement?.('vector');
    collector.maintenanceObserver.onExtractionQueue?.({ depth: 12, oldestAgeMs: 800 });
    clock.advance(10);
    collector.maintenanceObserver.onExtractionQueue?.({ depth: 0, oldestAgeMs: 0 });
    collector.maintenanceObserver.onEmbeddingBacklog?.({ total: 40, activeAgents: 2 });
    collector.providerObserver.onQueue?.({ kind: 'model', queued: 6, active: 2 });
    collector.providerObserver.onQueue?.({ kind: 'model', queued: 1, active: 4 });
    collector.providerObserver.onAdmission?.('embedding', 'admitted');
    collector.providerObserver.onAdmission?.('embedding', 'capacityRejected');
    collector.providerObserver.onRace?.('model', 'deadline');
    collector.providerObserver.onRace?.('model', 'lateSettled');
    collector.retrievalObserver.onCircuitState?.({
      state: 'open',
      failures: 5,
      opened: 1,
      halfOpenProbes: 0,
      rejected: 3,
    });

    const p = parse(collector.snapshot()).process;
    expect(p.vectorStores).toEqual({
      openStores: 1,
      openStoresHighWater: 3,
      leases: 2,
      leasesHighWater: 9,
      updatedAt: 5_000,
      warmup: { warm: 2, cold: 1, failed: 0 },
    });
    expect(p.store.statements).toEqual({ read: 0, write: 0, fts: 1, vector: 2, like: 0, meta: 0 });
    expect(p.extractionQueue).toEqual({ depth: 0, depthHighWater: 12, oldestAgeMs: 0, updatedAt: 5_010 });
    expect(p.embeddingBacklog).toEqual({ total: 40, activeAgents: 2, updatedAt: 5_010 });
    expect(p.providers.model).toMatchObject({ queued: 1, queuedHighWater: 6, active: 4, activeHighWater: 4 });
    expect(p.providers.model.races).toEqual({ deadline: 1, aborted: 0, lateSettled: 1 });
    expect(p.providers.embedding.admissions).toEqual({ admitted: 1, rateLimited: 0, capacityRejected: 1 });
    expect(p.providers.embedding.queued).toBeNull();
    expect(p.queryEmbeddingCircuit).toEqual({
      state: { closed: false, open: true, halfOpen: false },
      failures: 5,
      opened: 1,
      halfOpenProbes: 0,
      rejected: 3,
      reports: 1,
      updatedAt: 5_010,
    });
    expect(p.collector.agentsTracked).toBe(0);
  });

  it('refuses a gauge with an invalid value whole, keeping the previous one', () => {
    const collector = createDiagnosticsCollector();
    collector.storeObserver.onVectorStores?.({ openStores: 2, leases: 2 });
    collector.storeObserver.onVectorStores?.({ openStores: Number.NaN, leases: 1 });
    collector.providerObserver.onQueue?.({ kind: 'model', queued: -1, active: 0 });
    collector.providerObserver.onAdmission?.('gpu' as never, 'admitted');
    collector.storeObserver.onStatement?.('drop table' as never);
    const p = parse(collector.snapshot()).process;
    expect(p.vectorStores.openStores).toBe(2);
    expect(p.vectorStores.leases).toBe(2);
    expect(p.providers.model.queued).toBeNull();
    expect(p.collector.recordsRejected).toBe(4);
  });
});

describe('isolation', () => {
  it('never lets a failure inside a recorder reach the producer; it is counted instead', () => {
    let broken = false;
    const collector = createDiagnosticsCollector({
      now: () => {
        if (broken) throw new Error('clock broke');
        return 1_000;
      },
    });
    collector.retrievalObserver.onRetrieval(execution('a'));
    broken = true;
    expect(() => collector.retrievalObserver.onRetrieval(execution('a'))).not.toThrow();
    expect(() =>
      collector.maintenanceObserver.onExtractionQueue?.({ depth: 1, oldestAgeMs: 1 }),
    ).not.toThrow();
    const hostile = new Proxy(
      {},
      {
        get() {
          throw new Error('hostile report');
        },
      },
    );
    expect(() =>
      collector.maintenanceObserver.onMaintenancePass?.(hostile as MaintenancePassReport),
    ).not.toThrow();
    expect(() =>
      collector.maintenanceObserver.onDrainBatch?.(null as unknown as DrainBatchReport),
    ).not.toThrow();
    broken = false;
    const snapshot = parse(collector.snapshot('a'));
    expect(snapshot.process.collector.observerFailures).toBe(4);
    expect(snapshot.agent.retrieval.search.operations).toBe(1);
  });

  it('works when port methods are detached from their object', () => {
    const collector = createDiagnosticsCollector();
    const { onRetrieval } = collector.retrievalObserver;
    onRetrieval(execution('a'));
    expect(parse(collector.snapshot('a')).agent.retrieval.search.operations).toBe(1);
  });
});

describe('configuration', () => {
  it('creates a MemoryDiagnosticsCollector with the documented defaults', () => {
    expect(createDiagnosticsCollector()).toBeInstanceOf(MemoryDiagnosticsCollector);
    const { collector } = parse(createDiagnosticsCollector().snapshot()).process;
    expect(collector).toMatchObject({ maxAgents: 64, agentTtlMs: DAY, sampleCapacity: 256 });
  });

  it('keeps at most `sampleCapacity` samples per distribution', () => {
    const collector = createDiagnosticsCollector({ sampleCapacity: 4 });
    for (let i = 1; i <= 10; i += 1)
      collector.retrievalObserver.onRetrieval(execution('a', { latencies: { total: i } }));
    expect(parse(collector.snapshot('a')).agent.retrieval.search.latency.total).toEqual({
      count: 4,
      total: 10,
      p50: 8,
      p95: 10,
      max: 10,
    });
  });

  it('rejects invalid options and invalid snapshot ids with a typed error', () => {
    for (const config of [{ maxAgents: 0 }, { agentTtlMs: -1 }, { sampleCapacity: 1.5 }]) {
      let caught: unknown;
      try {
        createDiagnosticsCollector(config);
      } catch (error) {
        caught = error;
      }
      expect(isEngramDiagnosticsError(caught)).toBe(true);
    }
    const collector = createDiagnosticsCollector();
    expect(() => collector.snapshot('')).toThrow(/agentId/);
    expect(() => collector.snapshot('x'.repeat(257))).toThrow(/agentId/);
  });

  it('applies the store agent-id rule: a NUL, a lone surrogate or 300 characters are refused, never tracked', () => {
    const collector = createDiagnosticsCollector();
    const refused = ['agent\u0000x', 'agent\uD800', 'a'.repeat(300), '   '];
    for (const agentId of refused) {
      collector.retrievalObserver.onRetrieval(execution(agentId));
      collector.maintenanceObserver.onDrainBatch?.({
        agentId,
        batchSize: 1,
        durationMs: 1,
        transitions: { ready: 1, error: 0, ftsOnly: 0, stale: 0 },
      });
      expect(() => collector.snapshot(agentId)).toThrow(/agentId/);
    }
    collector.retrievalObserver.onRetrieval(execution('a'.repeat(256)));
    const all = collector.snapshotAll();
    expect(all.agents.map((a) => a.agentId)).toEqual(['a'.repeat(256)]);
    expect(all.process.collector.recordsRejected).toBe(refused.length * 2);
    expect(diagnosticsSnapshotSchema.safeParse({ ...collector.snapshot(), agentId: 'x\u0000' }).success).toBe(
      false,
    );
  });
});
