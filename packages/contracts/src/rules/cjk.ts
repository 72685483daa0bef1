/**
 * The one CJK character class: every Han ideograph (the unified block, every extension, compatibility
 * ideographs, radicals, 〇 and 々), Hiragana, Katakana (half-width forms included), Hangul (syllables and
 * jamo), the prolonged sound mark ー (full- and half-width) and 〆. Punctuation is not in it: a text of
 * only 「」。 holds no CJK word. The token estimate adds punctuation and full-width forms on its own.
 */

/** The class as a regular-expression source (needs the `u` flag); build your own RegExp with other flags. */
export const CJK_CLASS_SOURCE =
  '[\\p{Script=Han}\\p{Script=Hiragana}\\p{Script=Katakana}\\p{Script=Hangul}\\u3006\\u30FC\\uFF70]';

/** One CJK character (no `g` flag, so `test` keeps no state). */
export const CJK_CHARACTER: RegExp = new RegExp(CJK_CLASS_SOURCE, 'u');

/** True when the text contains at least one CJK character. */
export function hasCjk(text: string): boolean {
  return CJK_CHARACTER.test(text);
}
