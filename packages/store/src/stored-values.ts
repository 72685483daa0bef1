/**
 * Stored values as a reader takes them: a row written before a rule existed, by another tool, or by hand may hold a
 * tag list or metadata that is not JSON, or a timestamp no `Date` can hold. A read never fails on such a row: a
 * malformed tag list reads as none, malformed metadata as `{}`, a timestamp that is not a number as `NaN` (every
 * renderer checks a timestamp with `checkTimestamp` of `@engram/contracts` and prints it as invalid). The integrity
 * check of each store reports the row (see `IntegrityResult.badRows`), so the file is named damaged, not only a search.
 */
import { MAX_COUNTER } from './validate.js';

/** A stored tag list (JSON text or an array); anything else reads as no tags. */
export function storedTags(value: unknown): string[] {
  if (value === '[]') return [];
  let list: unknown = value;
  if (typeof value === 'string') {
    try {
      list = JSON.parse(value);
    } catch {
      return [];
    }
  }
  if (!Array.isArray(list)) return [];
  return list.filter((t): t is string => typeof t === 'string');
}

/** Stored metadata (JSON text or an object); anything but a JSON object reads as `{}`. */
export function storedMetadata(value: unknown): Record<string, unknown> {
  if (value === '{}') return {};
  let parsed: unknown = value;
  if (typeof value === 'string') {
    try {
      parsed = JSON.parse(value);
    } catch {
      return {};
    }
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return {};
  return parsed as Record<string, unknown>;
}

const utf8 = new TextDecoder('utf-8', { fatal: false });

/**
 * A stored text (content) as a string: a blob is read as UTF-8 (invalid sequences as U+FFFD), a number as its
 * decimal form, anything else as the empty string.
 */
export function storedText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value instanceof Uint8Array) return utf8.decode(value);
  if (typeof value === 'number' || typeof value === 'bigint') return String(value);
  return '';
}

/** A stored timestamp as a number (a bigint or numeric text converted); anything else reads as `NaN`. */
export function storedTimestamp(value: unknown): number {
  if (typeof value === 'number') return value;
  if (typeof value === 'bigint') return Number(value);
  if (typeof value === 'string' && /^-?\d+$/.test(value)) return Number(value);
  return Number.NaN;
}

/** A nullable stored timestamp (see {@link storedTimestamp}). */
export function storedTimestampOrNull(value: unknown): number | null {
  return value === null || value === undefined ? null : storedTimestamp(value);
}

/**
 * A stored position or cursor as a counter the store can keep adding to: an integer from 0 to `MAX_COUNTER`;
 * anything else (text, a fraction, a value past the bound, a negative one: a file damaged outside the store)
 * reads as 0.
 */
export function storedCounter(value: unknown): number {
  const n = typeof value === 'bigint' || typeof value === 'string' ? Number(value) : value;
  return typeof n === 'number' && Number.isSafeInteger(n) && n >= 0 && n <= MAX_COUNTER ? n : 0;
}
