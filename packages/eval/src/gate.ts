import type { MetricSummary, RetrievalReport } from './report.js';

/** The thresholds of the retrieval gate; only the hybrid variant is gated. */
export const GATE_THRESHOLDS: {
  readonly overall: { readonly recallAt5: number; readonly mrrAt10: number; readonly ndcgAt10: number };
  readonly strictSubsets: readonly ['exact', 'cjk', 'path', 'code'];
  readonly strictRecallAt5: number;
  readonly ftsTolerance: number;
  readonly ablationSemanticRecallBelow: number;
} = Object.freeze({
  overall: Object.freeze({ recallAt5: 0.95, mrrAt10: 0.85, ndcgAt10: 0.85 }),
  strictSubsets: ['exact', 'cjk', 'path', 'code'] as const,
  strictRecallAt5: 1,
  ftsTolerance: 0.02,
  ablationSemanticRecallBelow: 0.5,
});

/** One failed check of the gate: numbers and names only. */
export interface GateFailure {
  /** Which rule failed. */
  readonly check: 'overall' | 'strictSubsetRecall' | 'notBelowFts' | 'ablation' | 'missingSubset';
  /** `overall` or a subset name. */
  readonly scope: string;
  readonly metric: keyof Omit<MetricSummary, 'queries'> | 'queries';
  readonly actual: number;
  /** The bound the figure had to respect (see `check` for its direction). */
  readonly bound: number;
  /** A readable one-line description. */
  readonly message: string;
}

/** The verdict of {@link evaluateGate}. */
export interface GateResult {
  readonly ok: boolean;
  readonly failures: readonly GateFailure[];
}

const METRICS = ['recallAt5', 'mrrAt10', 'ndcgAt10'] as const;

// A tiny epsilon so that exact means (e.g. 10 / 10) never fail on floating-point noise.
const EPSILON = 1e-9;

/**
 * Applies the retrieval gate to a report of the standard fixture and to the ablation report (the same
 * fixture with the embedder's concept features off):
 * - hybrid overall Recall@5 ≥ 0.95, MRR@10 ≥ 0.85, nDCG@10 ≥ 0.85;
 * - on `exact`, `cjk`, `path`, `code`: hybrid Recall@5 = 1, and each hybrid figure ≥ the FTS-only figure − 0.02;
 * - ablation: hybrid `semantic` Recall@5 < 0.5 (the semantic signal comes from the concepts).
 * Pure; never throws.
 */
export function evaluateGate(report: RetrievalReport, ablation: RetrievalReport): GateResult {
  const failures: GateFailure[] = [];
  const hybrid = report.variants.hybrid;
  const fts = report.variants.fts;

  for (const metric of METRICS) {
    const actual = hybrid.overall[metric];
    const bound = GATE_THRESHOLDS.overall[metric];
    if (!(actual >= bound - EPSILON)) {
      failures.push({
        check: 'overall',
        scope: 'overall',
        metric,
        actual,
        bound,
        message: `hybrid overall ${metric} ${actual.toFixed(4)} < ${bound}`,
      });
    }
  }

  for (const subset of GATE_THRESHOLDS.strictSubsets) {
    const h = hybrid.subsets[subset];
    const f = fts.subsets[subset];
    if (h === undefined || f === undefined || h.queries === 0) {
      failures.push({
        check: 'missingSubset',
        scope: subset,
        metric: 'queries',
        actual: h?.queries ?? 0,
        bound: 1,
        message: `subset ${subset} has no queries in the report`,
      });
      continue;
    }
    if (!(h.recallAt5 >= GATE_THRESHOLDS.strictRecallAt5 - EPSILON)) {
      failures.push({
        check: 'strictSubsetRecall',
        scope: subset,
        metric: 'recallAt5',
        actual: h.recallAt5,
        bound: GATE_THRESHOLDS.strictRecallAt5,
        message: `hybrid ${subset} recallAt5 ${h.recallAt5.toFixed(4)} < 1`,
      });
    }
    for (const metric of METRICS) {
      const bound = f[metric] - GATE_THRESHOLDS.ftsTolerance;
      if (!(h[metric] >= bound - EPSILON)) {
        failures.push({
          check: 'notBelowFts',
          scope: subset,
          metric,
          actual: h[metric],
          bound,
          message: `hybrid ${subset} ${metric} ${h[metric].toFixed(4)} < FTS-only ${f[metric].toFixed(4)} − ${GATE_THRESHOLDS.ftsTolerance}`,
        });
      }
    }
  }

  const semantic = ablation.variants.hybrid.subsets.semantic;
  if (semantic === undefined || semantic.queries === 0) {
    failures.push({
      check: 'missingSubset',
      scope: 'semantic',
      metric: 'queries',
      actual: 0,
      bound: 1,
      message: 'the ablation report has no semantic queries',
    });
  } else if (!(semantic.recallAt5 < GATE_THRESHOLDS.ablationSemanticRecallBelow)) {
    failures.push({
      check: 'ablation',
      scope: 'semantic',
      metric: 'recallAt5',
      actual: semantic.recallAt5,
      bound: GATE_THRESHOLDS.ablationSemanticRecallBelow,
      message: `ablation (concepts off): hybrid semantic recallAt5 ${semantic.recallAt5.toFixed(4)} is not < ${GATE_THRESHOLDS.ablationSemanticRecallBelow}`,
    });
  }

  return { ok: failures.length === 0, failures };
}
