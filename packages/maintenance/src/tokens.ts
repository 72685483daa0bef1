/** Han, kana, Hangul, CJK punctuation and full-width forms: the same set as `@engram/retrieval`'s estimate. */
const CJK_CHAR =
  /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\u3000-\u303f\uff00-\uffef]/u;

/**
 * Estimates the input tokens of a text: `ceil(CJK characters × 1.5 + other characters ÷ 4)`, counting code
 * points (CJK: Han, kana, Hangul, CJK punctuation, full-width forms — as `@engram/retrieval` counts them).
 */
export function estimateTokens(text: string): number {
  let cjk = 0;
  let other = 0;
  for (const ch of text) {
    if (CJK_CHAR.test(ch)) cjk += 1;
    else other += 1;
  }
  return Math.ceil(cjk * 1.5 + other / 4);
}

/** The token estimate of a list of chat messages (the sum of their contents). */
export function estimateMessagesTokens(messages: readonly { readonly content: string }[]): number {
  let total = 0;
  for (const m of messages) total += estimateTokens(m.content);
  return total;
}
