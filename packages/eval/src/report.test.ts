import { describe, expect, it } from 'vitest';
import { LOCOMO_SUBSETS } from './datasets/locomo.js';
import { formatReportTable, meanScores, type RetrievalReport, summarizeVariant } from './report.js';

describe('summarizeVariant', () => {
  const scored = [
    { id: 'q1', subsets: ['exact'], ranked: ['a'], recallAt5: 1, mrrAt10: 1, ndcgAt10: 1 },
    { id: 'q2', subsets: ['exact', 'mixed'], ranked: ['b'], recallAt5: 0.5, mrrAt10: 0.5, ndcgAt10: 0.25 },
    { id: 'q3', subsets: ['zeta'], ranked: [], recallAt5: 0, mrrAt10: 0, ndcgAt10: 0 },
  ];

  it('averages overall and per subset, ordering known subsets first and listing only those with queries', () => {
    const v = summarizeVariant(scored, ['mixed', 'exact', 'cjk']);
    // overall: recall (1 + 0.5 + 0) / 3 = 0.5; nDCG (1 + 0.25 + 0) / 3 = 0.416667.
    expect(v.overall.queries).toBe(3);
    expect(v.overall.recallAt5).toBeCloseTo(0.5, 12);
    expect(v.overall.ndcgAt10).toBeCloseTo(1.25 / 3, 12);
    expect(Object.keys(v.subsets)).toEqual(['mixed', 'exact', 'zeta']);
    // exact: recall (1 + 0.5) / 2 = 0.75.
    expect(v.subsets.exact).toEqual({ queries: 2, recallAt5: 0.75, mrrAt10: 0.75, ndcgAt10: 0.625 });
    expect(v.queries.map((q) => Object.keys(q))).toEqual([
      ['id', 'ranked', 'recallAt5', 'mrrAt10', 'ndcgAt10'],
      ['id', 'ranked', 'recallAt5', 'mrrAt10', 'ndcgAt10'],
      ['id', 'ranked', 'recallAt5', 'mrrAt10', 'ndcgAt10'],
    ]);
  });

  it('gives zeros, not NaN, for no queries', () => {
    expect(meanScores([])).toEqual({ queries: 0, recallAt5: 0, mrrAt10: 0, ndcgAt10: 0 });
  });
});

describe('formatReportTable', () => {
  it('prints one row per variant and scope with three decimals', () => {
    const v = summarizeVariant(
      [{ id: 'q1', subsets: ['exact'], ranked: ['a'], recallAt5: 2 / 3, mrrAt10: 1, ndcgAt10: 0.5 }],
      ['exact'],
    );
    const report: RetrievalReport = {
      version: 1,
      fixture: { name: 'tiny', version: 3 },
      vectorProfile: { id: 'p', dimensions: 128, normalized: true },
      variants: { fts: v, vector: v, hybrid: v, bm25: v },
    };
    const lines = formatReportTable(report).split('\n');
    expect(lines[0]).toBe('tiny v3 (p, 128d)');
    expect(lines).toHaveLength(3 + 8);
    expect(lines[3]).toMatch(/^fts\s+overall\s+1\s+0\.667\s+1\.000\s+0\.500$/);
    expect(lines[8]).toMatch(/^hybrid\s+exact\s+1\s+0\.667/);
    expect(lines[10]).toMatch(/^bm25\s+exact\s+1\s+0\.667/);
  });

  it('names the embedder the run used and says where its vectors came from', () => {
    const v = summarizeVariant(
      [{ id: 'q1', subsets: ['exact'], ranked: ['a'], recallAt5: 1, mrrAt10: 1, ndcgAt10: 1 }],
      ['exact'],
    );
    const report: RetrievalReport = {
      version: 2,
      fixture: { name: 'mine', version: 1 },
      vectorProfile: { id: 'deterministic-lexicon-v1', dimensions: 128, normalized: true },
      embedder: { name: 'use', id: 'use-lite-v1', dimensions: 512 },
      vectors: { embedded: 3, fromCache: 40 },
      variants: { fts: v, vector: v, hybrid: v, bm25: v },
    };
    const lines = formatReportTable(report).split('\n');
    expect(lines[0]).toBe('mine v1 (use-lite-v1, 512d)');
    expect(lines.at(-1)).toBe('vectors: 3 embedded, 40 from the cache');
  });

  it('prints every LoCoMo question category that has queries under each variant, after the totals', () => {
    const scored = LOCOMO_SUBSETS.map((subset, i) => ({
      id: `q${i}`,
      subsets: [subset],
      ranked: ['a'],
      recallAt5: i / 4,
      mrrAt10: i / 4,
      ndcgAt10: i / 4,
    }));
    const v = summarizeVariant(scored, LOCOMO_SUBSETS);
    const report: RetrievalReport = {
      version: 2,
      fixture: { name: 'locomo10-test', version: 1 },
      vectorProfile: { id: 'p', dimensions: 128, normalized: true },
      variants: { fts: v, vector: v, hybrid: v, bm25: v },
    };
    const lines = formatReportTable(report).split('\n');
    const fts = lines.filter((l) => l.startsWith('fts '));
    expect(fts.map((l) => l.split(/\s+/)[1])).toEqual(['overall', ...LOCOMO_SUBSETS]);
    expect(fts[0]).toMatch(/^fts\s+overall\s+5\s+0\.500\s+0\.500\s+0\.500$/);
    expect(fts[5]).toMatch(/^fts\s+cat5-adversarial\s+1\s+1\.000\s+1\.000\s+1\.000$/);
  });
});
