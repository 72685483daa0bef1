import type { RetrievalArm } from '@engram/contracts';
import type { ChunkSpan, MemoryRecord } from '@engram/store';
import { explain, type RetrievalResult } from './explanation.js';

/**
 * Fusion parameters. `final = rrf + importance·w_i + recency·w_r` with
 * `rrf = Σ_arm w_arm / (k + rank_arm)` (ranks 1-based among the arm's revalidated candidates) and
 * `recency = 0.5^(age / halfLife)` where age is measured from the row's `updatedAt`.
 */
export interface FusionWeights {
  /** RRF constant (default 60). */
  readonly k: number;
  /** Weight of the lexical arm's RRF term (default 1). */
  readonly lexical: number;
  /** Weight of the vector arm's RRF term (default 1). */
  readonly vector: number;
  /** Weight of importance (0..1) — small, so relevance dominates (default 0.0005). */
  readonly importance: number;
  /** Weight of recency (0..1) — small, so relevance dominates (default 0.00025). */
  readonly recency: number;
  /** Half-life of the recency factor in ms (default 30 days). */
  readonly recencyHalfLifeMs: number;
}

/**
 * Default fusion weights. Between ranks 1 and 2 of one arm, RRF differs by 1/61 − 1/62 ≈ 0.00026, between
 * ranks 1 and 10 by ≈ 0.0023, and a second arm at rank ≤ 128 adds more than 1/188 ≈ 0.0053: importance
 * (at most 0.0005) and recency (at most 0.00025) can reorder near-ties only.
 */
export const DEFAULT_FUSION_WEIGHTS: FusionWeights = Object.freeze({
  k: 60,
  lexical: 1,
  vector: 1,
  importance: 0.0005,
  recency: 0.00025,
  recencyHalfLifeMs: 30 * 24 * 60 * 60 * 1000,
});

/**
 * How much the vector arm's ranks count in one call. An embedder whose best hit does not stand out from its
 * neighbourhood carries no evidence for that query: its ranks would only reorder the lexical answer at random.
 * The arm's weight is `fusion.vector · clamp((margin − noiseMargin) / (fullMargin − noiseMargin), 0, 1)`, with
 * `margin` = similarity of the arm's first hit − similarity of its `depth`-th hit (before the threshold).
 * With fewer than `depth` hits the neighbourhood is too small to judge and the arm counts fully.
 */
export interface VectorEvidence {
  /** A margin at or below this is treated as noise: weight 0 (default 0.1). */
  readonly noiseMargin: number;
  /** A margin at or above this gives the arm its full weight (default 0.2). */
  readonly fullMargin: number;
  /** The neighbour the first hit is compared with (default 10). */
  readonly depth: number;
}

/** Default vector-evidence calibration (see {@link VectorEvidence}). */
export const DEFAULT_VECTOR_EVIDENCE: VectorEvidence = Object.freeze({
  noiseMargin: 0.1,
  fullMargin: 0.2,
  depth: 10,
});

/**
 * The vector arm's confidence (0..1) from the similarities it returned, best first. Pure: it depends on the
 * top `depth` hits only, never on the call's limit.
 */
export function vectorConfidence(similarities: readonly number[], evidence: VectorEvidence): number {
  if (similarities.length < evidence.depth) return 1;
  const margin = (similarities[0] as number) - (similarities[evidence.depth - 1] as number);
  const span = evidence.fullMargin - evidence.noiseMargin;
  if (span <= 0) return margin >= evidence.fullMargin ? 1 : 0;
  return Math.max(0, Math.min(1, (margin - evidence.noiseMargin) / span));
}

/** A revalidated candidate with its per-arm evidence. */
export interface FusionCandidate {
  readonly record: MemoryRecord;
  readonly lexicalRank?: number;
  readonly lexicalScore?: number;
  readonly vectorRank?: number;
  readonly similarity?: number;
  /** The matching chunk of a chunked memory (see `RetrievalExplanation.chunk`). */
  readonly chunk?: ChunkSpan;
}

/** The recency factor `0.5^(age / halfLife)` of a row at `now` (1 for a row from the future). */
export function recencyFactor(updatedAt: number, now: number, halfLifeMs: number): number {
  const age = Math.max(0, now - updatedAt);
  if (halfLifeMs <= 0) return age === 0 ? 1 : 0;
  return 0.5 ** (age / halfLifeMs);
}

/**
 * Compares two results: rows with evidence (a positive RRF term) before rows found only by a silenced vector arm
 * (weight 0), then higher final score, then ascending id (a total, deterministic order). Silenced rows keep
 * their vector order (their final score is their unweighted RRF term), after every row with evidence.
 */
export function compareResults(a: RetrievalResult, b: RetrievalResult): number {
  const tierA = a.explanation.rrf > 0 ? 0 : 1;
  const tierB = b.explanation.rrf > 0 ? 0 : 1;
  if (tierA !== tierB) return tierA - tierB;
  if (a.score !== b.score) return b.score - a.score;
  return a.record.id < b.record.id ? -1 : a.record.id > b.record.id ? 1 : 0;
}

/**
 * Fuses revalidated candidates into a total order (see {@link FusionWeights} for the formula). Pure: the
 * same candidates, weights and `now` always give the same order, so the first k of a top-(k+1) answer are
 * the top-k answer.
 */
export function fuseCandidates(
  candidates: readonly FusionCandidate[],
  weights: FusionWeights,
  now: number,
  vectorWeight: number = weights.vector,
): RetrievalResult[] {
  const results = candidates.map((candidate): RetrievalResult => {
    const arms: RetrievalArm[] = [];
    let rrf = 0;
    if (candidate.lexicalRank !== undefined) {
      arms.push('lexical');
      rrf += weights.lexical / (weights.k + candidate.lexicalRank);
    }
    if (candidate.vectorRank !== undefined) {
      arms.push('vector');
      rrf += vectorWeight / (weights.k + candidate.vectorRank);
    }
    const importance = candidate.record.importance;
    const recency = recencyFactor(candidate.record.updatedAt, now, weights.recencyHalfLifeMs);
    // A row found only by a silenced vector arm has no evidence to weigh: it keeps its vector order, after
    // every row that has (compareResults puts it in the second tier).
    const silenced = rrf === 0 && candidate.vectorRank !== undefined;
    const final = silenced
      ? 1 / (weights.k + (candidate.vectorRank as number))
      : rrf + weights.importance * importance + weights.recency * recency;
    const explanation = explain(candidate, { arms, vectorWeight, rrf, importance, recency, final });
    return { record: candidate.record, score: final, explanation };
  });
  return results.sort(compareResults);
}
