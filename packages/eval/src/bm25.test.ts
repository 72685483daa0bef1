import { describe, expect, it } from 'vitest';
import { BM25_REFERENCE_PARAMETERS, bm25Rankings, bm25Terms } from './bm25.js';
import type { FixtureMemory, RetrievalFixture } from './fixture.js';

function fixture(corpus: FixtureMemory[], queries: RetrievalFixture['queries']): RetrievalFixture {
  return {
    version: 1,
    name: 'bm25',
    vectorProfile: { id: 'deterministic-lexicon-v1', dimensions: 128, normalized: true },
    subsets: ['s'],
    corpus,
    queries,
  };
}

const row = (id: string, content: string, agentId = 'a'): FixtureMemory => ({
  id,
  agentId,
  kind: 'fact',
  content,
  importance: 0.5,
});

describe('bm25Terms', () => {
  it('lower-cases words and drops English stop words', () => {
    expect(bm25Terms("What did Caroline's sister paint, and WHEN?")).toEqual(['caroline', 'sister', 'paint']);
  });

  it('turns a CJK run into character unigrams plus bigrams, beside the words around it', () => {
    expect(bm25Terms('长城是 Great Wall')).toEqual(['长', '长城', '城', '城是', '是', 'great', 'wall']);
    expect(bm25Terms('版本2018年')).toEqual(['版', '版本', '本', '2018', '年']);
  });
});

describe('bm25Rankings', () => {
  it('ranks by BM25 with k1 0.9 and b 0.4: a shorter document wins at equal term frequency', () => {
    expect(BM25_REFERENCE_PARAMETERS).toEqual({ k1: 0.9, b: 0.4 });
    const f = fixture(
      [
        row('long', 'deploy pipeline runs nightly with extra words about caching layers'),
        row('short', 'deploy pipeline'),
        row('other', 'unrelated text'),
      ],
      [{ id: 'q', agentId: 'a', text: 'the deploy', subsets: ['s'], relevantIds: ['short'] }],
    );
    // Only rows sharing a term are ranked (OR semantics); `the` is a stop word.
    expect(bm25Rankings(f, 10).get('q')).toEqual(['short', 'long']);
  });

  it('scores exactly: one term, idf = ln(1 + (N − df + 0.5) / (df + 0.5)), length-normalised tf', () => {
    const f = fixture(
      [row('d1', 'alpha alpha beta'), row('d2', 'beta gamma'), row('d3', 'gamma delta')],
      [{ id: 'q', agentId: 'a', text: 'alpha gamma', subsets: ['s'], relevantIds: ['d1'] }],
    );
    const avgdl = 7 / 3;
    const part = (tf: number, dl: number, df: number): number =>
      (Math.log(1 + (3 - df + 0.5) / (df + 0.5)) * tf * 1.9) / (tf + 0.9 * (0.6 + (0.4 * dl) / avgdl));
    const d1 = part(2, 3, 1);
    const d2 = part(1, 2, 2);
    const d3 = part(1, 2, 2);
    expect(d1).toBeGreaterThan(d2);
    // d2 and d3 tie on score; the tie keeps corpus order.
    expect(d2).toBe(d3);
    expect(bm25Rankings(f, 10).get('q')).toEqual(['d1', 'd2', 'd3']);
    expect(bm25Rankings(f, 2).get('q')).toEqual(['d1', 'd2']);
  });

  it("keeps statistics per agent and never ranks another agent's row", () => {
    const f = fixture(
      [
        row('a1', 'rare word here'),
        row('a2', 'common'),
        row('b1', 'rare word here', 'b'),
        row('b2', 'rare', 'b'),
      ],
      [
        { id: 'qa', agentId: 'a', text: 'rare', subsets: ['s'], relevantIds: ['a1'] },
        { id: 'qb', agentId: 'b', text: 'rare', subsets: ['s'], relevantIds: ['b2'] },
        { id: 'qc', agentId: 'c', text: 'rare', subsets: ['s'], relevantIds: ['a1'] },
      ],
    );
    const rankings = bm25Rankings(f, 10);
    expect(rankings.get('qa')).toEqual(['a1']);
    expect(rankings.get('qb')).toEqual(['b2', 'b1']);
    expect(rankings.get('qc')).toEqual([]);
  });
});
