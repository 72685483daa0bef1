/** The BM25 settings and idf both adapters score with (the formula is in each adapter's scoring SQL). */

/** BM25 settings of a store. */
export interface Bm25Settings {
  /** Term-frequency saturation, ≥ 0 (default 0.9). */
  readonly k1: number;
  /** Length normalisation, 0..1 (default 0.4). */
  readonly b: number;
}

/**
 * Default BM25 settings: k1 = 0.9, b = 0.4, the defaults of Anserini (Lin et al.) used by the BEIR baselines,
 * which suit short memories better than the k1 = 1.2, b = 0.75 of the original TREC runs.
 */
export const DEFAULT_BM25: Bm25Settings = Object.freeze({ k1: 0.9, b: 0.4 });

/** Lucene's BM25 idf: ln(1 + (N − df + 0.5) / (df + 0.5)), never negative. */
export function bm25Idf(docs: number, df: number): number {
  return Math.log(1 + (docs - df + 0.5) / (df + 0.5));
}
