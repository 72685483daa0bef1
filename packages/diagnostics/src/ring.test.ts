import { describe, expect, it } from 'vitest';
import { isEngramDiagnosticsError } from './errors.js';
import {
  BoundedNumberRing,
  GROUP_CELLS,
  NumberRingSet,
  nearestRank,
  recordSamples,
  summarize,
} from './ring.js';

describe('BoundedNumberRing', () => {
  it('keeps the newest `capacity` samples, oldest first, and counts every accepted push', () => {
    const ring = new BoundedNumberRing(3);
    for (const value of [1, 2, 3, 4, 5]) expect(ring.push(value)).toBe(true);
    expect(ring.size).toBe(3);
    expect(ring.count).toBe(5);
    expect(ring.values()).toEqual([3, 4, 5]);
  });

  it('has a default capacity of 256', () => {
    const ring = new BoundedNumberRing();
    for (let i = 0; i < 1000; i += 1) ring.push(i);
    expect(ring.capacity).toBe(256);
    expect(ring.size).toBe(256);
    expect(ring.values()[0]).toBe(744);
  });

  it('rejects non-finite, negative and non-number values and counts them', () => {
    const ring = new BoundedNumberRing(4);
    const bad: unknown[] = [
      Number.NaN,
      Number.POSITIVE_INFINITY,
      Number.NEGATIVE_INFINITY,
      -1,
      -0.001,
      '5',
      null,
    ];
    for (const value of bad) expect(ring.push(value as number)).toBe(false);
    expect(ring.rejected).toBe(bad.length);
    expect(ring.size).toBe(0);
    expect(ring.count).toBe(0);
    expect(ring.push(0)).toBe(true);
    expect(ring.values()).toEqual([0]);
  });

  it('returns a copy from values()', () => {
    const ring = new BoundedNumberRing(2);
    ring.push(1);
    const copy = ring.values();
    copy.push(99);
    copy[0] = 42;
    expect(ring.values()).toEqual([1]);
  });

  it('refuses a capacity that is not a positive integer', () => {
    for (const capacity of [0, -1, 1.5, Number.NaN]) {
      let caught: unknown;
      try {
        new BoundedNumberRing(capacity);
      } catch (error) {
        caught = error;
      }
      expect(isEngramDiagnosticsError(caught)).toBe(true);
    }
  });
});

describe('nearestRank', () => {
  it('is sorted[ceil(p·n) − 1]', () => {
    const sorted = [10, 20, 30, 40, 50, 60, 70, 80, 90, 100];
    expect(nearestRank(sorted, 0.5)).toBe(50);
    expect(nearestRank(sorted, 0.95)).toBe(100);
    expect(nearestRank(sorted, 0.9)).toBe(90);
    expect(nearestRank(sorted, 0.11)).toBe(20);
    expect(nearestRank(sorted, 1)).toBe(100);
    expect(nearestRank(sorted, 0)).toBe(10);
  });

  it('does not round up on binary noise (0.07 · 100 is rank 7)', () => {
    const sorted = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(nearestRank(sorted, 0.07)).toBe(7);
  });

  it('gives null for no samples and throws for p outside 0..1', () => {
    expect(nearestRank([], 0.5)).toBeNull();
    expect(() => nearestRank([1], 1.5)).toThrow(/percentile/);
    expect(() => nearestRank([1], Number.NaN)).toThrow(/percentile/);
  });
});

describe('summarize', () => {
  it('pins 1..257 pushed into a 256 ring: p50 129, p95 245, max 257', () => {
    const ring = new BoundedNumberRing(256);
    for (let i = 1; i <= 257; i += 1) ring.push(i);
    expect(summarize(ring)).toEqual({ count: 256, total: 257, p50: 129, p95: 245, max: 257 });
  });

  it('gives null percentiles (never 0) without samples', () => {
    expect(summarize(new BoundedNumberRing(8))).toEqual({
      count: 0,
      total: 0,
      p50: null,
      p95: null,
      max: null,
    });
    expect(summarize(undefined)).toEqual({ count: 0, total: 0, p50: null, p95: null, max: null });
  });

  it('is order-independent: samples pushed in reverse give the same figures', () => {
    const ring = new BoundedNumberRing(256);
    for (let i = 256; i >= 1; i -= 1) ring.push(i);
    expect(summarize(ring)).toEqual({ count: 256, total: 256, p50: 128, p95: 244, max: 256 });
  });

  it('merges several rings: count is the merged window, total the summed all-time counts', () => {
    const a = new BoundedNumberRing(2);
    const b = new BoundedNumberRing(2);
    for (const v of [1, 2, 3]) a.push(v);
    for (const v of [10, 20]) b.push(v);
    expect(summarize(a, undefined, b)).toEqual({ count: 4, total: 5, p50: 3, p95: 20, max: 20 });
  });
});

describe('NumberRingSet', () => {
  it('keeps, per ring, the samples, order and counts a BoundedNumberRing keeps for the same values', () => {
    const capacity = 3;
    const set = new NumberRingSet(4, capacity, 2);
    const rings = [0, 1, 2, 3].map(() => new BoundedNumberRing(capacity));
    const scratch = new Float64Array(4);
    const odd = [-1, Number.NaN, Number.POSITIVE_INFINITY];
    let refusedBySet = 0;
    let refusedByRings = 0;
    for (let step = 0; step < 40; step += 1) {
      // Ring i takes a value on the steps where bit i of the mask is set; every seventh value is refused.
      const present = (step * 5 + 3) % 16;
      for (let i = 0; i < 4; i += 1) {
        const value = (step + i) % 7 === 0 ? (odd[step % 3] as number) : step * 10 + i;
        scratch[i] = value;
        if ((present & (1 << i)) !== 0 && !rings[i]?.push(value)) refusedByRings += 1;
      }
      refusedBySet += recordSamples(set, scratch, present);
      for (let i = 0; i < 4; i += 1) {
        expect(set.member(i).values()).toEqual(rings[i]?.values());
        expect(set.member(i).count).toBe(rings[i]?.count);
        expect(summarize(set.member(i))).toEqual(summarize(rings[i]));
      }
    }
    expect(refusedBySet).toBe(refusedByRings);
    expect(refusedBySet).toBeGreaterThan(0);
    expect(Math.max(...[0, 1, 2, 3].map((i) => set.member(i).count))).toBeGreaterThan(capacity);
    // The owner's counters before the rings are never touched.
    expect([set.cells[0], set.cells[1]]).toEqual([0, 0]);
  });

  it('keeps groups in lockstep while their records give the same rings samples, and apart after, with the same samples', () => {
    const capacity = 4;
    // Two groups: rings 0–2 and 3–4. Each step pushes one group, as the record path does.
    const set = new NumberRingSet(5, capacity, 3, [0, 3]);
    const rings = [0, 1, 2, 3, 4].map(() => new BoundedNumberRing(capacity));
    const scratch = new Float64Array(5);
    const groupOf = (i: number): number => (i < 3 ? 0 : 1);
    const lockstep = (group: number): boolean => (set.cells[set.groupsAt + GROUP_CELLS * group] ?? 0) > 0;
    const seen: boolean[][] = [];
    let refusedBySet = 0;
    let refusedByRings = 0;
    for (let step = 0; step < 60; step += 1) {
      const group = step % 2;
      // Steps 0–19: every record gives rings 0 and 2 (group 0) and ring 3 (group 1) a sample, so both groups
      // stay in lockstep and wrap; then masks vary and values are refused now and then, so each group comes apart.
      let present = group === 0 ? 0b101 : 0b01000;
      if (step >= 20) present = group === 0 ? (step * 3) % 8 : ((step * 5) % 4) << 3;
      for (let i = 0; i < 5; i += 1) {
        const value = step >= 30 && (step + i) % 9 === 0 ? Number.NaN : step * 10 + i;
        scratch[i] = value;
        if ((present & (1 << i)) !== 0 && groupOf(i) === group && !rings[i]?.push(value)) refusedByRings += 1;
      }
      refusedBySet += recordSamples(set, scratch, present, group);
      seen.push([lockstep(0), lockstep(1)]);
      for (let i = 0; i < 5; i += 1) {
        expect(set.member(i).values()).toEqual(rings[i]?.values());
        expect(set.member(i).count).toBe(rings[i]?.count);
      }
    }
    expect(refusedBySet).toBe(refusedByRings);
    expect(refusedBySet).toBeGreaterThan(0);
    // Both groups were in lockstep after their rings wrapped, and apart by the end.
    expect(seen[19]).toEqual([true, true]);
    expect(set.member(0).count).toBeGreaterThan(capacity);
    expect(seen[59]).toEqual([false, false]);
    // The owner's counters before the groups are never touched.
    expect([set.cells[0], set.cells[1], set.cells[2]]).toEqual([0, 0, 0]);
  });

  it('refuses malformed groups', () => {
    for (const groups of [[], [1], [0, 0], [0, 3, 2], [0, 5], [0, 1.5]]) {
      expect(() => new NumberRingSet(5, 4, 0, groups)).toThrow(/groups/);
    }
    expect(() => new NumberRingSet(32, 4)).toThrow(/groups/);
  });

  it('refuses a capacity that is not a positive safe integer, and a position outside the set', () => {
    expect(() => new NumberRingSet(2, 0)).toThrow(/capacity/);
    expect(() => new NumberRingSet(2, 1.5)).toThrow(/capacity/);
    expect(() => new NumberRingSet(2, 4).member(2)).toThrow(/position/);
  });
});
