import type { RetrievalArm } from '@engram/contracts/enums';
import type { ChunkSpan, MemoryRecord } from '@engram/store';
import { explain, type RetrievalResult } from './explanation.js';

/** How the two arms are combined: calibrated scores with arm agreement (the default), or reciprocal ranks. */
export type FusionMethod = 'calibrated' | 'rrf';

/**
 * Fusion parameters. `final = relevance + importance·w_i + recency·w_r`, with
 * `recency = 0.5^(age / halfLife)` where age is measured from the row's last edit (`updatedAt` once its
 * revision moved past 1), else from its creation — so history imported with old timestamps (written now, with
 * its original `createdAt`) does not look new — and `relevance`:
 *
 * - `calibrated` (default): `w_lex·α·L̂ + w_vec·(1 − α)·trust·V̂`. Each arm's scores are min-max normalised
 *   over the arm's candidates in this call (`L̂ = (bm25 − min) / (max − min)`, likewise `V̂` for the cosine
 *   similarity; 1 when all are equal), which makes the two arms' scores comparable (Lee 1997, "Analyses of
 *   Multiple Evidence Combination", SIGIR; the convex combination of normalised scores is analysed by Bruch,
 *   Gai and Ingber 2023, "An Analysis of Fusion Functions for Hybrid Retrieval", ACM TOIS 42(1)).
 *   `trust = max(agreement^p, confidence)` is how much the vector arm's evidence counts in this call:
 *   `agreement` (0..1) is the order-aware overlap of the two arms' first `agreementDepth` hits: the average,
 *   over d = 1..depth, of the overlap of their first d hits beyond what two unrelated lists drawn from the
 *   same candidates would share, `(overlap_d − expected_d) / (n_d − expected_d)` with
 *   `n_d = min(d, |lexical|, |vector|)` and `expected_d = min(d, |lexical|)·min(d, |vector|) / |candidates|`
 *   (average overlap, Webber, Moffat and Zobel 2010, "A Similarity Measure for Indefinite Rankings", ACM
 *   TOIS 28(4); each depth chance-corrected like Cohen's kappa, 1960) — agreement between
 *   independent scoring functions predicts that a query is answered well (Aslam and Pavlu 2007, "Query
 *   Hardness Estimation Using Jensen-Shannon Divergence Among Multiple Scoring Functions", ECIR); the power
 *   `p` (default 2) makes the response conservative, so partial agreement, typical of an embedder that
 *   mostly re-finds the lexical answer, moves the order little. `confidence` is the vector arm's own margin
 *   evidence (see {@link VectorEvidence}): a first hit that stands far above its neighbours counts even when
 *   the lexical arm found something else (a paraphrase with no shared word). An embedder that carries no
 *   evidence for a query has neither, so it cannot reorder the lexical answer. With no lexical hit the
 *   vector arm counts fully.
 * - `rrf`: `Σ_arm w_arm / (k + rank_arm)` (ranks 1-based among the arm's revalidated candidates), Cormack,
 *   Clarke and Büttcher (2009), "Reciprocal Rank Fusion Outperforms Condorcet and Individual Rank Learning
 *   Methods", SIGIR.
 */
export interface FusionWeights {
  /** The fusion function (default `calibrated`). */
  readonly method: FusionMethod;
  /** Share of the lexical arm in the calibrated combination, 0..1 (default 0.7). */
  readonly alpha: number;
  /** How many of each arm's first hits the agreement compares (default 10). */
  readonly agreementDepth: number;
  /** The power of the agreement in the vector arm's share (default 2). */
  readonly agreementPower: number;
  /** RRF constant (default 60). */
  readonly k: number;
  /** Weight of the lexical arm's term (default 1). */
  readonly lexical: number;
  /** Weight of the vector arm's term (default 1). */
  readonly vector: number;
  /** Weight of importance (0..1) — small, so relevance dominates (default 0.0005). */
  readonly importance: number;
  /** Weight of recency (0..1) — small, so relevance dominates (default 0.00025). */
  readonly recency: number;
  /** Half-life of the recency factor in ms (default 30 days). */
  readonly recencyHalfLifeMs: number;
}

/**
 * Default fusion weights. Calibrated relevance lies in 0..1 and RRF terms differ by 1/61 − 1/62 ≈ 0.00026
 * between ranks 1 and 2: importance (at most 0.0005) and recency (at most 0.00025) can reorder near-ties only.
 * `alpha` 0.7 and `agreementPower` 2, with the margins of {@link DEFAULT_VECTOR_EVIDENCE}, were chosen on the
 * development split of the public evaluation sets with one rule: the largest worst-case gain of the hybrid over
 * its better arm, over every set and embedder (ties broken by the mean gain), among the settings that keep the
 * fixture gate (see docs/design/fusion.md).
 */
export const DEFAULT_FUSION_WEIGHTS: FusionWeights = Object.freeze({
  method: 'calibrated',
  alpha: 0.7,
  agreementDepth: 10,
  agreementPower: 2,
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
 * The arm's confidence is `clamp((margin − noiseMargin) / (fullMargin − noiseMargin), 0, 1)`, with the
 * relative margin `margin = (s₁ − s_depth) / s₁`: the share of the first hit's similarity that the arm's
 * `depth`-th hit lacks (before the threshold). The margin is relative because embedders place similarities on
 * different scales: unrelated short texts score 0.1–0.2 with a hashing embedder and 0.3–0.5 with a neural one,
 * so an absolute gap that is evidence for one is noise for the other, while the ratio of the two hits does not
 * change when all similarities are scaled by one factor (a higher floor of unrelated texts still reads as a
 * smaller margin). A first hit with no positive similarity, or a margin that is not a number, carries no
 * evidence (confidence 0). A first hit just above 0 has a large relative margin; the similarity threshold
 * (0.2 by default) drops such hits before they count. With fewer than `depth` hits the neighbourhood is too
 * small to judge and the arm counts fully.
 */
export interface VectorEvidence {
  /** A relative margin at or below this is treated as noise: confidence 0 (default 0.35). */
  readonly noiseMargin: number;
  /** A relative margin at or above this gives full confidence (default 0.7). */
  readonly fullMargin: number;
  /** The neighbour the first hit is compared with (default 10). */
  readonly depth: number;
}

/**
 * Default vector-evidence calibration (see {@link VectorEvidence}), chosen with the fusion weights by the rule
 * in {@link DEFAULT_FUSION_WEIGHTS}.
 */
export const DEFAULT_VECTOR_EVIDENCE: VectorEvidence = Object.freeze({
  noiseMargin: 0.35,
  fullMargin: 0.7,
  depth: 10,
});

/**
 * The vector arm's confidence (0..1) from the similarities it returned, best first. Pure: it depends on the
 * top `depth` hits only, never on the call's limit.
 */
export function vectorConfidence(similarities: readonly number[], evidence: VectorEvidence): number {
  if (similarities.length < evidence.depth) return 1;
  const first = similarities[0] as number;
  if (!(first > 0)) return 0;
  const margin = (first - (similarities[evidence.depth - 1] as number)) / first;
  if (Number.isNaN(margin)) return 0;
  const span = evidence.fullMargin - evidence.noiseMargin;
  if (span <= 0) return margin >= evidence.fullMargin ? 1 : 0;
  return Math.max(0, Math.min(1, (margin - evidence.noiseMargin) / span));
}

/** The fields of a candidate's row that fusion reads. */
export type FusionRecord = Pick<MemoryRecord, 'id' | 'revision' | 'importance' | 'createdAt' | 'updatedAt'>;

/**
 * A revalidated candidate with its per-arm evidence. Its row may be only the fields ranking reads (a brief):
 * the search reads the full rows of the results it returns.
 */
export interface FusionCandidate<R extends FusionRecord = MemoryRecord> {
  readonly record: R;
  readonly lexicalRank?: number;
  readonly lexicalScore?: number;
  /** What a memory's neighbours and session added to `lexicalScore` (see `RetrievalExplanation.conversation`). */
  readonly conversation?: { readonly neighbour: number; readonly session: number };
  /** What the long-memory prior added to `lexicalScore` (see `RetrievalExplanation.longMemory`). */
  readonly longMemory?: number;
  /** The window the query named and what it added to `lexicalScore` (see `RetrievalExplanation.time`). */
  readonly time?: { readonly from: number; readonly to: number; readonly gain: number };
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

/** A row the lexical arm found, or with a positive relevance. */
function hasEvidence(r: RetrievalResult): boolean {
  return r.explanation.relevance > 0 || r.explanation.arms.includes('lexical');
}

/**
 * Compares two results: rows with evidence (found by the lexical arm, or a positive relevance) before rows found only by a silenced vector
 * arm (weight or agreement 0), then higher final score, then ascending id (a total, deterministic order).
 * Silenced rows keep their vector order (their final score is their unweighted RRF term), after every row
 * with evidence.
 */
export function compareResults(a: RetrievalResult, b: RetrievalResult): number {
  const tierA = hasEvidence(a) ? 0 : 1;
  const tierB = hasEvidence(b) ? 0 : 1;
  if (tierA !== tierB) return tierA - tierB;
  if (a.score !== b.score) return b.score - a.score;
  return a.record.id < b.record.id ? -1 : a.record.id > b.record.id ? 1 : 0;
}

/** The calibration of one call: each arm's score range and the arms' agreement (see {@link FusionWeights}). */
export interface FusionCalibration {
  readonly lexical: { readonly min: number; readonly max: number };
  readonly vector: { readonly min: number; readonly max: number };
  /** 0..1; 1 when one arm has no hits. */
  readonly agreement: number;
}

/**
 * The calibration of a call's candidates. Pure.
 *
 * The agreement is the average, over the depths d = 1..`depth`, of the chance-corrected overlap of the two
 * arms' first d hits — the average overlap of Webber, Moffat and Zobel (2010), "A Similarity Measure for
 * Indefinite Rankings" (ACM TOIS 28(4)), with each depth corrected for chance like Cohen's kappa. Unlike the
 * overlap of the two top-`depth` sets alone, it counts order: two arms that find the same ten rows but put
 * different ones first agree only partly, so neither can take the other's first place on agreement alone.
 */
export function calibrate(
  candidates: readonly FusionCandidate<FusionRecord>[],
  depth: number,
): FusionCalibration {
  const lexical = { min: Number.POSITIVE_INFINITY, max: Number.NEGATIVE_INFINITY };
  const vector = { min: Number.POSITIVE_INFINITY, max: Number.NEGATIVE_INFINITY };
  let lexicalCount = 0;
  let vectorCount = 0;
  // For a row both arms found within `depth`: the depth from which it is in both top lists.
  const sharedFrom: number[] = [];
  for (const c of candidates) {
    if (c.lexicalRank !== undefined) {
      lexicalCount += 1;
      const score = c.lexicalScore ?? 0;
      lexical.min = Math.min(lexical.min, score);
      lexical.max = Math.max(lexical.max, score);
    }
    if (c.vectorRank !== undefined) {
      vectorCount += 1;
      const sim = c.similarity ?? 0;
      vector.min = Math.min(vector.min, sim);
      vector.max = Math.max(vector.max, sim);
    }
    if (c.lexicalRank !== undefined && c.vectorRank !== undefined) {
      const from = Math.max(c.lexicalRank, c.vectorRank);
      if (from <= depth) sharedFrom.push(from);
    }
  }
  if (Math.min(depth, lexicalCount, vectorCount) === 0) return { lexical, vector, agreement: 1 };
  let total = 0;
  for (let d = 1; d <= depth; d += 1) {
    const inLexical = Math.min(d, lexicalCount);
    const inVector = Math.min(d, vectorCount);
    const n = Math.min(inLexical, inVector);
    let both = 0;
    for (const from of sharedFrom) if (from <= d) both += 1;
    // Chance-corrected (as Cohen's kappa): two unrelated top lists drawn from the candidates overlap by
    // `expected` rows on average, which is large when an agent has few rows.
    const expected = (inLexical * inVector) / candidates.length;
    total += n > expected ? Math.max(0, Math.min(1, (both - expected) / (n - expected))) : 0;
  }
  return { lexical, vector, agreement: total / depth };
}

/** Min-max normalisation into 0..1 (1 when the range is empty). */
function normalise(value: number, range: { readonly min: number; readonly max: number }): number {
  return range.max > range.min ? (value - range.min) / (range.max - range.min) : 1;
}

/** A fused result: a {@link RetrievalResult} whose row is the candidate's (a brief or the full record). */
export type FusedResult<R extends FusionRecord> = Omit<RetrievalResult, 'record'> & { readonly record: R };

/** One scored candidate, before its explanation is built. */
interface Scored<R extends FusionRecord> {
  readonly candidate: FusionCandidate<R>;
  readonly arms: RetrievalArm[];
  readonly rrf: number;
  readonly relevance: number;
  readonly recency: number;
  readonly final: number;
  /** 0 for a row with evidence (see {@link compareResults}), 1 for a row only a silenced vector arm found. */
  readonly tier: number;
}

/** {@link compareResults} over scored candidates. */
function compareScored(a: Scored<FusionRecord>, b: Scored<FusionRecord>): number {
  if (a.tier !== b.tier) return a.tier - b.tier;
  if (a.final !== b.final) return b.final - a.final;
  const x = a.candidate.record.id;
  const y = b.candidate.record.id;
  return x < y ? -1 : x > y ? 1 : 0;
}

/**
 * Fuses revalidated candidates into a total order (see {@link FusionWeights} for the formula). Pure: the
 * same candidates, weights and `now` always give the same order, so the first k of a top-(k+1) answer are
 * the top-k answer. With `limit`, only the first `limit` results are returned, and only theirs have their
 * explanation built (the same as the first `limit` of the whole answer).
 */
export function fuseCandidates<R extends FusionRecord = MemoryRecord>(
  candidates: readonly FusionCandidate<R>[],
  weights: FusionWeights,
  now: number,
  vectorWeight: number = weights.vector,
  vectorConfidence = 0,
  limit: number = Number.POSITIVE_INFINITY,
): FusedResult<R>[] {
  const calibrated = weights.method === 'calibrated';
  const cal = calibrate(candidates, weights.agreementDepth);
  const trust = Math.max(cal.agreement ** weights.agreementPower, Math.max(0, Math.min(1, vectorConfidence)));
  const scored = candidates.map((candidate): Scored<R> => {
    const arms: RetrievalArm[] = [];
    let rrf = 0;
    let fused = 0;
    if (candidate.lexicalRank !== undefined) {
      arms.push('lexical');
      rrf += weights.lexical / (weights.k + candidate.lexicalRank);
      fused += weights.lexical * weights.alpha * normalise(candidate.lexicalScore ?? 0, cal.lexical);
    }
    if (candidate.vectorRank !== undefined) {
      arms.push('vector');
      rrf += vectorWeight / (weights.k + candidate.vectorRank);
      const share = vectorWeight * (1 - weights.alpha) * trust;
      fused += share * normalise(candidate.similarity ?? 0, cal.vector);
    }
    const relevance = calibrated ? fused : rrf;
    const record = candidate.record;
    const changedAt = record.revision > 1 ? record.updatedAt : record.createdAt;
    const recency = recencyFactor(changedAt, now, weights.recencyHalfLifeMs);
    const silenced = relevance === 0 && candidate.vectorRank !== undefined;
    const final = silenced
      ? 1 / (weights.k + (candidate.vectorRank as number))
      : relevance + weights.importance * record.importance + weights.recency * recency;
    const tier = relevance > 0 || candidate.lexicalRank !== undefined ? 0 : 1;
    return { candidate, arms, rrf, relevance, recency, final, tier };
  });
  scored.sort(compareScored);
  const kept = scored.length > limit ? scored.slice(0, Math.max(0, limit)) : scored;
  return kept.map(({ candidate, arms, rrf, relevance, recency, final }): FusedResult<R> => {
    const explanation = explain(candidate, {
      arms,
      vectorWeight,
      rrf,
      relevance,
      ...(calibrated && candidate.vectorRank !== undefined ? { agreement: cal.agreement, trust } : {}),
      importance: candidate.record.importance,
      recency,
      final,
    });
    return { record: candidate.record, score: final, explanation };
  });
}
