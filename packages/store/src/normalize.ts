import { createHash } from 'node:crypto';

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** True when the string has no lone (unpaired) UTF-16 surrogate, i.e. it round-trips through UTF-8 unchanged. */
export function isWellFormedText(text: string): boolean {
  LONE_SURROGATE.lastIndex = 0;
  const bad = LONE_SURROGATE.test(text);
  LONE_SURROGATE.lastIndex = 0;
  return !bad;
}

/** Replaces every lone surrogate by U+FFFD (what SQLite would store for it anyway). */
export function toWellFormedText(text: string): string {
  return text.replace(LONE_SURROGATE, '\uFFFD');
}

/**
 * Normalises text for hashing and duplicate detection: NFKC, lower-case, every run of whitespace collapsed to
 * one space, trimmed. Lone surrogates never throw (they are replaced by U+FFFD first).
 */
export function normalizeContent(text: string): string {
  return toWellFormedText(text).normalize('NFKC').toLowerCase().replace(/\s+/gu, ' ').trim();
}

/** SHA-256 (lower-case hex) of the normalised text: the `contentHash` of a memory and the value of `hash:` tags. */
export function contentHash(text: string): string {
  return createHash('sha256').update(normalizeContent(text), 'utf8').digest('hex');
}

/** SHA-256 hex of a string as-is (UTF-8). */
export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** The characters that count as CJK for search routing: Han, Hiragana, Katakana (with ー), Hangul. */
const CJK_CHAR = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\u30FC\u3005\u3006]/u;
const CJK_RUN =
  /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\u30FC\u3005\u3006]+/gu;

/** True when the text contains at least one CJK character (Han, Hiragana, Katakana or Hangul). */
export function hasCjk(text: string): boolean {
  return CJK_CHAR.test(text);
}

/** Splits text into alternating CJK and non-CJK segments, in order (empty segments are omitted). */
export function splitCjkSegments(text: string): { readonly text: string; readonly cjk: boolean }[] {
  const out: { text: string; cjk: boolean }[] = [];
  let last = 0;
  for (const match of text.matchAll(CJK_RUN)) {
    const start = match.index ?? 0;
    if (start > last) out.push({ text: text.slice(last, start), cjk: false });
    out.push({ text: match[0], cjk: true });
    last = start + match[0].length;
  }
  if (last < text.length) out.push({ text: text.slice(last), cjk: false });
  return out;
}

/** Number of Unicode code points of a string. */
export function codePointLength(text: string): number {
  let n = 0;
  for (const _ of text) n += 1;
  return n;
}

/**
 * The text the LIKE path matches for a row: the NFKC form of the content when the row has CJK and NFKC changes
 * it (half-width katakana, Kangxi radicals, compatibility ideographs), else null (the content itself is used).
 */
export function likeText(content: string): string | null {
  const nfkc = content.normalize('NFKC');
  return nfkc !== content && hasCjk(nfkc) ? nfkc : null;
}
