import type { DistributionSummary, RetrievalExecution } from '@engram/contracts';
import { type AgentDiagnostics, diagnosticsSnapshotAllSchema } from '@engram/contracts';
import { afterEach, describe, expect, it } from 'vitest';
import { createDiagnosticsCollector } from './collector.js';

const RECORDS = 1_000_000;
const AGENTS = 1_000;
const MAX_AGENTS = 64;
const CAPACITY = 256;

/** Counts calls of Array.prototype.sort / toSorted while installed; counts, never time. */
function installSortCounter(): { readonly calls: () => number; readonly restore: () => void } {
  const proto = Array.prototype as unknown as Record<'sort' | 'toSorted', (...args: unknown[]) => unknown>;
  const originalSort = proto.sort;
  const originalToSorted = proto.toSorted;
  let calls = 0;
  proto.sort = function (this: unknown[], ...args: unknown[]) {
    calls += 1;
    return Reflect.apply(originalSort, this, args);
  };
  proto.toSorted = function (this: unknown[], ...args: unknown[]) {
    calls += 1;
    return Reflect.apply(originalToSorted, this, args);
  };
  return {
    calls: () => calls,
    restore: () => {
      proto.sort = originalSort;
      proto.toSorted = originalToSorted;
    },
  };
}

/** Every distribution of an agent part. */
function distributions(agent: AgentDiagnostics): DistributionSummary[] {
  const out: DistributionSummary[] = [];
  for (const purpose of Object.values(agent.retrieval)) {
    out.push(...Object.values(purpose.latency), ...Object.values(purpose.candidates));
  }
  out.push(
    agent.extraction.duration,
    agent.embedding.batchSize,
    agent.embedding.duration,
    agent.maintenance.duration,
  );
  return out;
}

let restoreSort: (() => void) | undefined;
afterEach(() => restoreSort?.());

describe('collector bounds under a million records', () => {
  it('keeps ≤ 64 agents, ≤ 256 samples per ring, a bounded total, and never sorts on the record path', () => {
    let time = 0;
    const collector = createDiagnosticsCollector({ now: () => time });
    const agentIds = Array.from({ length: AGENTS }, (_, i) => `agent-${i}`);
    const purposes = ['recall', 'search', 'decision', 'injection'] as const;
    // Deterministic LCG (high bits): 90 % of records hit ten hot agents (their rings fill and wrap),
    // 10 % churn through all 1,000 agents (the LRU evicts constantly).
    let seed = 12_345;
    const next = (): number => {
      seed = (Math.imul(seed, 1_103_515_245) + 12_345) >>> 0;
      return seed;
    };
    const execution: { -readonly [K in keyof RetrievalExecution]: RetrievalExecution[K] } = {
      purpose: 'search',
      agentId: '',
      startedAt: 0,
      latencies: {},
      candidates: { fts: 0, vector: 0, selected: 0 },
      outcome: 'completed',
      degradations: [],
    };

    const counter = installSortCounter();
    restoreSort = counter.restore;
    const distinctAgents = new Set<string>();
    for (let i = 0; i < RECORDS; i += 1) {
      time += 7;
      const r = next() >>> 8;
      const agentId = agentIds[r % 10 < 9 ? (r >>> 4) % 10 : (r >>> 4) % AGENTS] ?? 'agent-0';
      distinctAgents.add(agentId);
      const kind = i % 20;
      if (kind < 16) {
        execution.purpose = purposes[i % 4] ?? 'search';
        execution.agentId = agentId;
        execution.latencies = { keyword: r % 5, vector: r % 13, total: r % 97 };
        execution.candidates = { fts: r % 50, vector: r % 40, selected: r % 10 };
        execution.outcome = r % 50 === 0 ? 'failed' : 'completed';
        execution.degradations = r % 7 === 0 ? ['embeddingTimeout'] : [];
        collector.retrievalObserver.onRetrieval(execution);
      } else if (kind === 16) {
        collector.maintenanceObserver.onExtraction?.({
          agentId,
          outcome: 'completed',
          durationMs: r % 300,
          candidates: 2,
          decisions: { ADD: 1, UPDATE: 0, SUPERSEDE: 0, NOOP: 1, CHALLENGE: 0 },
          invalidOutputs: 0,
          conflicts: 0,
        });
      } else if (kind === 17) {
        collector.maintenanceObserver.onDrainBatch?.({
          agentId,
          batchSize: 1 + (r % 64),
          durationMs: r % 200,
          transitions: { ready: 1, error: 0, ftsOnly: 0, stale: 0 },
        });
      } else if (kind === 18) {
        collector.maintenanceObserver.onMaintenancePass?.({
          agentId,
          durationMs: r % 1_000,
          cheap: { outcome: 'completed', repaired: 0, archived: 1, pruned: 0 },
          heavy: {
            outcome: 'skipped',
            modelCalls: 0,
            inputTokens: 0,
            denials: { challenge: 0, merge: 0, reflection: 0, persona: 0 },
            steps: { challenge: 'skipped', merge: 'skipped', reflection: 'skipped', persona: 'skipped' },
          },
        });
      } else {
        collector.storeObserver.onStatement?.('read');
        collector.storeObserver.onVectorStores?.({ openStores: 1 + (r % 3), leases: r % 9 });
        collector.providerObserver.onQueue?.({ kind: 'embedding', queued: r % 17, active: r % 4 });
      }
    }
    const sortsWhileRecording = counter.calls();
    const all = collector.snapshotAll();
    const sortsAtSnapshot = counter.calls() - sortsWhileRecording;
    counter.restore();
    restoreSort = undefined;

    expect(sortsWhileRecording).toBe(0);
    expect(sortsAtSnapshot).toBeGreaterThan(0);

    diagnosticsSnapshotAllSchema.parse(all);
    expect(distinctAgents.size).toBe(AGENTS);
    expect(all.agents.length).toBeLessThanOrEqual(MAX_AGENTS);
    expect(all.process.collector.agentsTracked).toBe(all.agents.length);
    expect(all.process.collector.agentsEvicted).toBeGreaterThanOrEqual(AGENTS - MAX_AGENTS);
    expect(all.process.collector.observerFailures).toBe(0);
    expect(all.process.collector.recordsRejected).toBe(0);

    // 4 purposes × (7 stages, the rerank stage's included, + 3 candidate arms) + extraction 1 + drain 2 +
    // maintenance 1 = 44 rings per agent.
    const ringsPerAgent = 4 * (7 + 3) + 1 + 2 + 1;
    const bound = MAX_AGENTS * ringsPerAgent * CAPACITY; // 720,896 samples
    let retained = 0;
    let fullRings = 0;
    for (const { agent } of all.agents) {
      const rings = distributions(agent);
      expect(rings).toHaveLength(ringsPerAgent);
      for (const ring of rings) {
        expect(ring.count).toBeLessThanOrEqual(CAPACITY);
        retained += ring.count;
        if (ring.count === CAPACITY && ring.total > CAPACITY) fullRings += 1;
      }
    }
    expect(retained).toBeLessThanOrEqual(bound);
    // The hot agents' rings really filled and wrapped: the bound is reached and held, not merely unreached.
    expect(fullRings).toBeGreaterThan(0);
    const hot = all.agents.find((a) => a.agentId === 'agent-0')?.agent;
    expect(hot?.retrieval.search.latency.total.total).toBeGreaterThan(10 * CAPACITY);
    expect(all.process.store.statements.read).toBe(RECORDS / 20);
    expect(all.process.vectorStores.openStoresHighWater).toBe(3);
  });
});
