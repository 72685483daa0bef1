import { estimateTokens } from '@engram/contracts';
import { describe, expect, it } from 'vitest';
import { createPassBudget, DEFAULT_PASS_BUDGET, resolvePassBudgetLimits } from './budget.js';
import { estimateMessagesTokens } from './tokens.js';

describe('createPassBudget', () => {
  it('has the documented defaults', () => {
    expect(DEFAULT_PASS_BUDGET).toEqual({
      stepCalls: { challenge: 4, merge: 2, reflection: 1, persona: 1 },
      totalCalls: 8,
      inputTokens: 24_000,
    });
  });

  it('grants 8 calls by step and denies the ninth, counted by step', () => {
    const budget = createPassBudget();
    const one = { calls: 1, tokens: 100 };
    for (let i = 0; i < 4; i += 1) expect(budget.reserve('challenge', one)).toBe(true);
    expect(budget.reserve('challenge', one)).toBe(false);
    expect(budget.reserve('merge', one)).toBe(true);
    expect(budget.reserve('merge', one)).toBe(true);
    expect(budget.reserve('merge', one)).toBe(false);
    expect(budget.reserve('merge', one)).toBe(false);
    expect(budget.reserve('reflection', one)).toBe(true);
    expect(budget.reserve('persona', one)).toBe(true);
    expect(budget.reserve('persona', one)).toBe(false);
    const s = budget.snapshot();
    expect(s.calls).toBe(8);
    expect(s.tokens).toBe(800);
    expect(s.callsByStep).toEqual({ challenge: 4, merge: 2, reflection: 1, persona: 1 });
    expect(s.denials).toEqual({ challenge: 1, merge: 2, reflection: 0, persona: 1 });
  });

  it('denies by the total when step limits would allow more', () => {
    const budget = createPassBudget(resolvePassBudgetLimits({ stepCalls: { challenge: 20 } }));
    let granted = 0;
    for (let i = 0; i < 9; i += 1) if (budget.reserve('challenge', { calls: 1, tokens: 1 })) granted += 1;
    expect(granted).toBe(8);
    expect(budget.snapshot().denials.challenge).toBe(1);
  });

  it('denies a reservation over the token limit without consuming anything', () => {
    const budget = createPassBudget();
    expect(budget.reserve('reflection', { calls: 1, tokens: 24_001 })).toBe(false);
    expect(budget.snapshot()).toMatchObject({ calls: 0, tokens: 0, denials: { reflection: 1 } });
    expect(budget.reserve('challenge', { calls: 1, tokens: 20_000 })).toBe(true);
    expect(budget.reserve('merge', { calls: 1, tokens: 4_001 })).toBe(false);
    expect(budget.reserve('merge', { calls: 1, tokens: 4_000 })).toBe(true);
    expect(budget.snapshot()).toMatchObject({
      calls: 2,
      tokens: 24_000,
      denials: { merge: 1, reflection: 1 },
    });
  });

  it('rejects invalid limits and counts a non-finite request as denied', () => {
    expect(() => resolvePassBudgetLimits({ totalCalls: -1 })).toThrow(RangeError);
    expect(() => resolvePassBudgetLimits({ stepCalls: { merge: 1.5 } })).toThrow(RangeError);
    const budget = createPassBudget();
    expect(budget.reserve('merge', { calls: 1, tokens: Number.NaN })).toBe(false);
    expect(budget.snapshot().denials.merge).toBe(1);
  });
});

describe('estimateTokens', () => {
  it('counts CJK characters × 1.5 and other characters ÷ 4, rounded up', () => {
    expect(estimateTokens('')).toBe(0);
    expect(estimateTokens('abcd')).toBe(1);
    expect(estimateTokens('abcde')).toBe(2);
    expect(estimateTokens('你好')).toBe(3);
    expect(estimateTokens('你好世界')).toBe(6);
    // 3 CJK (4.5) + 4 others (1) = 5.5 → 6
    expect(estimateTokens('用pnpm安装')).toBe(6);
    expect(estimateTokens('カタカナ')).toBe(6);
    expect(estimateTokens('한국어')).toBe(5);
  });

  it('sums message contents', () => {
    expect(estimateMessagesTokens([{ content: 'abcd' }, { content: '你好' }])).toBe(4);
  });
});
