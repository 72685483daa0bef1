/** Token estimation shared by context injection and maintenance budgets (DESIGN.md, "Maintenance"). */

const CJK =
  /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\u3000-\u303f\uff00-\uffef]/u;

/** Unrounded token units of a text: CJK characters count 1.5, every other code point 0.25. Additive. */
export function tokenUnits(text: string): number {
  let cjk = 0;
  let other = 0;
  for (const char of text) {
    if (CJK.test(char)) cjk += 1;
    else other += 1;
  }
  return cjk * 1.5 + other / 4;
}

/**
 * Estimates the tokens of a text: CJK characters (Han, kana, Hangul, CJK punctuation, full-width forms) × 1.5
 * plus other code points ÷ 4, rounded up. Empty text is 0 tokens.
 */
export function estimateTokens(text: string): number {
  return Math.ceil(tokenUnits(text));
}
