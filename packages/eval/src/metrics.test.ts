import { describe, expect, it } from 'vitest';
import { isEngramEvalError } from './errors.js';
import { mrrAt, ndcgAt, recallAt, scoreRanking } from './metrics.js';

// log2 values used below: log2(2) = 1, log2(3) = 1.584963, log2(4) = 2, log2(5) = 2.321928, log2(7) = 2.807355.

describe('one relevant id', () => {
  const ranked = ['a', 'b', 'c', 'd', 'e', 'f'];

  it('scores a hit at position 3', () => {
    // Recall@5: c is at position 3 ≤ 5 → 1 / 1 = 1.
    expect(recallAt(5, ranked, ['c'])).toBe(1);
    // MRR@10: 1 / 3.
    expect(mrrAt(10, ranked, ['c'])).toBeCloseTo(1 / 3, 12);
    // nDCG@10: DCG = 1 / log2(3 + 1) = 1 / 2 = 0.5; ideal DCG = 1 / log2(2) = 1 → 0.5.
    expect(ndcgAt(10, ranked, ['c'])).toBeCloseTo(0.5, 12);
  });

  it('gives no recall for a hit just past the cut-off, but still MRR and nDCG within 10', () => {
    // f is at position 6: Recall@5 = 0; MRR@10 = 1/6; nDCG@10 = 1 / log2(7) = 0.356207.
    expect(recallAt(5, ranked, ['f'])).toBe(0);
    expect(mrrAt(10, ranked, ['f'])).toBeCloseTo(1 / 6, 12);
    expect(ndcgAt(10, ranked, ['f'])).toBeCloseTo(0.3562071871080222, 12);
  });

  it('scores zero when the relevant id is missing or the ranking is empty', () => {
    expect(scoreRanking(ranked, ['z'])).toEqual({ recallAt5: 0, mrrAt10: 0, ndcgAt10: 0 });
    expect(scoreRanking([], ['z'])).toEqual({ recallAt5: 0, mrrAt10: 0, ndcgAt10: 0 });
  });

  it('scores a perfect ranking 1 everywhere', () => {
    expect(scoreRanking(['a', 'b'], ['a'])).toEqual({ recallAt5: 1, mrrAt10: 1, ndcgAt10: 1 });
  });

  it('ignores hits past position 10 for MRR and nDCG', () => {
    const long = ['0', '1', '2', '3', '4', '5', '6', '7', '8', '9', 'hit'];
    expect(mrrAt(10, long, ['hit'])).toBe(0);
    expect(ndcgAt(10, long, ['hit'])).toBe(0);
    // With k = 11 it counts: 1 / 11.
    expect(mrrAt(11, long, ['hit'])).toBeCloseTo(1 / 11, 12);
  });
});

describe('several relevant ids', () => {
  // Relevant r1, r2, r3 at positions 2, 4 and 6.
  const ranked = ['x', 'r1', 'y', 'r2', 'z', 'r3'];
  const relevant = ['r1', 'r2', 'r3'];

  it('computes recall over the distinct relevant ids', () => {
    // Recall@5: r1 (2) and r2 (4) are in the top 5, r3 (6) is not → 2 / 3.
    expect(recallAt(5, ranked, relevant)).toBeCloseTo(2 / 3, 12);
  });

  it('takes the first relevant position for MRR', () => {
    // MRR@10: first relevant at position 2 → 1 / 2.
    expect(mrrAt(10, ranked, relevant)).toBe(0.5);
  });

  it('divides by the ideal DCG of three relevant ids', () => {
    // DCG = 1/log2(3) + 1/log2(5) + 1/log2(7) = 0.630930 + 0.430677 + 0.356207 = 1.417813.
    // Ideal: three hits at positions 1..3 = 1 + 0.630930 + 1/log2(4) (0.5) = 2.130930.
    // nDCG@10 = 1.417813 / 2.130930 = 0.665350.
    expect(ndcgAt(10, ranked, relevant)).toBeCloseTo(0.6653497124326151, 12);
  });

  it('caps the ideal DCG at k positions when there are more relevant ids than k', () => {
    const twelve = Array.from({ length: 12 }, (_, i) => `r${i}`);
    // All 12 ranked first: the first 10 positions are all hits, ideal uses min(12, 10) = 10 positions → 1.
    expect(ndcgAt(10, twelve, twelve)).toBeCloseTo(1, 12);
    // Recall@5: 5 of 12 relevant ids fit in the top 5.
    expect(recallAt(5, twelve, twelve)).toBeCloseTo(5 / 12, 12);
  });

  it('treats relevant ids as a set', () => {
    // Duplicated relevant ids {a, a} are one relevant id: a at position 1 → recall 1, not 1/2.
    expect(recallAt(5, ['a'], ['a', 'a'])).toBe(1);
  });
});

describe('duplicate ids in a ranking', () => {
  it('counts a repeated relevant id once, at its first position, while its copies occupy positions', () => {
    // r1 r1 r1 x y r2: r1 counts at position 1 only; the copies at 2 and 3 gain nothing but hold their
    // places, so r2 stays at position 6.
    const ranked = ['r1', 'r1', 'r1', 'x', 'y', 'r2'];
    // Recall@5: only r1 → 1 / 2.
    expect(recallAt(5, ranked, ['r1', 'r2'])).toBe(0.5);
    // MRR@10: 1 / 1.
    expect(mrrAt(10, ranked, ['r1', 'r2'])).toBe(1);
    // DCG = 1/log2(2) + 1/log2(7) = 1 + 0.356207 = 1.356207; ideal = 1 + 1/log2(3) = 1.630930;
    // nDCG@10 = 0.831555.
    expect(ndcgAt(10, ranked, ['r1', 'r2'])).toBeCloseTo(0.8315546295836225, 12);
  });

  it('never lets repetition raise a score above 1', () => {
    // a a a a: DCG would be 1 + 0.63 + 0.5 + 0.43 if copies counted; counted once it is 1 / 1.
    expect(ndcgAt(10, ['a', 'a', 'a', 'a'], ['a'])).toBe(1);
    expect(recallAt(5, ['a', 'a', 'a', 'a'], ['a'])).toBe(1);
  });

  it('places the first relevant id after a repeated non-relevant one', () => {
    // x x r: r is at position 3 → MRR 1/3, nDCG 1/log2(4) = 0.5.
    expect(mrrAt(10, ['x', 'x', 'r'], ['r'])).toBeCloseTo(1 / 3, 12);
    expect(ndcgAt(10, ['x', 'x', 'r'], ['r'])).toBeCloseTo(0.5, 12);
  });
});

describe('rejections', () => {
  it('rejects a query without relevant ids with a typed error', () => {
    for (const metric of [recallAt, mrrAt, ndcgAt]) {
      let caught: unknown;
      try {
        metric(5, ['a'], []);
      } catch (error) {
        caught = error;
      }
      expect(isEngramEvalError(caught)).toBe(true);
      expect((caught as { code: string }).code).toBe('ENGRAM_EVAL_NO_RELEVANT_IDS');
    }
  });

  it('rejects a cut-off that is not a positive integer', () => {
    expect(() => recallAt(0, ['a'], ['a'])).toThrow(
      expect.objectContaining({ code: 'ENGRAM_EVAL_INVALID_METRIC_ARGUMENT' }),
    );
    expect(() => ndcgAt(2.5, ['a'], ['a'])).toThrow(
      expect.objectContaining({ code: 'ENGRAM_EVAL_INVALID_METRIC_ARGUMENT' }),
    );
  });
});
