/**
 * The timestamp rule: epoch milliseconds as an integer inside the range a JavaScript `Date` can represent
 * (±8.64e15 ms, about ±273,790 years around 1970). A value outside it cannot be rendered (`toISOString`
 * throws a RangeError), so every entry point refuses it and every renderer checks it.
 */

/** The largest magnitude of a JavaScript `Date` time value, in milliseconds. */
export const MAX_TIMESTAMP_MS = 8_640_000_000_000_000;

/** Why a timestamp is refused. */
export const TIMESTAMP_PROBLEMS = ['notInteger', 'outOfRange'] as const;
/** A timestamp problem. */
export type TimestampProblem = (typeof TIMESTAMP_PROBLEMS)[number];

/**
 * Checks epoch milliseconds: an integer (a number, not a string) from -{@link MAX_TIMESTAMP_MS} to
 * {@link MAX_TIMESTAMP_MS}. Returns the problem, or null when valid. Never throws.
 */
export function checkTimestamp(value: unknown): TimestampProblem | null {
  if (typeof value !== 'number' || !Number.isInteger(value)) return 'notInteger';
  if (value > MAX_TIMESTAMP_MS || value < -MAX_TIMESTAMP_MS) return 'outOfRange';
  return null;
}

/** True when {@link checkTimestamp} finds no problem. */
export function isValidTimestamp(value: unknown): value is number {
  return checkTimestamp(value) === null;
}
