/**
 * The samples of a retrieval record: each stage's latency and each candidate count, read by name and written to
 * the purpose's ring set (see `ring.ts`) by literal positions. The ring set's layout for a purpose is made here
 * too (`newRetrievalRings`), after the purpose's counters (`record-retrieval.ts`).
 */
import { type CANDIDATE_ARMS, RETRIEVAL_STAGES } from '@engram/contracts/enums';
import type { RetrievalExecution } from '@engram/contracts/observers';
import { EngramDiagnosticsError } from './errors.js';
import {
  type GROUP_APART,
  type GROUP_CELLS,
  type GROUP_COUNT,
  type GROUP_MASK,
  type GROUP_POSITION,
  NumberRingSet,
  recordSamples,
} from './ring.js';
import type { AgentState, CollectorState, PurposeState } from './state.js';

// The record path reads each stage and candidate key by name (a keyed read with a varying key is several
// times slower), and writes each to its ring by a literal position (a module constant computed at load, an
// `indexOf` or a destructured array, costs the record path a load at every use, a literal none). The checks below fail to compile when an enum gains a member or changes its order.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const STAGES_READ: Same<
  typeof RETRIEVAL_STAGES,
  readonly ['keyword', 'queryEmbedding', 'vector', 'authoritativeRevalidation', 'assembly', 'rerank', 'total']
> = true;
const ARMS_READ: Same<typeof CANDIDATE_ARMS, readonly ['fts', 'vector', 'selected']> = true;
void STAGES_READ;
void ARMS_READ;
/** Rings of a purpose's set: the seven stages' latencies, then the three candidate counts. */
const RINGS = 10;
const S_KEYWORD = 0;
const S_EMBED = 1;
const S_VECTOR = 2;
const S_REVALIDATE = 3;
const S_ASSEMBLY = 4;
const S_RERANK = 5;
const S_TOTAL = 6;
const C_FTS = 7;
const C_VECTOR = 8;
const C_SELECTED = 9;
// Each ring's bit in a record's mask (`1 << position`; literals too).
const B_KEYWORD = 0b1; // 1 << S_KEYWORD
const B_EMBED = 0b10;
const B_VECTOR = 0b100;
const B_REVALIDATE = 0b1000;
const B_ASSEMBLY = 0b10000;
const B_RERANK = 0b100000;
const B_TOTAL = 0b1000000;
const B_FTS = 0b10000000; // 1 << C_FTS
const B_CVECTOR = 0b100000000;
const B_SELECTED = 0b1000000000;

// A sample is copied into a scratch array (a raw double store) and written to its ring from there, without a
// call between: a double passed to a call that is not inlined is boxed, one allocation per sample. Stages then
// candidate counts, as in the purpose's ring set.
const SCRATCH = new Float64Array(RINGS);
// The ring set's group layout, as literals (an imported binding is a load per use); typed as the ring set's own
// constants, so a change there fails to compile here.
const CELLS_PER_GROUP: typeof GROUP_CELLS = 5;
const MASK_CELL: typeof GROUP_MASK = 0;
const POSITION_CELL: typeof GROUP_POSITION = 1;
const COUNT_CELL: typeof GROUP_COUNT = 2;
const APART: typeof GROUP_APART = -1;
/** The ring set's groups: the stages' latencies, then the candidate counts (each pushed by one call). */
const LATENCY_GROUP = 0;
const CANDIDATE_GROUP = 1;
// The ring set's layout after the purpose's counters (two groups, then two cells per ring: see `ring.ts`),
// checked when a purpose's set is made.
const GROUPS_AT = 21;
const CURSORS_AT = 31; // GROUPS_AT + 2 · GROUP_CELLS
const SAMPLES_AT = 51; // CURSORS_AT + 2 · RINGS

/**
 * A purpose's ring set: ten rings (the stages' latencies, then the candidate counts) in two groups, after
 * `counters` cells of the purpose's own counters.
 */
export function newRetrievalRings(capacity: number, counters: number): NumberRingSet {
  const rings = new NumberRingSet(RINGS, capacity, counters, [0, RETRIEVAL_STAGES.length]);
  if (rings.groupsAt !== GROUPS_AT || rings.cursorsAt !== CURSORS_AT || rings.samplesAt !== SAMPLES_AT) {
    throw new EngramDiagnosticsError(
      'ENGRAM_DIAGNOSTICS_INVALID_CONFIG',
      'the retrieval ring layout does not match the record path',
    );
  }
  return rings;
}

/**
 * Pushes `SCRATCH[ring]` into its ring on the ring's own write position (a group whose rings are apart): the
 * last branch of `recordSamples`, for one ring. Takes positions, never the sample (a double passed to a call
 * that is not inlined would be boxed).
 */
function pushRing(cells: Float64Array, ring: number, capacity: number): void {
  const cursor = CURSORS_AT + 2 * ring;
  const position = cells[cursor] as number;
  cells[((SAMPLES_AT + position * RINGS) | 0) + ring] = SCRATCH[ring] as number;
  cells[cursor] = position + 1 === capacity ? 0 : position + 1;
  (cells[cursor + 1] as number) += 1;
}

/** The latencies of a group not in lockstep on these rings: ring by ring once apart, else `recordSamples`. */
function latenciesApart(
  state: CollectorState,
  agent: AgentState,
  purpose: number,
  cells: Float64Array,
  valid: number,
): void {
  if (cells[GROUPS_AT + CELLS_PER_GROUP * LATENCY_GROUP + MASK_CELL] !== APART) {
    recordSamples((agent.purposes[purpose] as PurposeState).rings, SCRATCH, valid, LATENCY_GROUP);
    return;
  }
  const capacity = state.settings.sampleCapacity;
  if ((valid & B_KEYWORD) !== 0) pushRing(cells, S_KEYWORD, capacity);
  if ((valid & B_EMBED) !== 0) pushRing(cells, S_EMBED, capacity);
  if ((valid & B_VECTOR) !== 0) pushRing(cells, S_VECTOR, capacity);
  if ((valid & B_REVALIDATE) !== 0) pushRing(cells, S_REVALIDATE, capacity);
  if ((valid & B_ASSEMBLY) !== 0) pushRing(cells, S_ASSEMBLY, capacity);
  if ((valid & B_RERANK) !== 0) pushRing(cells, S_RERANK, capacity);
  if ((valid & B_TOTAL) !== 0) pushRing(cells, S_TOTAL, capacity);
}

/** {@link latenciesApart} for the candidate counts. */
function candidatesApart(
  state: CollectorState,
  agent: AgentState,
  purpose: number,
  cells: Float64Array,
  valid: number,
): void {
  if (cells[GROUPS_AT + CELLS_PER_GROUP * CANDIDATE_GROUP + MASK_CELL] !== APART) {
    recordSamples((agent.purposes[purpose] as PurposeState).rings, SCRATCH, valid, CANDIDATE_GROUP);
    return;
  }
  const capacity = state.settings.sampleCapacity;
  if ((valid & B_FTS) !== 0) pushRing(cells, C_FTS, capacity);
  if ((valid & B_CVECTOR) !== 0) pushRing(cells, C_VECTOR, capacity);
  if ((valid & B_SELECTED) !== 0) pushRing(cells, C_SELECTED, capacity);
}

/**
 * Writes the accepted samples of one record's latencies (`valid`: their rings' bits, copied into `SCRATCH`).
 * When the group is in lockstep on these rings (a steady workload: every record), its one write position takes
 * one row, straight-line: this is `recordSamples`' lockstep branch, spelled out for the group's rings (a loop
 * over bits costs this path several times more); so is a group whose rings are apart, ring by ring. The rest is
 * `recordSamples`' (the first samples, a record that ends the lockstep). `writeCandidates` is the same for the
 * candidate counts.
 */
function writeLatencies(
  state: CollectorState,
  agent: AgentState,
  purpose: number,
  cells: Float64Array,
  valid: number,
): void {
  const at = GROUPS_AT + CELLS_PER_GROUP * LATENCY_GROUP;
  if (cells[at + MASK_CELL] !== valid) {
    latenciesApart(state, agent, purpose, cells, valid);
    return;
  }
  const position = cells[at + POSITION_CELL] as number;
  // An int32 once (the position is a double cell), so that each store below indexes without a float check.
  const row = (SAMPLES_AT + position * RINGS) | 0;
  const s = SCRATCH;
  if ((valid & B_KEYWORD) !== 0) cells[row + S_KEYWORD] = s[S_KEYWORD] as number;
  if ((valid & B_EMBED) !== 0) cells[row + S_EMBED] = s[S_EMBED] as number;
  if ((valid & B_VECTOR) !== 0) cells[row + S_VECTOR] = s[S_VECTOR] as number;
  if ((valid & B_REVALIDATE) !== 0) cells[row + S_REVALIDATE] = s[S_REVALIDATE] as number;
  if ((valid & B_ASSEMBLY) !== 0) cells[row + S_ASSEMBLY] = s[S_ASSEMBLY] as number;
  if ((valid & B_RERANK) !== 0) cells[row + S_RERANK] = s[S_RERANK] as number;
  if ((valid & B_TOTAL) !== 0) cells[row + S_TOTAL] = s[S_TOTAL] as number;
  cells[at + POSITION_CELL] = position + 1 === state.settings.sampleCapacity ? 0 : position + 1;
  (cells[at + COUNT_CELL] as number) += 1;
}

/** {@link writeLatencies} for the candidate counts. */
function writeCandidates(
  state: CollectorState,
  agent: AgentState,
  purpose: number,
  cells: Float64Array,
  valid: number,
): void {
  const at = GROUPS_AT + CELLS_PER_GROUP * CANDIDATE_GROUP;
  if (cells[at + MASK_CELL] !== valid) {
    candidatesApart(state, agent, purpose, cells, valid);
    return;
  }
  const position = cells[at + POSITION_CELL] as number;
  const row = (SAMPLES_AT + position * RINGS) | 0;
  const s = SCRATCH;
  if ((valid & B_FTS) !== 0) cells[row + C_FTS] = s[C_FTS] as number;
  if ((valid & B_CVECTOR) !== 0) cells[row + C_VECTOR] = s[C_VECTOR] as number;
  if ((valid & B_SELECTED) !== 0) cells[row + C_SELECTED] = s[C_SELECTED] as number;
  cells[at + POSITION_CELL] = position + 1 === state.settings.sampleCapacity ? 0 : position + 1;
  (cells[at + COUNT_CELL] as number) += 1;
}

export function recordLatencies(
  state: CollectorState,
  agent: AgentState,
  purpose: number,
  cells: Float64Array,
  l: RetrievalExecution['latencies'],
): void {
  // A stage that did not run is absent, never 0; a value that is not a number is counted and dropped at once,
  // a number a ring refuses (negative, NaN, infinite: `>= 0` is false for NaN) once every stage has been read.
  let valid = 0;
  let refused = 0;
  const s = SCRATCH;
  const keyword: unknown = l.keyword;
  if (typeof keyword === 'number') {
    if (keyword >= 0 && keyword !== Number.POSITIVE_INFINITY) {
      s[S_KEYWORD] = keyword;
      valid |= B_KEYWORD;
    } else refused += 1;
  } else if (keyword !== undefined) state.recordsRejected += 1;
  const embed: unknown = l.queryEmbedding;
  if (typeof embed === 'number') {
    if (embed >= 0 && embed !== Number.POSITIVE_INFINITY) {
      s[S_EMBED] = embed;
      valid |= B_EMBED;
    } else refused += 1;
  } else if (embed !== undefined) state.recordsRejected += 1;
  const vector: unknown = l.vector;
  if (typeof vector === 'number') {
    if (vector >= 0 && vector !== Number.POSITIVE_INFINITY) {
      s[S_VECTOR] = vector;
      valid |= B_VECTOR;
    } else refused += 1;
  } else if (vector !== undefined) state.recordsRejected += 1;
  const revalidate: unknown = l.authoritativeRevalidation;
  if (typeof revalidate === 'number') {
    if (revalidate >= 0 && revalidate !== Number.POSITIVE_INFINITY) {
      s[S_REVALIDATE] = revalidate;
      valid |= B_REVALIDATE;
    } else refused += 1;
  } else if (revalidate !== undefined) state.recordsRejected += 1;
  const assembly: unknown = l.assembly;
  if (typeof assembly === 'number') {
    if (assembly >= 0 && assembly !== Number.POSITIVE_INFINITY) {
      s[S_ASSEMBLY] = assembly;
      valid |= B_ASSEMBLY;
    } else refused += 1;
  } else if (assembly !== undefined) state.recordsRejected += 1;
  const rerank: unknown = l.rerank;
  if (typeof rerank === 'number') {
    if (rerank >= 0 && rerank !== Number.POSITIVE_INFINITY) {
      s[S_RERANK] = rerank;
      valid |= B_RERANK;
    } else refused += 1;
  } else if (rerank !== undefined) state.recordsRejected += 1;
  const total: unknown = l.total;
  if (typeof total === 'number') {
    if (total >= 0 && total !== Number.POSITIVE_INFINITY) {
      s[S_TOTAL] = total;
      valid |= B_TOTAL;
    } else refused += 1;
  } else if (total !== undefined) state.recordsRejected += 1;
  state.recordsRejected += refused;
  if (valid !== 0) writeLatencies(state, agent, purpose, cells, valid);
}

export function recordCandidates(
  state: CollectorState,
  agent: AgentState,
  purpose: number,
  cells: Float64Array,
  c: RetrievalExecution['candidates'],
): void {
  let valid = 0;
  let refused = 0;
  const s = SCRATCH;
  const fts: unknown = c.fts;
  if (typeof fts === 'number') {
    if (fts >= 0 && fts !== Number.POSITIVE_INFINITY) {
      s[C_FTS] = fts;
      valid |= B_FTS;
    } else refused += 1;
  } else if (fts !== undefined) state.recordsRejected += 1;
  const vector: unknown = c.vector;
  if (typeof vector === 'number') {
    if (vector >= 0 && vector !== Number.POSITIVE_INFINITY) {
      s[C_VECTOR] = vector;
      valid |= B_CVECTOR;
    } else refused += 1;
  } else if (vector !== undefined) state.recordsRejected += 1;
  const selected: unknown = c.selected;
  if (typeof selected === 'number') {
    if (selected >= 0 && selected !== Number.POSITIVE_INFINITY) {
      s[C_SELECTED] = selected;
      valid |= B_SELECTED;
    } else refused += 1;
  } else if (selected !== undefined) state.recordsRejected += 1;
  state.recordsRejected += refused;
  if (valid !== 0) writeCandidates(state, agent, purpose, cells, valid);
}
