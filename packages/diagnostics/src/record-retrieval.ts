/** The retrieval recorder: one execution record per call, and the query-embedding circuit's reports. */
import {
  CANDIDATE_ARMS,
  CIRCUIT_STATES,
  DEGRADATION_CAUSES,
  RETRIEVAL_ARMS,
  RETRIEVAL_OUTCOMES,
  RETRIEVAL_PURPOSES,
  RETRIEVAL_STAGES,
  type RetrievalPurpose,
} from '@engram/contracts/enums';
import { fillRecord } from '@engram/contracts/health';
import type { CircuitSnapshot, RetrievalExecution } from '@engram/contracts/observers';
import { newRetrievalRings, recordCandidates, recordLatencies } from './retrieval-samples.js';
import { type AgentState, type CollectorState, isCount, type PurposeState, setOf } from './state.js';

/** Enum member → position: one lookup both checks a value and gives its index (or bit). */
function indexOf(keys: readonly string[]): ReadonlyMap<unknown, number> {
  return new Map<unknown, number>(keys.map((k, i) => [k, i]));
}
const DEGRADATION_INDEX = indexOf(DEGRADATION_CAUSES);

/** The position of `value` in a short enum tuple, or -1 (a scan of ≤ 5 members beats a map lookup). */
function position(keys: readonly string[], value: unknown): number {
  for (let i = 0; i < keys.length; i += 1) if (keys[i] === value) return i;
  return -1;
}
const CIRCUIT_SET = setOf(CIRCUIT_STATES);
const zero = (): number => 0;

/** Position of a candidate count's ring in a purpose's ring set: after the stages' rings. */
const CANDIDATE_OFFSET = RETRIEVAL_STAGES.length;
// The purpose's counters, by enum position, in the ring set's leading cells: outcomes, arms, causes, then the
// operations. Literals, for the record path (a computed module constant is a load per use); the enums' lengths
// are checked when compiling.
const OUTCOMES_AT = 0;
const ARMS_AT: (typeof RETRIEVAL_OUTCOMES)['length'] = 5;
const DEGRADATIONS_AT = 7; // ARMS_AT + 2 arms
const ARM_COUNT: (typeof RETRIEVAL_ARMS)['length'] = 2;
const OPERATIONS_AT = 20; // DEGRADATIONS_AT + 13 causes
const CAUSE_COUNT: (typeof DEGRADATION_CAUSES)['length'] = 13;
void ARM_COUNT;
void CAUSE_COUNT;
const COUNTERS = OPERATIONS_AT + 1;
// The record path finds a purpose's cells by its literal position; this fails to compile when the order changes.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const PURPOSES_READ: Same<typeof RETRIEVAL_PURPOSES, readonly ['recall', 'search', 'decision', 'injection']> =
  true;
void PURPOSES_READ;

function newPurposeState(capacity: number): PurposeState {
  const rings = newRetrievalRings(capacity, COUNTERS);
  return {
    operations: 0,
    outcomes: fillRecord(RETRIEVAL_OUTCOMES, zero),
    degradations: fillRecord(DEGRADATION_CAUSES, zero),
    arms: fillRecord(RETRIEVAL_ARMS, zero),
    latency: fillRecord(RETRIEVAL_STAGES, (stage) => rings.member(RETRIEVAL_STAGES.indexOf(stage))),
    candidates: fillRecord(CANDIDATE_ARMS, (arm) =>
      rings.member(CANDIDATE_OFFSET + CANDIDATE_ARMS.indexOf(arm)),
    ),
    rings,
  };
}

/**
 * Copies a purpose's counters (kept by enum position in its ring set's cells on the record path) into its
 * keyed records, which the snapshot reads. Snapshot time only.
 */
export function syncRetrievalCounts(part: PurposeState): void {
  const cells = part.rings.cells;
  part.operations = cells[OPERATIONS_AT] ?? 0;
  RETRIEVAL_OUTCOMES.forEach((key, i) => {
    part.outcomes[key] = cells[OUTCOMES_AT + i] ?? 0;
  });
  DEGRADATION_CAUSES.forEach((key, i) => {
    part.degradations[key] = cells[DEGRADATIONS_AT + i] ?? 0;
  });
  RETRIEVAL_ARMS.forEach((key, i) => {
    part.arms[key] = cells[ARMS_AT + i] ?? 0;
  });
}

/**
 * Records one settled retrieval call; unknown enum values and invalid agent ids are counted and dropped. Every
 * enum value is looked up once, by its position (a keyed counter with a varying key is several times slower); the
 * keyed records are filled at snapshot time (`syncRetrievalCounts`).
 */
export function recordRetrieval(state: CollectorState, execution: RetrievalExecution): void {
  const purpose = position(RETRIEVAL_PURPOSES, execution.purpose);
  const outcome = position(RETRIEVAL_OUTCOMES, execution.outcome);
  if (purpose < 0 || outcome < 0) {
    state.recordsRejected += 1;
    return;
  }
  const agent = state.touch(execution.agentId);
  if (agent === undefined) return;
  // The purpose's cells straight from the agent (a field, not the purpose's state and its ring set: each hop is
  // a load that can miss the cache).
  let cells =
    purpose === 0
      ? agent.recallCells
      : purpose === 1
        ? agent.searchCells
        : purpose === 2
          ? agent.decisionCells
          : agent.injectionCells;
  if (cells === undefined) cells = addPurpose(state, agent, purpose);
  (cells[OPERATIONS_AT] as number) += 1;
  (cells[OUTCOMES_AT + outcome] as number) += 1;

  // A set of causes: each distinct known cause counts once per operation.
  const degradations: readonly unknown[] = Array.isArray(execution.degradations)
    ? execution.degradations
    : [];
  let seen = 0;
  for (let i = 0; i < degradations.length; i += 1) {
    const index = DEGRADATION_INDEX.get(degradations[i]);
    if (index === undefined) {
      state.recordsRejected += 1;
      continue;
    }
    const bit = 1 << index;
    if ((seen & bit) !== 0) continue;
    seen |= bit;
    (cells[DEGRADATIONS_AT + index] as number) += 1;
  }

  // Optional: absent when no arm ran. Each distinct known arm counts once per call.
  const arms: unknown = execution.arms;
  if (Array.isArray(arms)) {
    let seenArms = 0;
    for (let i = 0; i < arms.length; i += 1) {
      const index = position(RETRIEVAL_ARMS, arms[i]);
      if (index < 0) {
        state.recordsRejected += 1;
        continue;
      }
      const bit = 1 << index;
      if ((seenArms & bit) !== 0) continue;
      seenArms |= bit;
      (cells[ARMS_AT + index] as number) += 1;
    }
  } else if (arms !== undefined) {
    state.recordsRejected += 1;
  }

  const latencies = execution.latencies;
  if (latencies !== undefined && latencies !== null) recordLatencies(state, agent, purpose, cells, latencies);
  const candidates = execution.candidates;
  if (candidates !== undefined && candidates !== null) {
    recordCandidates(state, agent, purpose, cells, candidates);
  }
}

/** Makes an agent's state for a purpose (its first record of it); returns the purpose's cells. */
function addPurpose(state: CollectorState, agent: AgentState, purpose: number): Float64Array {
  const part = newPurposeState(state.settings.sampleCapacity);
  agent.purposes[purpose] = part;
  agent.retrieval[RETRIEVAL_PURPOSES[purpose] as RetrievalPurpose] = part;
  const cells = part.rings.cells;
  if (purpose === 0) agent.recallCells = cells;
  else if (purpose === 1) agent.searchCells = cells;
  else if (purpose === 2) agent.decisionCells = cells;
  else agent.injectionCells = cells;
  return cells;
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
