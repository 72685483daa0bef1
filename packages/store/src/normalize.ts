/**
 * Store-side text helpers built on the shared rules of `@engram/contracts` (content normalisation and hash, the
 * CJK class and well-formed text live there): the agent-token hash, CJK segmentation for the lexical plan,
 * code-point length and the LIKE-path text of a row.
 */
import { createHash } from 'node:crypto';
import { CJK_CLASS_SOURCE, hasCjk } from '@engram/contracts/rules';

/** SHA-256 hex of a string as-is (UTF-8). */
export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

const CJK_RUN = new RegExp(`${CJK_CLASS_SOURCE}+`, 'gu');

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

const NON_ASCII = /[^\x00-\x7f]/;

/** True when the text has no character above U+007F (so NFKC leaves it as it is, and it holds no CJK). */
export function isAscii(text: string): boolean {
  return !NON_ASCII.test(text);
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
