/**
 * Snapshot assembly: the state of one or more agents merged into the DTO shape. The zero-filled DTO part is
 * the template: each of its numbers is the sum of the agents' values, each of its distributions the summary
 * of their rings (percentiles are computed here, never on the record path). Missing sections count 0.
 */
import {
  type AgentDiagnostics,
  createEmptyAgentDiagnostics,
  DIAGNOSTICS_SCHEMA_VERSION,
  type DiagnosticsSnapshot,
  type DiagnosticsSnapshotAll,
  type ProcessDiagnostics,
} from '@engram/contracts/health';
import { syncRetrievalCounts } from './record-retrieval.js';
import { isSampleWindow, summarize } from './ring.js';
import type { AgentState, CollectorState } from './state.js';

function isDistributionTemplate(value: object): boolean {
  return 'p50' in value && 'p95' in value && 'max' in value;
}

/** Merges `parts` (state sections, possibly absent) into the shape of `template`. */
function merge(template: unknown, parts: readonly unknown[]): unknown {
  if (typeof template === 'number') {
    let total = 0;
    for (const part of parts) if (typeof part === 'number') total += part;
    return total;
  }
  if (typeof template !== 'object' || template === null) return template;
  if (isDistributionTemplate(template)) {
    return summarize(...parts.map((part) => (isSampleWindow(part) ? part : undefined)));
  }
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(template)) {
    out[key] = merge(
      value,
      parts.map((part) =>
        typeof part === 'object' && part !== null ? (part as Record<string, unknown>)[key] : undefined,
      ),
    );
  }
  return out;
}

/** The agent part of `states` merged (an empty part when there is none). */
export function agentPart(states: readonly AgentState[]): AgentDiagnostics {
  const empty = createEmptyAgentDiagnostics();
  if (states.length === 0) return empty;
  let firstSeenAt = Number.POSITIVE_INFINITY;
  let lastSeenAt = Number.NEGATIVE_INFINITY;
  for (const state of states) {
    for (const part of state.purposes) if (part !== undefined) syncRetrievalCounts(part);
    firstSeenAt = Math.min(firstSeenAt, state.firstSeenAt);
    lastSeenAt = Math.max(lastSeenAt, state.lastSeenAt);
  }
  const section = <K extends 'retrieval' | 'extraction' | 'embedding' | 'maintenance'>(
    key: K,
  ): AgentDiagnostics[K] =>
    merge(
      empty[key],
      states.map((s) => s[key]),
    ) as AgentDiagnostics[K];
  return {
    tracked: true,
    firstSeenAt,
    lastSeenAt,
    retrieval: section('retrieval'),
    extraction: section('extraction'),
    embedding: section('embedding'),
    maintenance: section('maintenance'),
  };
}

/** A copy of the process part with the collector's own counters. */
export function processPart(state: CollectorState): ProcessDiagnostics {
  const copy = structuredClone(state.process);
  copy.collector = {
    agentsTracked: state.agents.size,
    maxAgents: state.settings.maxAgents,
    agentTtlMs: state.settings.agentTtlMs,
    sampleCapacity: state.settings.sampleCapacity,
    agentsEvicted: state.agentsEvicted,
    agentsExpired: state.agentsExpired,
    recordsRejected: state.recordsRejected,
    observerFailures: state.observerFailures,
  };
  return copy;
}

/** One agent's snapshot (or every tracked agent merged when `agentId` is undefined). */
export function buildSnapshot(state: CollectorState, agentId: string | undefined): DiagnosticsSnapshot {
  const now = state.now();
  state.sweep(now);
  let states: AgentState[];
  if (agentId === undefined) {
    states = [...state.agents.values()];
  } else {
    const agent = state.agents.get(agentId);
    states = agent === undefined ? [] : [agent];
  }
  return {
    schemaVersion: DIAGNOSTICS_SCHEMA_VERSION,
    generatedAt: now,
    agentId: agentId ?? null,
    agent: agentPart(states),
    process: processPart(state),
  };
}

/** Every tracked agent's part, most recently used first, plus the process part. */
export function buildSnapshotAll(state: CollectorState): DiagnosticsSnapshotAll {
  const now = state.now();
  state.sweep(now);
  const agents = state
    .byRecency()
    .reverse()
    .map(([agentId, agent]) => ({ agentId, agent: agentPart([agent]) }));
  return { schemaVersion: DIAGNOSTICS_SCHEMA_VERSION, generatedAt: now, agents, process: processPart(state) };
}
