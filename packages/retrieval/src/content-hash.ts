import { createHash } from 'node:crypto';

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * Normalises text the way the store does before hashing: lone surrogates → U+FFFD, NFKC, lower-case,
 * whitespace collapsed, trimmed.
 */
export function normalizeContent(text: string): string {
  return text.replace(LONE_SURROGATE, '\uFFFD').normalize('NFKC').toLowerCase().replace(/\s+/gu, ' ').trim();
}

/** SHA-256 (hex) of the normalised text: equal to the store's `contentHash` of a row with this content. */
export function contentHash(text: string): string {
  return createHash('sha256').update(normalizeContent(text), 'utf8').digest('hex');
}
