import { EngramEvalError } from './errors.js';

/**
 * Exact IR metrics with binary relevance (ARCHITECTURE.md, "Tests"; definitions in docs/guides/evaluation.md).
 *
 * Positions are those of the ranking as given, 1-based. An id that repeats counts only at its first
 * position: a later copy still occupies its position but gains nothing, so repeating a hit can never
 * improve a score. Relevant ids form a set; an empty set is rejected (`ENGRAM_EVAL_NO_RELEVANT_IDS`),
 * because every metric would be undefined for it.
 */

/** The three per-query figures the reports carry. */
export interface QueryScores {
  readonly recallAt5: number;
  readonly mrrAt10: number;
  readonly ndcgAt10: number;
}

function relevantSet(relevantIds: Iterable<string>): ReadonlySet<string> {
  const set = new Set(relevantIds);
  if (set.size === 0) {
    throw new EngramEvalError(
      'ENGRAM_EVAL_NO_RELEVANT_IDS',
      'A query without relevant ids cannot be scored; every query needs at least one relevant id.',
    );
  }
  return set;
}

function checkK(k: number): void {
  if (!Number.isInteger(k) || k < 1) {
    throw new EngramEvalError('ENGRAM_EVAL_INVALID_METRIC_ARGUMENT', 'The cut-off k must be an integer ≥ 1.');
  }
}

/**
 * Gains of the first k positions: 1 where the id is relevant and seen for the first time, else 0.
 */
function firstOccurrenceGains(ranked: readonly string[], relevant: ReadonlySet<string>, k: number): number[] {
  const seen = new Set<string>();
  const gains: number[] = [];
  const end = Math.min(k, ranked.length);
  for (let i = 0; i < end; i += 1) {
    const id = ranked[i] as string;
    gains.push(relevant.has(id) && !seen.has(id) ? 1 : 0);
    seen.add(id);
  }
  return gains;
}

/** Recall@k: distinct relevant ids among the first k positions ÷ number of relevant ids. */
export function recallAt(k: number, ranked: readonly string[], relevantIds: Iterable<string>): number {
  checkK(k);
  const relevant = relevantSet(relevantIds);
  let found = 0;
  for (const gain of firstOccurrenceGains(ranked, relevant, k)) found += gain;
  return found / relevant.size;
}

/** MRR@k for one query: 1 ÷ the position of the first relevant id within the first k, or 0. */
export function mrrAt(k: number, ranked: readonly string[], relevantIds: Iterable<string>): number {
  checkK(k);
  const relevant = relevantSet(relevantIds);
  const gains = firstOccurrenceGains(ranked, relevant, k);
  const index = gains.indexOf(1);
  return index === -1 ? 0 : 1 / (index + 1);
}

/**
 * nDCG@k: DCG = Σ gain_i / log2(i + 1) over positions i = 1..k, divided by the ideal DCG, which puts
 * min(|relevant|, k) relevant ids at positions 1, 2, … .
 */
export function ndcgAt(k: number, ranked: readonly string[], relevantIds: Iterable<string>): number {
  checkK(k);
  const relevant = relevantSet(relevantIds);
  const gains = firstOccurrenceGains(ranked, relevant, k);
  let dcg = 0;
  for (let i = 0; i < gains.length; i += 1) {
    if (gains[i] === 1) dcg += 1 / Math.log2(i + 2);
  }
  let ideal = 0;
  const idealCount = Math.min(relevant.size, k);
  for (let i = 0; i < idealCount; i += 1) ideal += 1 / Math.log2(i + 2);
  return dcg / ideal;
}

/** The report's three figures for one ranking: Recall@5, MRR@10, nDCG@10. */
export function scoreRanking(ranked: readonly string[], relevantIds: Iterable<string>): QueryScores {
  const relevant = [...relevantIds];
  return {
    recallAt5: recallAt(5, ranked, relevant),
    mrrAt10: mrrAt(10, ranked, relevant),
    ndcgAt10: ndcgAt(10, ranked, relevant),
  };
}
