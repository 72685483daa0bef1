import { describe, expect, it } from 'vitest';
import { planBm25Query } from './bm25-plan.js';
import {
  bm25Answer,
  candidateIds,
  checkEventEdit,
  checkLexicalQuery,
  inCandidateOrder,
  planPaths,
  prepareAppend,
  prepareInsertBatch,
  validateAccessArgs,
  validateContentHashArgs,
  validateEventRangeArgs,
  validateEventsAfterArgs,
  validateIngestBatch,
  validatePendingOptions,
  validateUpdateArgs,
} from './call-rules.js';
import { isEngramStoreError } from './errors.js';
import { planLexicalQuery } from './lexical-plan.js';
import { codeOf } from './store-code.test.util.js';
import type { LexicalQuery, ListPendingOptions, MemoryKind, RevalidationCandidate } from './types.js';
import { preparePatch } from './validate.js';

const rules = { limits: { maxContentLength: 100 }, profile: null };
const memory = { agentId: 'a', kind: 'fact', content: 'the sky is blue' } as const;

const INVALID = 'ENGRAM_STORE_INVALID_INPUT';

describe('row reads', () => {
  it('find by a non-empty hash, optionally of one kind', () => {
    expect(validateContentHashArgs('a', 'abc')).toBeNull();
    expect(validateContentHashArgs('a', 'abc', 'fact')).toBe('fact');
    expect(codeOf(() => validateContentHashArgs('a', ''))).toBe(INVALID);
    expect(codeOf(() => validateContentHashArgs('a', 'x'.repeat(129)))).toBe(INVALID);
    expect(codeOf(() => validateContentHashArgs('a', 'abc', 'mood' as MemoryKind))).toBe(INVALID);
  });

  it('revalidate each candidate id once, in input order, at most 10,000', () => {
    expect(candidateIds([{ id: 'b' }, { id: 'a', revision: 2 }, { id: 'b' }])).toEqual(['b', 'a']);
    expect(candidateIds([])).toEqual([]);
    expect(codeOf(() => candidateIds([{ id: 'a', revision: 0 }]))).toBe(INVALID);
    expect(codeOf(() => candidateIds(Array.from({ length: 10_001 }, (_, i) => ({ id: `m${i}` }))))).toBe(
      INVALID,
    );
  });

  it('answer in candidate order, skipping gone rows and other revisions, each row once', () => {
    const rows = new Map([
      ['a', { id: 'a', revision: '2' }],
      ['b', { id: 'b', revision: '1' }],
    ]);
    const candidates: RevalidationCandidate[] = [
      { id: 'b' },
      { id: 'gone' },
      { id: 'a', revision: 1 },
      { id: 'b' },
    ];
    expect(
      inCandidateOrder(
        candidates,
        rows,
        (r) => Number(r.revision),
        (r) => r.id,
      ),
    ).toEqual(['b']);
    expect(
      inCandidateOrder(
        [{ id: 'a', revision: 2 }],
        rows,
        (r) => Number(r.revision),
        (r) => r.id,
      ),
    ).toEqual(['a']);
  });
});

describe('row writes', () => {
  it('insert a batch with each memory named by its place', () => {
    expect(prepareInsertBatch(rules, [memory, memory])).toHaveLength(2);
    const err = (() => {
      try {
        prepareInsertBatch(rules, [memory, { ...memory, content: '' }]);
      } catch (e) {
        return e;
      }
    })();
    expect(isEngramStoreError(err) && err.message).toContain('memories[1]');
  });

  it('update with a positive revision and a valid patch', () => {
    expect(validateUpdateArgs(rules, 'a', 'm', 1, { importance: 0.2 }).importance).toBe(0.2);
    expect(codeOf(() => validateUpdateArgs(rules, 'a', 'm', 0, {}))).toBe(INVALID);
  });

  it('never edit an event row in place, nor turn a row into an event', () => {
    const event = { kind: 'event', content: 'said' };
    expect(checkEventEdit(event, preparePatch({ tags: ['topic:x'] }, rules.limits))).toBe(false);
    expect(codeOf(() => checkEventEdit(event, preparePatch({ content: 'other' }, rules.limits)))).toBe(
      INVALID,
    );
    expect(
      codeOf(() =>
        checkEventEdit({ kind: 'fact', content: 'x' }, preparePatch({ kind: 'event' }, rules.limits)),
      ),
    ).toBe(INVALID);
    expect(checkEventEdit({ kind: 'fact', content: 'x' }, preparePatch({ content: 'y' }, rules.limits))).toBe(
      true,
    );
  });

  it('record access at the given time, or now', () => {
    expect(validateAccessArgs('a', ['m'], undefined, () => 42)).toBe(42);
    expect(validateAccessArgs('a', ['m'], 7, () => 42)).toBe(7);
    expect(codeOf(() => validateAccessArgs('a', Array(10_001).fill('m'), undefined, () => 1))).toBe(INVALID);
  });
});

describe('the event log', () => {
  it('append prepared events and read checked ranges (a listing takes at most 10,000)', () => {
    const [event] = prepareAppend(rules, 'a', 's', [
      { seq: 1, type: 'message', role: 'user', content: 'hi' },
    ]);
    expect(event?.seq).toBe(1);
    expect(codeOf(() => prepareAppend(rules, 'a', '', []))).toBe(INVALID);
    expect(codeOf(() => validateEventRangeArgs('a', 's', -1, 2))).toBe(INVALID);
    expect(validateEventsAfterArgs('a', 's', 0, 5)).toBe(5);
    expect(validateEventsAfterArgs('a', 's', 0, 20_000)).toBe(10_000);
    expect(codeOf(() => validateEventsAfterArgs('a', 's', 0, 0))).toBe(INVALID);
  });

  it('ingest a batch whose cursor never moves back and whose memories are all the batch agent', () => {
    const batch = { agentId: 'a', sessionId: 's', expectedCursor: 1, nextCursor: 3, memories: [memory] };
    expect(validateIngestBatch(rules, batch)).toMatchObject({
      agentId: 'a',
      sessionId: 's',
      expected: 1,
      next: 3,
    });
    expect(codeOf(() => validateIngestBatch(rules, { ...batch, nextCursor: 0 }))).toBe(INVALID);
    expect(
      codeOf(() => validateIngestBatch(rules, { ...batch, memories: [{ ...memory, agentId: 'b' }] })),
    ).toBe(INVALID);
  });
});

describe('pending embeddings', () => {
  it('list 64 by default, errors retried only when asked, named rows once', () => {
    expect(validatePendingOptions({} as ListPendingOptions)).toEqual({
      agentId: null,
      limit: 64,
      below: 0,
      ids: null,
    });
    expect(
      validatePendingOptions({ limit: 5, agentId: 'a', retryErrorsBelowAttempts: 3, ids: ['x', 'x'] }),
    ).toEqual({
      agentId: 'a',
      limit: 5,
      below: 3,
      ids: ['x'],
    });
    expect(codeOf(() => validatePendingOptions({ limit: 1, ids: Array(1001).fill('x') }))).toBe(INVALID);
  });
});

describe('lexical search', () => {
  it('checks the query: the recallable kinds when none are named, any mode by default, a known mode', () => {
    const checked = checkLexicalQuery({ agentId: 'a', terms: ['sky'], limit: 7 }, ['fact', 'episodic']);
    expect(checked).toEqual({ agentId: 'a', limit: 7, kinds: ['fact', 'episodic'], tags: [], mode: 'any' });
    expect(
      codeOf(() =>
        checkLexicalQuery({ agentId: 'a', terms: [], mode: 'some' } as unknown as LexicalQuery, []),
      ),
    ).toBe(INVALID);
  });

  it('reports the paths and terms a plan used', () => {
    const bm25 = planBm25Query(['sky', '猫']);
    expect(bm25Answer([], bm25)).toEqual({
      hits: [],
      paths: { words: true, trigram: false, like: true },
      likeTerms: ['猫'],
      droppedTerms: bm25.droppedTerms,
    });
    expect(planPaths(planLexicalQuery(['sky'], 'all'))).toEqual({ words: true, trigram: false, like: false });
  });
});
