import {
  DEFAULT_SAMPLE_CAPACITY,
  type DistributionSummary,
  EMPTY_DISTRIBUTION,
} from '@engram/contracts/health';
import { EngramDiagnosticsError } from './errors.js';

/**
 * A fixed-capacity ring of non-negative finite numbers: the newest `capacity` samples, oldest overwritten.
 *
 * `push` is O(1), allocates nothing once full and never sorts. Non-finite, negative and non-number values
 * are rejected (counted in `rejected`, never stored).
 */
export class BoundedNumberRing {
  /** Maximum number of retained samples. */
  readonly capacity: number;
  // Allocated at the full capacity on the first sample: a push only stores a double (no growth, no boxing).
  #samples: Float64Array | null = null;
  #next = 0;
  #count = 0;
  #rejected = 0;

  constructor(capacity: number = DEFAULT_SAMPLE_CAPACITY) {
    if (!Number.isSafeInteger(capacity) || capacity < 1) {
      throw new EngramDiagnosticsError(
        'ENGRAM_DIAGNOSTICS_INVALID_CONFIG',
        'ring capacity must be a positive safe integer',
      );
    }
    this.capacity = capacity;
  }

  /** Records one sample; returns false (and counts it as rejected) for a non-finite, negative or non-number value. */
  push(value: number): boolean {
    // `value >= 0` is false for NaN; the order of the tests puts the common case first.
    if (!(value >= 0) || value === Number.POSITIVE_INFINITY || typeof value !== 'number') {
      this.#rejected += 1;
      return false;
    }
    let samples = this.#samples;
    if (samples === null) {
      samples = new Float64Array(this.capacity);
      this.#samples = samples;
    }
    const next = this.#next;
    samples[next] = value;
    this.#next = next + 1 === this.capacity ? 0 : next + 1;
    this.#count += 1;
    return true;
  }

  /** Samples currently retained (at most `capacity`). */
  get size(): number {
    return Math.min(this.#count, this.capacity);
  }

  /** All samples ever accepted, including overwritten ones. */
  get count(): number {
    return this.#count;
  }

  /** Values ever rejected by `push`. */
  get rejected(): number {
    return this.#rejected;
  }

  /** A copy of the retained samples, oldest first. */
  values(): number[] {
    const samples = this.#samples;
    if (samples === null) return [];
    if (this.#count < this.capacity) return Array.from(samples.subarray(0, this.#count));
    return [...samples.subarray(this.#next), ...samples.subarray(0, this.#next)];
  }
}

/** What a snapshot reads of a distribution: its all-time count and its retained samples. */
export interface SampleWindow {
  /** All samples ever accepted, including overwritten ones. */
  readonly count: number;
  /** A copy of the retained samples, oldest first. */
  values(): number[];
}

/** The most rings a set holds (a record's rings are named by the bits of one 32-bit mask). */
const MAX_RINGS = 31;
/** Cells of a group's state (from `groupsAt + GROUP_CELLS · g`): lockstep mask, position, count, first ring, past-last ring. */
export const GROUP_CELLS = 5;
/** A group's lockstep mask: 0 before its first sample, then the bits of its rings in lockstep, `GROUP_APART` after. */
export const GROUP_MASK = 0;
/** The lockstep mask of a group whose rings are apart (each on its own write position). */
export const GROUP_APART = -1;
/** A group's write position in lockstep. */
export const GROUP_POSITION = 1;
/** A group's all-time count of records in lockstep. */
export const GROUP_COUNT = 2;
const GROUP_FROM = 3;
const GROUP_TO = 4;

/**
 * `length` rings of `capacity` samples, addressed by position, for a recorder that keeps several distributions
 * of one section and pushes them together. Each ring keeps the same samples, order and counts as a
 * {@link BoundedNumberRing} fed the same values. Everything lives in one `Float64Array`, allocated whole with
 * the set, so that one record touches few cache lines:
 *
 * - cells `0 … counters − 1`: plain counters for the owner (its enum counts), never touched here;
 * - then, per group of rings (below), its lockstep mask, write position and all-time count, and its first and
 *   past-last ring (so that a record reads one group's bookkeeping from one place);
 * - then, per ring `i`, its own write position and all-time count of accepted samples;
 * - then the samples, interleaved: sample `k` of ring `i` at `samplesAt + k · length + i`, so the samples of
 *   one record that every ring takes sit side by side.
 *
 * **Groups in lockstep.** The rings are split into groups (`groupStarts`: the first ring of each) that a
 * recorder pushes together, one call per group. While every record of a group has given a sample to the same
 * rings of it (in a steady workload, every record), those rings have the same write position and count: the
 * group keeps them once (its mask names the rings), and a record writes its samples in one row and advances
 * one position. The first record that gives a different set of rings a sample ends the lockstep for good: the
 * group's position and count are copied to each of its rings, and from then on every ring advances on its own.
 * Either way the samples, their order and the counts are the same; only the bookkeeping differs.
 *
 * The record path writes the cells through `recordSamples`; `member` gives the read view a snapshot
 * summarises.
 */
export class NumberRingSet {
  /** Rings in the set. */
  readonly length: number;
  /** Maximum number of retained samples per ring. */
  readonly capacity: number;
  /** Owner's counters, then the groups' and the rings' positions and counts, then their samples. */
  readonly cells: Float64Array;
  /**
   * Cell of group 0's state (group `g`'s at `groupsAt + 5g`: its lockstep mask, position, count, first ring and
   * past-last ring).
   */
  readonly groupsAt: number;
  /** Cell of ring 0's write position (ring `i`'s at `cursorsAt + 2i`, its count at `cursorsAt + 2i + 1`). */
  readonly cursorsAt: number;
  /** Cell of ring 0's first sample. */
  readonly samplesAt: number;
  /** Per ring: its group's index. */
  readonly #groupOf: Uint8Array;
  readonly #members: readonly SampleWindow[];

  constructor(
    length: number,
    capacity: number = DEFAULT_SAMPLE_CAPACITY,
    counters = 0,
    groupStarts: readonly number[] = [0],
  ) {
    if (!Number.isSafeInteger(capacity) || capacity < 1) {
      throw new EngramDiagnosticsError(
        'ENGRAM_DIAGNOSTICS_INVALID_CONFIG',
        'ring capacity must be a positive safe integer',
      );
    }
    if (
      !Number.isSafeInteger(length) ||
      length < 1 ||
      length > MAX_RINGS ||
      groupStarts[0] !== 0 ||
      groupStarts.some(
        (start, g) =>
          !Number.isSafeInteger(start) ||
          start >= length ||
          (g > 0 && start <= (groupStarts[g - 1] as number)),
      )
    ) {
      throw new EngramDiagnosticsError('ENGRAM_DIAGNOSTICS_INVALID_ARGUMENT', 'ring groups are malformed');
    }
    this.length = length;
    this.capacity = capacity;
    this.groupsAt = counters;
    this.cursorsAt = counters + GROUP_CELLS * groupStarts.length;
    this.samplesAt = this.cursorsAt + 2 * length;
    this.cells = new Float64Array(this.samplesAt + length * capacity);
    this.#groupOf = new Uint8Array(length);
    groupStarts.forEach((start, g) => {
      this.#groupOf.fill(g, start);
      this.cells[this.groupsAt + GROUP_CELLS * g + GROUP_FROM] = start;
      this.cells[this.groupsAt + GROUP_CELLS * g + GROUP_TO] = groupStarts[g + 1] ?? length;
    });
    this.#members = Array.from({ length }, (_, index) => new RingSetMember(this, index));
  }

  /** The read view of ring `index`; throws for a position outside the set. */
  member(index: number): SampleWindow {
    const member = this.#members[index];
    if (member === undefined) {
      throw new EngramDiagnosticsError('ENGRAM_DIAGNOSTICS_INVALID_ARGUMENT', 'no ring at this position');
    }
    return member;
  }

  /** The cell holding ring `index`'s write position (its count is the next cell): its group's in lockstep. */
  #cursorCell(index: number): number {
    const at = this.groupsAt + GROUP_CELLS * (this.#groupOf[index] ?? 0);
    const mask = this.cells[at] ?? 0;
    return mask > 0 && (mask & (1 << index)) !== 0 ? at + GROUP_POSITION : this.cursorsAt + 2 * index;
  }

  /** Ring `index`'s all-time count of accepted samples. */
  count(index: number): number {
    return this.cells[this.#cursorCell(index) + 1] ?? 0;
  }

  /** A copy of ring `index`'s retained samples, oldest first. */
  values(index: number): number[] {
    const { cells, length, capacity, samplesAt } = this;
    const cursor = this.#cursorCell(index);
    const count = cells[cursor + 1] ?? 0;
    const retained = Math.min(count, capacity);
    // Oldest first: from the write position once the ring has wrapped, from 0 before.
    const start = count >= capacity ? (cells[cursor] ?? 0) : 0;
    const out = new Array<number>(retained);
    for (let k = 0; k < retained; k += 1) {
      const slot = start + k < capacity ? start + k : start + k - capacity;
      out[k] = cells[samplesAt + slot * length + index] ?? 0;
    }
    return out;
  }
}

/** One ring of a {@link NumberRingSet}, as a snapshot reads it. */
class RingSetMember implements SampleWindow {
  readonly #set: NumberRingSet;
  readonly #index: number;

  constructor(set: NumberRingSet, index: number) {
    this.#set = set;
    this.#index = index;
  }

  get count(): number {
    return this.#set.count(this.#index);
  }

  values(): number[] {
    return this.#set.values(this.#index);
  }
}

/** True for a distribution's state: a ring, or a ring of a set. */
export function isSampleWindow(value: unknown): value is SampleWindow {
  return value instanceof BoundedNumberRing || value instanceof RingSetMember;
}

/**
 * Pushes `scratch[i]` into ring `i` of `set` for every bit `i` set in `present`, all rings of group `group`
 * (see {@link NumberRingSet}; a set of one group by default); returns how many values were refused (negative,
 * NaN or infinite: never stored). The values come through a `Float64Array` and the writes happen here, in
 * loops without calls, so no sample is boxed on its way to its ring.
 */
export function recordSamples(set: NumberRingSet, scratch: Float64Array, present: number, group = 0): number {
  const { cells, length, capacity, cursorsAt, samplesAt } = set;
  const state = set.groupsAt + GROUP_CELLS * group;
  const from = cells[state + GROUP_FROM] as number;
  const to = cells[state + GROUP_TO] as number;
  // The group's rings that take a sample in this record: present, and a finite non-negative value.
  let valid = 0;
  let refused = 0;
  for (let i = from; i < to; i += 1) {
    if ((present & (1 << i)) === 0) continue;
    const value = scratch[i] as number;
    // `value >= 0` is false for NaN.
    if (value >= 0 && value !== Number.POSITIVE_INFINITY) valid |= 1 << i;
    else refused += 1;
  }
  if (valid === 0) return refused;
  let mask = cells[state + GROUP_MASK] as number;
  if (mask === 0) {
    // The group's first samples: these rings are its lockstep.
    mask = valid;
    cells[state + GROUP_MASK] = valid;
  }
  if (mask === valid) {
    const at = cells[state + GROUP_POSITION] as number;
    const row = samplesAt + at * length;
    for (let i = from; i < to; i += 1) if ((valid & (1 << i)) !== 0) cells[row + i] = scratch[i] as number;
    cells[state + GROUP_POSITION] = at + 1 === capacity ? 0 : at + 1;
    (cells[state + GROUP_COUNT] as number) += 1;
    return refused;
  }
  if (mask > 0) {
    // Another set of rings than the lockstep's: each ring of it takes the group's position and count, for good.
    for (let i = from; i < to; i += 1) {
      if ((mask & (1 << i)) === 0) continue;
      cells[cursorsAt + 2 * i] = cells[state + GROUP_POSITION] as number;
      cells[cursorsAt + 2 * i + 1] = cells[state + GROUP_COUNT] as number;
    }
    cells[state + GROUP_MASK] = GROUP_APART;
  }
  for (let i = from; i < to; i += 1) {
    if ((valid & (1 << i)) === 0) continue;
    const cursor = cursorsAt + 2 * i;
    const at = cells[cursor] as number;
    cells[samplesAt + at * length + i] = scratch[i] as number;
    cells[cursor] = at + 1 === capacity ? 0 : at + 1;
    (cells[cursor + 1] as number) += 1;
  }
  return refused;
}

/**
 * Nearest-rank percentile of an ascending array: `sorted[ceil(p·n) − 1]` (rank at least 1);
 * null for an empty array. Throws for a `p` outside 0..1.
 */
export function nearestRank(sorted: readonly number[], p: number): number | null {
  if (typeof p !== 'number' || !(p >= 0 && p <= 1)) {
    throw new EngramDiagnosticsError('ENGRAM_DIAGNOSTICS_INVALID_ARGUMENT', 'percentile must be within 0..1');
  }
  const n = sorted.length;
  if (n === 0) return null;
  // The epsilon absorbs binary noise such as 0.07 · 100 = 7.000000000000001.
  const rank = Math.min(n, Math.max(1, Math.ceil(p * n - 1e-9)));
  return sorted[rank - 1] ?? null;
}

/**
 * Summarises one or more rings at snapshot time (this sorts a copy; the record path never does). Several
 * rings are merged: `count` is the merged window, `total` the sum of all-time counts. Without samples the
 * percentiles are null, never 0.
 */
export function summarize(...rings: readonly (SampleWindow | undefined)[]): DistributionSummary {
  let total = 0;
  let merged: number[] = [];
  for (const ring of rings) {
    if (ring === undefined) continue;
    total += ring.count;
    merged = merged.length === 0 ? ring.values() : merged.concat(ring.values());
  }
  if (merged.length === 0) return { ...EMPTY_DISTRIBUTION, total };
  merged.sort((a, b) => a - b);
  return {
    count: merged.length,
    total,
    p50: nearestRank(merged, 0.5),
    p95: nearestRank(merged, 0.95),
    max: merged[merged.length - 1] ?? null,
  };
}
