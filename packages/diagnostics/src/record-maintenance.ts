/** The maintenance recorder: drain batches, extraction chunks, maintenance passes and their gauges. */

import {
  DRAIN_TRANSITIONS,
  EXTRACTION_DECISIONS,
  EXTRACTION_OUTCOMES,
  MAINTENANCE_STEPS,
  MODEL_OUTPUT_SCHEMAS,
  PHASE_OUTCOMES,
  type PhaseOutcome,
} from '@engram/contracts/enums';
import { createEmptyAgentDiagnostics, fillRecord } from '@engram/contracts/health';
import type {
  DrainBatchReport,
  EmbeddingBacklogReport,
  ExtractionQueueReport,
  ExtractionReport,
  MaintenancePassReport,
} from '@engram/contracts/observers';
import { type CollectorState, type ExtractionState, isCount, type MaintenanceState, setOf } from './state.js';

const EXTRACTION_OUTCOME_SET = setOf(EXTRACTION_OUTCOMES);
const PHASE_OUTCOME_SET = setOf(PHASE_OUTCOMES);
const zero = (): number => 0;

/** Records one extraction chunk. */
export function recordExtraction(state: CollectorState, report: ExtractionReport): void {
  const outcome = report.outcome;
  if (!state.known(EXTRACTION_OUTCOME_SET, outcome)) return;
  const agent = state.touch(report.agentId);
  if (agent === undefined) return;
  let part = agent.extraction;
  if (part === undefined) {
    const { duration: _empty, ...counters } = createEmptyAgentDiagnostics().extraction;
    part = { ...(counters as Omit<ExtractionState, 'duration'>), duration: state.newRing() };
    agent.extraction = part;
  }
  part.chunks += 1;
  part.outcomes[outcome] += 1;
  const decisions = report.decisions as Readonly<Record<string, unknown>> | undefined;
  if (decisions !== undefined && decisions !== null) {
    for (const decision of EXTRACTION_DECISIONS) {
      const value = decisions[decision];
      if (value !== undefined) part.decisions[decision] += state.amount(value);
    }
  }
  part.candidates += state.amount(report.candidates);
  part.invalidOutputs += state.amount(report.invalidOutputs);
  part.conflicts += state.amount(report.conflicts);
  // A skipped chunk did no work (no model configured): its 0 ms is not a duration sample.
  if (outcome !== 'skipped') state.push(part.duration, report.durationMs);
}

/** Records one drained batch of one agent. */
export function recordDrainBatch(state: CollectorState, report: DrainBatchReport): void {
  const agent = state.touch(report.agentId);
  if (agent === undefined) return;
  let part = agent.embedding;
  if (part === undefined) {
    part = {
      batches: 0,
      rows: 0,
      transitions: fillRecord(DRAIN_TRANSITIONS, zero),
      batchSize: state.newRing(),
      duration: state.newRing(),
    };
    agent.embedding = part;
  }
  part.batches += 1;
  part.rows += state.amount(report.batchSize);
  state.push(part.batchSize, report.batchSize);
  state.push(part.duration, report.durationMs);
  const transitions = report.transitions as Readonly<Record<string, unknown>> | undefined;
  if (transitions !== undefined && transitions !== null) {
    for (const transition of DRAIN_TRANSITIONS) {
      const value = transitions[transition];
      if (value !== undefined) part.transitions[transition] += state.amount(value);
    }
  }
}

/** Records one maintenance pass of one agent. */
export function recordMaintenancePass(state: CollectorState, report: MaintenancePassReport): void {
  const cheapOutcome = report.cheap.outcome;
  const heavyOutcome = report.heavy.outcome;
  if (!state.known(PHASE_OUTCOME_SET, cheapOutcome) || !state.known(PHASE_OUTCOME_SET, heavyOutcome)) return;
  const agent = state.touch(report.agentId);
  if (agent === undefined) return;
  let part = agent.maintenance;
  if (part === undefined) {
    // The counters start as the contracts' empty part (fresh records each call); the distribution is a ring.
    const { duration: _empty, ...counters } = createEmptyAgentDiagnostics().maintenance;
    part = { ...(counters as Omit<MaintenanceState, 'duration'>), duration: state.newRing() };
    agent.maintenance = part;
  }
  const { cheap, heavy } = part;
  part.passes += 1;
  cheap.outcomes[cheapOutcome] += 1;
  cheap.repaired += state.amount(report.cheap.repaired);
  cheap.archived += state.amount(report.cheap.archived);
  cheap.pruned += state.amount(report.cheap.pruned);
  heavy.outcomes[heavyOutcome] += 1;
  heavy.modelCalls += state.amount(report.heavy.modelCalls);
  heavy.inputTokens += state.amount(report.heavy.inputTokens);
  // Optional in the report: absent means none.
  const { invalidOutputs, conflicts } = report.heavy;
  if (invalidOutputs !== undefined) heavy.invalidOutputs += state.amount(invalidOutputs);
  if (conflicts !== undefined) heavy.conflicts += state.amount(conflicts);
  // Invalid answers by schema name: only the closed list of names is counted, never another key.
  const bySchema = report.heavy.invalidBySchema as Readonly<Record<string, unknown>> | undefined;
  if (bySchema !== undefined && bySchema !== null) {
    for (const schema of MODEL_OUTPUT_SCHEMAS) {
      const n = bySchema[schema];
      if (n !== undefined) heavy.invalidBySchema[schema] += state.amount(n);
    }
  }
  const denials = report.heavy.denials as Readonly<Record<string, unknown>> | undefined;
  const steps = report.heavy.steps as Readonly<Record<string, unknown>> | undefined;
  for (const step of MAINTENANCE_STEPS) {
    const denied = denials?.[step];
    if (denied !== undefined) heavy.denials[step] += state.amount(denied);
    const stepOutcome = steps?.[step];
    if (stepOutcome !== undefined && state.known(PHASE_OUTCOME_SET, stepOutcome)) {
      heavy.steps[step][stepOutcome as PhaseOutcome] += 1;
    }
  }
  state.push(part.duration, report.durationMs);
}

// Process-wide gauges: absolute values, written whole or not at all.

/** Records the extraction-queue gauge. */
export function recordExtractionQueue(state: CollectorState, gauge: ExtractionQueueReport): void {
  const { depth, oldestAgeMs } = gauge;
  if (!isCount(depth) || !isCount(oldestAgeMs)) {
    state.recordsRejected += 1;
    return;
  }
  const queue = state.process.extractionQueue;
  queue.depth = depth;
  queue.oldestAgeMs = oldestAgeMs;
  queue.depthHighWater = Math.max(queue.depthHighWater ?? 0, depth);
  queue.updatedAt = state.now();
}

/** Records the embedding-backlog gauge. */
export function recordBacklog(state: CollectorState, gauge: EmbeddingBacklogReport): void {
  const { total, activeAgents } = gauge;
  if (!isCount(total) || !isCount(activeAgents)) {
    state.recordsRejected += 1;
    return;
  }
  const backlog = state.process.embeddingBacklog;
  backlog.total = total;
  backlog.activeAgents = activeAgents;
  backlog.updatedAt = state.now();
}
