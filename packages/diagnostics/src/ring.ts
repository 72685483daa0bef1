import { DEFAULT_SAMPLE_CAPACITY, type DistributionSummary, EMPTY_DISTRIBUTION } from '@engram/contracts';
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
export function summarize(...rings: readonly (BoundedNumberRing | undefined)[]): DistributionSummary {
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
