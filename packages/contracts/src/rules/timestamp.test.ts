import { describe, expect, it } from 'vitest';
import { checkTimestamp, isValidTimestamp, MAX_TIMESTAMP_MS } from './timestamp.js';

describe('timestamp rule', () => {
  it('accepts the whole range a Date can render, both ends included', () => {
    expect(MAX_TIMESTAMP_MS).toBe(8.64e15);
    for (const ms of [0, 1_700_000_000_000, MAX_TIMESTAMP_MS, -MAX_TIMESTAMP_MS]) {
      expect(checkTimestamp(ms)).toBeNull();
      expect(() => new Date(ms).toISOString()).not.toThrow();
    }
  });

  it('refuses one millisecond past either end (where toISOString throws)', () => {
    expect(checkTimestamp(MAX_TIMESTAMP_MS + 1)).toBe('outOfRange');
    expect(checkTimestamp(-MAX_TIMESTAMP_MS - 1)).toBe('outOfRange');
    expect(checkTimestamp(8_640_000_000_000_001)).toBe('outOfRange');
    expect(() => new Date(MAX_TIMESTAMP_MS + 1).toISOString()).toThrow(RangeError);
  });

  it('refuses fractions, strings, NaN, infinities and non-numbers', () => {
    expect(checkTimestamp(1.5)).toBe('notInteger');
    expect(checkTimestamp('1700000000000')).toBe('notInteger');
    expect(checkTimestamp(Number.NaN)).toBe('notInteger');
    expect(checkTimestamp(Number.POSITIVE_INFINITY)).toBe('notInteger');
    expect(checkTimestamp(null)).toBe('notInteger');
    expect(isValidTimestamp(1)).toBe(true);
    expect(isValidTimestamp(1e300)).toBe(false);
  });
});
