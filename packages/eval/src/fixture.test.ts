import { describe, expect, it } from 'vitest';
import { isEngramEvalError } from './errors.js';
import { fixtureSubsets, parseFixture, RETRIEVAL_SUBSETS, validateFixture } from './fixture.js';

function baseFixture(): {
  version: number;
  name: string;
  vectorProfile: { id: string; dimensions: number; normalized: boolean };
  subsets?: string[];
  corpus: {
    id: string;
    agentId: string;
    kind: string;
    content: string;
    importance: number;
    createdAt?: number;
    sessionId?: string;
    seq?: number;
  }[];
  queries: {
    id: string;
    agentId: string;
    text: string;
    subsets: string[];
    relevantIds: string[];
    referenceTime?: number;
  }[];
} {
  return {
    version: 1,
    name: 'tiny',
    vectorProfile: { id: 'deterministic-lexicon-v1', dimensions: 128, normalized: true },
    corpus: [
      { id: 'm1', agentId: 'a', kind: 'fact', content: 'uses pnpm', importance: 0.5 },
      {
        id: 'm2',
        agentId: 'a',
        kind: 'event',
        content: 'ran tests',
        importance: 0.2,
        createdAt: 1_700_000_000_000,
      },
      { id: 'm3', agentId: 'b', kind: 'fact', content: 'uses pnpm', importance: 0.5 },
    ],
    queries: [{ id: 'q1', agentId: 'a', text: 'pnpm', subsets: ['exact'], relevantIds: ['m1', 'm2'] }],
  };
}

function issuesOf(value: unknown): readonly string[] {
  const result = validateFixture(value);
  if (result.ok) throw new Error('expected the fixture to be rejected');
  return result.issues;
}

describe('validateFixture', () => {
  it('accepts a well-formed fixture and keeps its rows', () => {
    const result = validateFixture(baseFixture());
    expect(result.ok).toBe(true);
    if (result.ok) {
      expect(result.fixture.corpus).toHaveLength(3);
      expect(fixtureSubsets(result.fixture)).toEqual(RETRIEVAL_SUBSETS);
    }
  });

  it("keeps a row's session and position and a query's reference time; a position needs a session", () => {
    const f = baseFixture();
    f.corpus[0] = { ...(f.corpus[0] as (typeof f.corpus)[number]), sessionId: 'session_1', seq: 3 };
    f.queries[0] = { ...(f.queries[0] as (typeof f.queries)[number]), referenceTime: 1_700_000_000_000 };
    const result = validateFixture(f);
    expect(result.ok).toBe(true);
    if (result.ok) {
      expect(result.fixture.corpus[0]).toMatchObject({ sessionId: 'session_1', seq: 3 });
      expect(result.fixture.queries[0]?.referenceTime).toBe(1_700_000_000_000);
    }
    f.corpus[1] = { ...(f.corpus[1] as (typeof f.corpus)[number]), seq: 1 };
    expect(issuesOf(f)).toEqual(['corpus[1]: seq needs a sessionId']);
    f.corpus[1] = { ...(f.corpus[1] as (typeof f.corpus)[number]), sessionId: 's', seq: 0 };
    expect(issuesOf(f).some((i) => i.startsWith('fixture.corpus[1].seq:'))).toBe(true);
  });

  it('rejects a duplicate corpus id', () => {
    const f = baseFixture();
    f.corpus.push({ id: 'm1', agentId: 'a', kind: 'fact', content: 'again', importance: 0.1 });
    expect(issuesOf(f)).toEqual(['corpus[3]: duplicate corpus id "m1"']);
  });

  it('rejects a duplicate query id', () => {
    const f = baseFixture();
    f.queries.push({ id: 'q1', agentId: 'a', text: 'tests', subsets: ['exact'], relevantIds: ['m2'] });
    expect(issuesOf(f)).toEqual(['queries[1]: duplicate query id "q1"']);
  });

  it('rejects a relevant id that is not in the corpus', () => {
    const f = baseFixture();
    f.queries[0] = { id: 'q1', agentId: 'a', text: 'pnpm', subsets: ['exact'], relevantIds: ['m9'] };
    expect(issuesOf(f)).toEqual(['queries[0]: relevant id "m9" is not in the corpus']);
  });

  it('rejects a relevant id owned by another agent, even with identical text', () => {
    const f = baseFixture();
    f.queries[0] = { id: 'q1', agentId: 'a', text: 'pnpm', subsets: ['exact'], relevantIds: ['m1', 'm3'] };
    expect(issuesOf(f)).toEqual(['queries[0]: relevant id "m3" belongs to another agent']);
  });

  it('rejects an unknown subset of the standard six', () => {
    const f = baseFixture();
    f.queries[0] = { id: 'q1', agentId: 'a', text: 'pnpm', subsets: ['fuzzy'], relevantIds: ['m1'] };
    expect(issuesOf(f)).toEqual(['queries[0]: unknown subset "fuzzy"']);
  });

  it('accepts declared subsets of an external fixture and rejects names it did not declare', () => {
    const f = baseFixture();
    f.subsets = ['cat1-multihop', 'cat2-temporal'];
    f.queries[0] = { id: 'q1', agentId: 'a', text: 'pnpm', subsets: ['cat2-temporal'], relevantIds: ['m1'] };
    expect(validateFixture(f).ok).toBe(true);
    f.queries[0] = { id: 'q1', agentId: 'a', text: 'pnpm', subsets: ['exact'], relevantIds: ['m1'] };
    expect(issuesOf(f)).toEqual(['queries[0]: unknown subset "exact"']);
  });

  it('rejects a query without relevant ids', () => {
    const f = baseFixture();
    f.queries[0] = { id: 'q1', agentId: 'a', text: 'pnpm', subsets: ['exact'], relevantIds: [] };
    expect(issuesOf(f)).toEqual(['fixture.queries[0].relevantIds: a query needs at least one relevant id']);
  });

  it('rejects shape errors with their paths: a kind that is never recalled, importance out of range', () => {
    const f = baseFixture();
    f.corpus[0] = { id: 'm1', agentId: 'a', kind: 'persona', content: 'x', importance: 1.5 };
    const issues = issuesOf(f);
    expect(issues.some((i) => i.startsWith('fixture.corpus[0].kind:'))).toBe(true);
    expect(issues.some((i) => i.startsWith('fixture.corpus[0].importance:'))).toBe(true);
  });

  it('collects several cross-reference problems at once', () => {
    const f = baseFixture();
    f.queries.push({ id: 'q1', agentId: 'b', text: 'x', subsets: ['nope'], relevantIds: ['m1'] });
    expect(issuesOf(f)).toEqual([
      'queries[1]: duplicate query id "q1"',
      'queries[1]: unknown subset "nope"',
      'queries[1]: relevant id "m1" belongs to another agent',
    ]);
  });

  it('never echoes content in its issues', () => {
    const f = baseFixture();
    f.corpus[0] = { id: 'm1', agentId: 'a', kind: 'fact', content: 'SECRET-TEXT', importance: 7 };
    expect(issuesOf(f).join(' ')).not.toContain('SECRET-TEXT');
  });
});

describe('parseFixture', () => {
  it('throws a typed error carrying every issue', () => {
    const f = baseFixture();
    f.queries[0] = { id: 'q1', agentId: 'a', text: 'pnpm', subsets: ['fuzzy'], relevantIds: ['m9'] };
    let caught: unknown;
    try {
      parseFixture(f);
    } catch (error) {
      caught = error;
    }
    expect(isEngramEvalError(caught)).toBe(true);
    expect(caught).toMatchObject({ code: 'ENGRAM_EVAL_INVALID_FIXTURE' });
    expect((caught as { issues: readonly string[] }).issues).toHaveLength(2);
  });
});
