/**
 * Text rules shared by every layer: well-formed UTF-16, control characters, and the content normalisation
 * whose SHA-256 is a memory's `contentHash` (so a hash computed anywhere equals the one the store wrote).
 */
import { createHash } from 'node:crypto';

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const LONE_SURROGATES = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
const CONTROL = /[\u0000-\u001f\u007f]/;

/** True when the string has no lone (unpaired) UTF-16 surrogate, i.e. it round-trips through UTF-8 unchanged. */
export function isWellFormedText(text: string): boolean {
  return !LONE_SURROGATE.test(text);
}

/** Replaces every lone surrogate by U+FFFD (what SQLite would store for it anyway). */
export function toWellFormedText(text: string): string {
  return text.replace(LONE_SURROGATES, '\uFFFD');
}

/** True when the string holds a C0 control character (U+0000–U+001F, NUL included) or DEL (U+007F). */
export function hasControlCharacter(text: string): boolean {
  return CONTROL.test(text);
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
