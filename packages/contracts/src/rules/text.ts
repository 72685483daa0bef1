/**
 * Text rules shared by every layer: well-formed UTF-16, control characters, and the content normalisation
 * whose SHA-256 is a memory's `contentHash` (so a hash computed anywhere equals the one the store wrote).
 */
import * as nodeCrypto from 'node:crypto';

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const LONE_SURROGATES = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
const CONTROL = /[\u0000-\u001f\u007f]/;
const WHITESPACE_RUN = /\s+/gu;
/** Whitespace that the collapse would change: two in a row, or any but the plain space. */
const IRREGULAR_WHITESPACE = /\s\s|[^\S ]/u;

// Native since Node 20 (`String.prototype.isWellFormed` / `toWellFormed`) and 20.12 (`crypto.hash`, one-shot):
// the same results as the fallbacks, without a regular expression pass or a Hash object per call.
const nativeIsWellFormed = (String.prototype as { isWellFormed?: (this: string) => boolean }).isWellFormed;
const nativeToWellFormed = (String.prototype as { toWellFormed?: (this: string) => string }).toWellFormed;
const oneShotHash = (nodeCrypto as { hash?: (algorithm: string, data: string, encoding: 'hex') => string })
  .hash;

/** True when the string has no lone (unpaired) UTF-16 surrogate, i.e. it round-trips through UTF-8 unchanged. */
export function isWellFormedText(text: string): boolean {
  return nativeIsWellFormed === undefined ? !LONE_SURROGATE.test(text) : nativeIsWellFormed.call(text);
}

/** Replaces every lone surrogate by U+FFFD (what SQLite would store for it anyway). */
export function toWellFormedText(text: string): string {
  return nativeToWellFormed === undefined
    ? text.replace(LONE_SURROGATES, '\uFFFD')
    : nativeToWellFormed.call(text);
}

/** True when the string holds a C0 control character (U+0000–U+001F, NUL included) or DEL (U+007F). */
export function hasControlCharacter(text: string): boolean {
  return CONTROL.test(text);
}

// Text with no character above U+007F: NFKC leaves it as it is.
const NON_ASCII = /[^\x00-\x7f]/;

/** True when lower-case ASCII text has whitespace the collapse would change (two in a row, or not a space). */
function asciiIrregularWhitespace(lower: string): boolean {
  let space = false;
  for (let i = 0; i < lower.length; i += 1) {
    const c = lower.charCodeAt(i);
    if (c === 32) {
      if (space) return true;
      space = true;
    } else if (c >= 9 && c <= 13) {
      return true;
    } else {
      space = false;
    }
  }
  return false;
}

/** The second half of the normalisation, on text already NFKC: lower-case, whitespace runs collapsed, trimmed. */
function normalizeNfkc(nfkc: string): string {
  const lower = nfkc.toLowerCase();
  const irregular = NON_ASCII.test(lower)
    ? IRREGULAR_WHITESPACE.test(lower)
    : asciiIrregularWhitespace(lower);
  // Text whose whitespace is single plain spaces already is what the collapse would give (the common case).
  return (irregular ? lower.replace(WHITESPACE_RUN, ' ') : lower).trim();
}

function sha256Hex(text: string): string {
  return oneShotHash === undefined
    ? nodeCrypto.createHash('sha256').update(text, 'utf8').digest('hex')
    : oneShotHash('sha256', text, 'hex');
}

/**
 * Normalises text for hashing and duplicate detection: NFKC, lower-case, every run of whitespace collapsed to
 * one space, trimmed. Lone surrogates never throw (they are replaced by U+FFFD first).
 */
export function normalizeContent(text: string): string {
  const wellFormed = toWellFormedText(text);
  return normalizeNfkc(NON_ASCII.test(wellFormed) ? wellFormed.normalize('NFKC') : wellFormed);
}

/** SHA-256 (lower-case hex) of the normalised text: the `contentHash` of a memory and the value of `hash:` tags. */
export function contentHash(text: string): string {
  return sha256Hex(normalizeContent(text));
}

/**
 * {@link contentHash} of well-formed text (no lone surrogate) given its NFKC form, `text.normalize('NFKC')`: the
 * same hash, for a caller that has that form already (a store writing the form to its full-text index).
 */
export function contentHashOfNfkc(nfkc: string): string {
  return sha256Hex(normalizeNfkc(nfkc));
}
