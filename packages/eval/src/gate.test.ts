import { describe, expect, it } from 'vitest';
import { evaluateGate } from './gate.js';
import type { MetricSummary, RetrievalReport, VariantReport } from './report.js';

const SUBSETS = ['exact', 'cjk', 'path', 'code', 'semantic', 'mixed'] as const;

function m(recallAt5: number, mrrAt10: number, ndcgAt10: number, queries = 10): MetricSummary {
  return { queries, recallAt5, mrrAt10, ndcgAt10 };
}

function variant(
  overall: MetricSummary,
  subsets: Record<string, MetricSummary | undefined> = {},
): VariantReport {
  const all: Record<string, MetricSummary> = {};
  for (const s of SUBSETS) all[s] = subsets[s] ?? m(1, 1, 1);
  for (const [k, v] of Object.entries(subsets)) if (v === undefined) delete all[k];
  return { overall, subsets: all, queries: [] };
}

function report(hybrid: VariantReport, fts: VariantReport = variant(m(0.8, 0.8, 0.8))): RetrievalReport {
  return {
    version: 1,
    fixture: { name: 'retrieval-v1', version: 1 },
    vectorProfile: { id: 'deterministic-lexicon-v1', dimensions: 128, normalized: true },
    variants: { fts, vector: variant(m(0.5, 0.5, 0.5)), hybrid, bm25: variant(m(0.8, 0.8, 0.8)) },
  };
}

const goodAblation = report(variant(m(0.8, 0.8, 0.8), { semantic: m(0.2, 0.2, 0.2) }));

describe('evaluateGate', () => {
  it('passes a report that meets every threshold, including exactly at the bounds', () => {
    const result = evaluateGate(report(variant(m(0.95, 0.85, 0.85))), goodAblation);
    expect(result).toEqual({ ok: true, failures: [] });
  });

  it('fails each overall figure below its threshold', () => {
    const result = evaluateGate(report(variant(m(0.94, 0.84, 0.849))), goodAblation);
    expect(result.ok).toBe(false);
    expect(result.failures.map((f) => [f.check, f.metric])).toEqual([
      ['overall', 'recallAt5'],
      ['overall', 'mrrAt10'],
      ['overall', 'ndcgAt10'],
    ]);
  });

  it('requires Recall@5 = 1 on exact, cjk, path and code, but not on semantic or mixed', () => {
    const hybrid = variant(m(0.97, 0.9, 0.9), {
      path: m(0.95, 1, 1),
      semantic: m(0.7, 0.7, 0.7),
      mixed: m(0.9, 0.9, 0.9),
    });
    const fts = variant(m(0.8, 0.8, 0.8), { path: m(0.9, 0.9, 0.9) });
    const result = evaluateGate(report(hybrid, fts), goodAblation);
    expect(result.failures.map((f) => [f.check, f.scope, f.metric])).toEqual([
      ['strictSubsetRecall', 'path', 'recallAt5'],
    ]);
  });

  it('fails a strict subset where hybrid falls more than 0.02 below FTS-only, and tolerates 0.02', () => {
    const hybrid = variant(m(0.97, 0.9, 0.9), { cjk: m(1, 0.9, 0.93), code: m(1, 0.98, 0.98) });
    const fts = variant(m(0.9, 0.9, 0.9), { cjk: m(1, 0.95, 0.95), code: m(1, 1, 1) });
    const result = evaluateGate(report(hybrid, fts), goodAblation);
    // cjk MRR 0.90 < 0.95 − 0.02 = 0.93 fails; cjk nDCG 0.93 ≥ 0.93 passes; code 0.98 ≥ 1 − 0.02 passes.
    expect(result.failures.map((f) => [f.check, f.scope, f.metric])).toEqual([
      ['notBelowFts', 'cjk', 'mrrAt10'],
    ]);
    expect(result.failures[0]?.bound).toBeCloseTo(0.93, 12);
  });

  it('fails the ablation unless semantic Recall@5 drops below 0.5 without concepts', () => {
    const good = report(variant(m(1, 1, 1)));
    const atHalf = report(variant(m(0.9, 0.9, 0.9), { semantic: m(0.5, 0.5, 0.5) }));
    const result = evaluateGate(good, atHalf);
    expect(result.failures.map((f) => [f.check, f.scope, f.actual])).toEqual([['ablation', 'semantic', 0.5]]);
    expect(evaluateGate(good, report(variant(m(0.9, 0.9, 0.9), { semantic: m(0.49, 0.5, 0.5) }))).ok).toBe(
      true,
    );
  });

  it('fails when a gated subset or the semantic ablation subset is missing', () => {
    const noCode = variant(m(1, 1, 1), { code: undefined });
    const noSemantic = report(variant(m(1, 1, 1), { semantic: undefined }));
    const result = evaluateGate(report(noCode), noSemantic);
    expect(result.failures.map((f) => [f.check, f.scope])).toEqual([
      ['missingSubset', 'code'],
      ['missingSubset', 'semantic'],
    ]);
  });

  it('never passes NaN figures', () => {
    const result = evaluateGate(report(variant(m(Number.NaN, 1, 1))), goodAblation);
    expect(result.ok).toBe(false);
  });
});
