/**
 * Long memories in the lexical arm. A memory longer than the store's chunk budget is indexed chunk by chunk and
 * scores as its best chunk, which ranks a long memory whose evidence is spread over many chunks (a whole
 * session of a conversation) below what scoring it whole would. When the arm's answer holds a chunked memory,
 * the store also gives each hit its BM25 score as one whole memory (`LexicalHit.memoryScore`, with statistics
 * over memories rather than chunks), and each memory's lexical score becomes
 *
 * `score + weight · top · memoryScore / max memoryScore`
 *
 * where `top` is the call's highest chunk score and the maximum is over the arm's hits: a prior in the chunk
 * scores' units, as the conversation's session prior is. An answer without chunked memories gets no memory
 * scores and keeps its scores and order.
 */
export interface LongMemoryScoring {
  /** Weight of the whole-memory prior, as a share of the call's top lexical score (0 turns it off). */
  readonly weight: number;
}

/**
 * Default weight 1, chosen on the development splits by one rule (see docs/design/fusion.md, "Long
 * memories").
 */
export const DEFAULT_LONG_MEMORY_SCORING: LongMemoryScoring = Object.freeze({ weight: 1 });

/** Off: every memory scores as its best chunk. */
export const NO_LONG_MEMORY_SCORING: LongMemoryScoring = Object.freeze({ weight: 0 });

/** The prior a memory gains: `weight · top · memoryScore / max memoryScore` (0 without a memory score). */
export function longMemoryGain(
  memoryScore: number | undefined,
  maxMemoryScore: number,
  top: number,
  scoring: LongMemoryScoring,
): number {
  if (scoring.weight === 0 || !isMemoryScore(memoryScore) || !(maxMemoryScore > 0)) return 0;
  return (scoring.weight * top * memoryScore) / maxMemoryScore;
}

/** A store's whole-memory score the prior may use: a finite number at or above 0 (anything else is ignored). */
export function isMemoryScore(value: number | undefined): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0;
}
