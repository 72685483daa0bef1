/**
 * The token estimate used for context-injection and maintenance budgets: CJK characters (the CJK class plus
 * CJK punctuation U+3000–U+303F and full-width forms U+FF00–U+FFEF) count 1.5, every other code point 0.25.
 */
import { CJK_CLASS_SOURCE } from './cjk.js';

const WIDE = new RegExp(`${CJK_CLASS_SOURCE.slice(0, -1)}\\u3000-\\u303f\\uff00-\\uffef]`, 'u');

/** Unrounded token units of a text. Additive: the units of `a + b` are those of `a` plus those of `b`. */
export function tokenUnits(text: string): number {
  let wide = 0;
  let other = 0;
  for (const char of text) {
    if (WIDE.test(char)) wide += 1;
    else other += 1;
  }
  return wide * 1.5 + other / 4;
}

/** Estimates the tokens of a text: `ceil(tokenUnits(text))`; empty text is 0 tokens. */
export function estimateTokens(text: string): number {
  return Math.ceil(tokenUnits(text));
}
