import { describe, expect, it } from 'vitest';
import { estimateTokens, tokenUnits } from './tokens.js';

describe('token estimate', () => {
  it('counts four Latin code points per token, rounded up', () => {
    expect(estimateTokens('')).toBe(0);
    expect(estimateTokens('a')).toBe(1);
    expect(estimateTokens('abcd')).toBe(1);
    expect(estimateTokens('abcde')).toBe(2);
  });

  it('counts CJK characters, CJK punctuation and full-width forms 1.5 each', () => {
    expect(tokenUnits('漢字')).toBe(3);
    expect(tokenUnits('\u{20000}')).toBe(1.5);
    expect(tokenUnits('한')).toBe(1.5);
    expect(tokenUnits('。')).toBe(1.5);
    expect(tokenUnits('Ａ')).toBe(1.5);
    expect(estimateTokens('漢字ab')).toBe(4);
  });

  it('is additive before rounding', () => {
    const a = 'memory 記憶';
    const b = ' of 代理 agents';
    expect(tokenUnits(a + b)).toBe(tokenUnits(a) + tokenUnits(b));
  });
});
