/** The retrieval recorder: one execution record per call, and the query-embedding circuit's reports. */
import {
  CANDIDATE_ARMS,
  type CandidateArm,
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
  type RetrievalStage,
} from '@engram/contracts';
import type { BoundedNumberRing } from './ring.js';
import { type CollectorState, isCount, type PurposeState, setOf } from './state.js';

const PURPOSE_SET = setOf(RETRIEVAL_PURPOSES);
const OUTCOME_SET = setOf(RETRIEVAL_OUTCOMES);
/** Enum member → position: one lookup both checks a value and gives its bit. */
function indexOf(keys: readonly string[]): ReadonlyMap<unknown, number> {
  return new Map<unknown, number>(keys.map((k, i) => [k, i]));
}
const DEGRADATION_INDEX = indexOf(DEGRADATION_CAUSES);
const ARM_INDEX = indexOf(RETRIEVAL_ARMS);
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
    latencyRings: RETRIEVAL_STAGES.map(() => undefined),
    candidateRings: CANDIDATE_ARMS.map(() => undefined),
  };
}

/** Pushes `value` into the ring at `index` of `rings` (mirrored under `key` in `keyed`), created on first use. */
function pushAt(
  state: CollectorState,
  rings: (BoundedNumberRing | undefined)[],
  keyed: Record<string, BoundedNumberRing | undefined>,
  index: number,
  key: string,
  value: unknown,
): void {
  let ring = rings[index];
  if (ring === undefined) {
    ring = state.newRing();
    rings[index] = ring;
    keyed[key] = ring;
  }
  if (!ring.push(value as number)) state.recordsRejected += 1;
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
  for (let i = 0; i < degradations.length; i += 1) {
    const cause = degradations[i];
    const index = DEGRADATION_INDEX.get(cause);
    if (index === undefined) {
      state.recordsRejected += 1;
      continue;
    }
    const bit = 1 << index;
    if ((seen & bit) !== 0) continue;
    seen |= bit;
    part.degradations[cause as DegradationCause] += 1;
  }

  // Optional: absent when no arm ran. Each distinct known arm counts once per call.
  const arms: unknown = execution.arms;
  if (Array.isArray(arms)) {
    let seenArms = 0;
    for (let i = 0; i < arms.length; i += 1) {
      const arm: unknown = arms[i];
      const index = ARM_INDEX.get(arm);
      if (index === undefined) {
        state.recordsRejected += 1;
        continue;
      }
      const bit = 1 << index;
      if ((seenArms & bit) !== 0) continue;
      seenArms |= bit;
      part.arms[arm as RetrievalArm] += 1;
    }
  } else if (arms !== undefined) {
    state.recordsRejected += 1;
  }

  const latencies = execution.latencies;
  if (latencies !== undefined && latencies !== null) recordLatencies(state, part, latencies);
  const candidates = execution.candidates;
  if (candidates !== undefined && candidates !== null) recordCandidates(state, part, candidates);
}

// The record path reads each stage and candidate key by name (a keyed read with a varying key is several
// times slower); the checks below fail to compile when an enum gains a member that is not read here.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const STAGES_READ: Same<
  RetrievalStage,
  'keyword' | 'queryEmbedding' | 'vector' | 'authoritativeRevalidation' | 'assembly' | 'total'
> = true;
const ARMS_READ: Same<CandidateArm, 'fts' | 'vector' | 'selected'> = true;
void STAGES_READ;
void ARMS_READ;
const S = (stage: RetrievalStage): number => RETRIEVAL_STAGES.indexOf(stage);
const C = (arm: CandidateArm): number => CANDIDATE_ARMS.indexOf(arm);
const [S_KEYWORD, S_EMBED, S_VECTOR, S_REVALIDATE, S_ASSEMBLY, S_TOTAL] = [
  S('keyword'),
  S('queryEmbedding'),
  S('vector'),
  S('authoritativeRevalidation'),
  S('assembly'),
  S('total'),
] as const;
const [C_FTS, C_VECTOR, C_SELECTED] = [C('fts'), C('vector'), C('selected')] as const;

function recordLatencies(
  state: CollectorState,
  part: PurposeState,
  l: RetrievalExecution['latencies'],
): void {
  const rings = part.latencyRings;
  const keyed = part.latency as Record<string, BoundedNumberRing | undefined>;
  // A stage that did not run is absent, never 0.
  if (l.keyword !== undefined) pushAt(state, rings, keyed, S_KEYWORD, 'keyword', l.keyword);
  if (l.queryEmbedding !== undefined)
    pushAt(state, rings, keyed, S_EMBED, 'queryEmbedding', l.queryEmbedding);
  if (l.vector !== undefined) pushAt(state, rings, keyed, S_VECTOR, 'vector', l.vector);
  if (l.authoritativeRevalidation !== undefined) {
    pushAt(state, rings, keyed, S_REVALIDATE, 'authoritativeRevalidation', l.authoritativeRevalidation);
  }
  if (l.assembly !== undefined) pushAt(state, rings, keyed, S_ASSEMBLY, 'assembly', l.assembly);
  if (l.total !== undefined) pushAt(state, rings, keyed, S_TOTAL, 'total', l.total);
}

function recordCandidates(
  state: CollectorState,
  part: PurposeState,
  c: RetrievalExecution['candidates'],
): void {
  const rings = part.candidateRings;
  const keyed = part.candidates as Record<string, BoundedNumberRing | undefined>;
  if (c.fts !== undefined) pushAt(state, rings, keyed, C_FTS, 'fts', c.fts);
  if (c.vector !== undefined) pushAt(state, rings, keyed, C_VECTOR, 'vector', c.vector);
  if (c.selected !== undefined) pushAt(state, rings, keyed, C_SELECTED, 'selected', c.selected);
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
