/** The retrieval recorder: one execution record per call, and the query-embedding circuit's reports. */
import {
  CANDIDATE_ARMS,
  type CandidateArm,
  CIRCUIT_STATES,
  type CircuitSnapshot,
  DEGRADATION_CAUSES,
  fillRecord,
  RETRIEVAL_ARMS,
  RETRIEVAL_OUTCOMES,
  RETRIEVAL_PURPOSES,
  RETRIEVAL_STAGES,
  type RetrievalExecution,
  type RetrievalPurpose,
  type RetrievalStage,
} from '@engram/contracts';
import { NumberRingSet, recordSamples } from './ring.js';
import { type CollectorState, isCount, type PurposeState, setOf } from './state.js';

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
/** The purpose's counters, by enum position, in the ring set's leading cells. */
const OUTCOMES_AT = 0;
const ARMS_AT = OUTCOMES_AT + RETRIEVAL_OUTCOMES.length;
const DEGRADATIONS_AT = ARMS_AT + RETRIEVAL_ARMS.length;
const COUNTERS = DEGRADATIONS_AT + DEGRADATION_CAUSES.length;

function newPurposeState(capacity: number): PurposeState {
  const rings = new NumberRingSet(RETRIEVAL_STAGES.length + CANDIDATE_ARMS.length, capacity, COUNTERS);
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
  let part = agent.purposes[purpose];
  if (part === undefined) {
    part = newPurposeState(state.settings.sampleCapacity);
    agent.purposes[purpose] = part;
    agent.retrieval[RETRIEVAL_PURPOSES[purpose] as RetrievalPurpose] = part;
  }
  part.operations += 1;
  const cells = part.rings.cells;
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
const C = (arm: CandidateArm): number => CANDIDATE_OFFSET + CANDIDATE_ARMS.indexOf(arm);
const [S_KEYWORD, S_EMBED, S_VECTOR, S_REVALIDATE, S_ASSEMBLY, S_TOTAL] = [
  S('keyword'),
  S('queryEmbedding'),
  S('vector'),
  S('authoritativeRevalidation'),
  S('assembly'),
  S('total'),
] as const;
const [C_FTS, C_VECTOR, C_SELECTED] = [C('fts'), C('vector'), C('selected')] as const;

// A sample is copied into a scratch array (a raw double store) and written to its ring by `recordSamples`, in a
// loop without calls: a double passed to a call that is not inlined is boxed, one allocation per sample.
// Stages then candidate counts, as in the purpose's ring set.
const SCRATCH = new Float64Array(RETRIEVAL_STAGES.length + CANDIDATE_ARMS.length);

function recordLatencies(
  state: CollectorState,
  part: PurposeState,
  l: RetrievalExecution['latencies'],
): void {
  // A stage that did not run is absent, never 0; a value that is not a number is counted and dropped.
  let present = 0;
  const s = SCRATCH;
  const keyword: unknown = l.keyword;
  if (typeof keyword === 'number') {
    s[S_KEYWORD] = keyword;
    present |= 1 << S_KEYWORD;
  } else if (keyword !== undefined) state.recordsRejected += 1;
  const embed: unknown = l.queryEmbedding;
  if (typeof embed === 'number') {
    s[S_EMBED] = embed;
    present |= 1 << S_EMBED;
  } else if (embed !== undefined) state.recordsRejected += 1;
  const vector: unknown = l.vector;
  if (typeof vector === 'number') {
    s[S_VECTOR] = vector;
    present |= 1 << S_VECTOR;
  } else if (vector !== undefined) state.recordsRejected += 1;
  const revalidate: unknown = l.authoritativeRevalidation;
  if (typeof revalidate === 'number') {
    s[S_REVALIDATE] = revalidate;
    present |= 1 << S_REVALIDATE;
  } else if (revalidate !== undefined) state.recordsRejected += 1;
  const assembly: unknown = l.assembly;
  if (typeof assembly === 'number') {
    s[S_ASSEMBLY] = assembly;
    present |= 1 << S_ASSEMBLY;
  } else if (assembly !== undefined) state.recordsRejected += 1;
  const total: unknown = l.total;
  if (typeof total === 'number') {
    s[S_TOTAL] = total;
    present |= 1 << S_TOTAL;
  } else if (total !== undefined) state.recordsRejected += 1;
  state.recordsRejected += recordSamples(part.rings, s, present);
}

function recordCandidates(
  state: CollectorState,
  part: PurposeState,
  c: RetrievalExecution['candidates'],
): void {
  let present = 0;
  const s = SCRATCH;
  const fts: unknown = c.fts;
  if (typeof fts === 'number') {
    s[C_FTS] = fts;
    present |= 1 << C_FTS;
  } else if (fts !== undefined) state.recordsRejected += 1;
  const vector: unknown = c.vector;
  if (typeof vector === 'number') {
    s[C_VECTOR] = vector;
    present |= 1 << C_VECTOR;
  } else if (vector !== undefined) state.recordsRejected += 1;
  const selected: unknown = c.selected;
  if (typeof selected === 'number') {
    s[C_SELECTED] = selected;
    present |= 1 << C_SELECTED;
  } else if (selected !== undefined) state.recordsRejected += 1;
  state.recordsRejected += recordSamples(part.rings, s, present);
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
