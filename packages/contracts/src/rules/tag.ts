/**
 * The tag rule: `prefix:value`, the prefix matching {@link TAG_PREFIX_PATTERN}, the value (everything after the
 * first `:`) non-empty, at most {@link MAX_TAG_VALUE_LENGTH} UTF-16 units, without control characters or lone
 * surrogates; at most {@link MAX_TAGS} distinct tags per memory. The store enforces it; search filters and
 * derived tags are checked with the same function.
 */
import { hasControlCharacter, isWellFormedText } from './text.js';

/** Maximum number of distinct tags on one memory. */
export const MAX_TAGS = 64;
/** Maximum length of a tag value (the part after the first `:`). */
export const MAX_TAG_VALUE_LENGTH = 512;
/** A tag prefix: lower-case letter, then up to 31 of `a-z 0-9 _ -`. */
export const TAG_PREFIX_PATTERN: RegExp = /^[a-z][a-z0-9_-]{0,31}$/;

/** Why a tag is refused. */
export const TAG_PROBLEMS = [
  'notString',
  'missingPrefix',
  'malformedPrefix',
  'emptyValue',
  'valueTooLong',
  'controlCharacter',
  'loneSurrogate',
] as const;
/** A tag problem. */
export type TagProblem = (typeof TAG_PROBLEMS)[number];

/** Checks one `prefix:value` tag; returns the problem, or null when valid. */
export function checkTag(value: unknown): TagProblem | null {
  if (typeof value !== 'string') return 'notString';
  const colon = value.indexOf(':');
  if (colon <= 0) return 'missingPrefix';
  if (!TAG_PREFIX_PATTERN.test(value.slice(0, colon))) return 'malformedPrefix';
  const rest = value.slice(colon + 1);
  if (rest.length === 0) return 'emptyValue';
  if (rest.length > MAX_TAG_VALUE_LENGTH) return 'valueTooLong';
  if (hasControlCharacter(rest)) return 'controlCharacter';
  if (!isWellFormedText(rest)) return 'loneSurrogate';
  return null;
}

/** True when {@link checkTag} finds no problem; never throws. */
export function isValidTag(value: unknown): value is string {
  return checkTag(value) === null;
}
