/** The retrieval recorder: one execution record per call, and the query-embedding circuit's reports. */
import {
  CANDIDATE_ARMS,
  CIRCUIT_STATES,
  type CircuitSnapshot,
  DEGRADATION_CAUSES,
  type DegradationCause,
  fillRecord,
  RETRIEVAL_ARMS,
  RETRIEVAL_OUTCOMES,
  RETRIEVAL_PURPOSES,
  RETRIEVAL_STAGES,
  type RetrievalArm,
  type RetrievalExecution,
} from '@engram/contracts';
import { type CollectorState, isCount, type PurposeState, setOf } from './state.js';

const PURPOSE_SET = setOf(RETRIEVAL_PURPOSES);
const OUTCOME_SET = setOf(RETRIEVAL_OUTCOMES);
const DEGRADATION_SET = setOf(DEGRADATION_CAUSES);
const ARM_SET = setOf(RETRIEVAL_ARMS);
const CIRCUIT_SET = setOf(CIRCUIT_STATES);
const zero = (): number => 0;

function newPurposeState(): PurposeState {
  return {
    operations: 0,
    outcomes: fillRecord(RETRIEVAL_OUTCOMES, zero),
    degradations: fillRecord(DEGRADATION_CAUSES, zero),
    arms: fillRecord(RETRIEVAL_ARMS, zero),
    latency: {},
    candidates: {},
  };
}

/** Records one settled retrieval call; unknown enum values and invalid agent ids are counted and dropped. */
export function recordRetrieval(state: CollectorState, execution: RetrievalExecution): void {
  const purpose = execution.purpose;
  const outcome = execution.outcome;
  if (!state.known(PURPOSE_SET, purpose) || !state.known(OUTCOME_SET, outcome)) return;
  const agent = state.touch(execution.agentId);
  if (agent === undefined) return;
  let part = agent.retrieval[purpose];
  if (part === undefined) {
    part = newPurposeState();
    agent.retrieval[purpose] = part;
  }
  part.operations += 1;
  part.outcomes[outcome] += 1;

  // A set of causes: each distinct known cause counts once per operation.
  const degradations: readonly unknown[] = Array.isArray(execution.degradations)
    ? execution.degradations
    : [];
  let seen = 0;
  for (const cause of degradations) {
    if (!state.known(DEGRADATION_SET, cause)) continue;
    const bit = 1 << DEGRADATION_CAUSES.indexOf(cause as DegradationCause);
    if ((seen & bit) !== 0) continue;
    seen |= bit;
    part.degradations[cause as DegradationCause] += 1;
  }

  // Optional: absent when no arm ran. Each distinct known arm counts once per call.
  const arms: unknown = execution.arms;
  if (Array.isArray(arms)) {
    let seenArms = 0;
    for (const arm of arms as readonly unknown[]) {
      if (!state.known(ARM_SET, arm)) continue;
      const bit = 1 << RETRIEVAL_ARMS.indexOf(arm as RetrievalArm);
      if ((seenArms & bit) !== 0) continue;
      seenArms |= bit;
      part.arms[arm as RetrievalArm] += 1;
    }
  } else if (arms !== undefined) {
    state.recordsRejected += 1;
  }

  const latencies = execution.latencies as Readonly<Record<string, unknown>> | undefined;
  if (latencies !== undefined && latencies !== null) {
    for (const stage of RETRIEVAL_STAGES) {
      const value = latencies[stage];
      // A stage that did not run is absent, never 0.
      if (value !== undefined) state.push(state.ring(part.latency, stage), value);
    }
  }
  const candidates = execution.candidates as unknown as Readonly<Record<string, unknown>> | undefined;
  if (candidates !== undefined && candidates !== null) {
    for (const arm of CANDIDATE_ARMS) {
      const value = candidates[arm];
      if (value !== undefined) state.push(state.ring(part.candidates, arm), value);
    }
  }
}

/** Records the circuit breaker's state and cumulative counters, written whole or not at all. */
export function recordCircuit(state: CollectorState, snapshot: CircuitSnapshot): void {
  const { state: circuitState, failures, opened, halfOpenProbes, rejected } = snapshot;
  if (!state.known(CIRCUIT_SET, circuitState)) return;
  if (!isCount(failures) || !isCount(opened) || !isCount(halfOpenProbes) || !isCount(rejected)) {
    state.recordsRejected += 1;
    return;
  }
  const circuit = state.process.queryEmbeddingCircuit;
  for (const key of CIRCUIT_STATES) circuit.state[key] = key === circuitState;
  circuit.failures = failures;
  circuit.opened = opened;
  circuit.halfOpenProbes = halfOpenProbes;
  circuit.rejected = rejected;
  circuit.reports += 1;
  circuit.updatedAt = state.now();
}
