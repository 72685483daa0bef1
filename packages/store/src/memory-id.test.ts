import { checkMemoryId } from '@engram/contracts';
import { describe, expect, it } from 'vitest';
import { timeOrderedId } from './memory-id.js';

const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** The creation millisecond a version 7 id carries in its first 48 bits. */
function millisecondOf(id: string): number {
  return Number.parseInt(id.slice(0, 8) + id.slice(9, 13), 16);
}

describe('timeOrderedId', () => {
  it('makes 100k distinct version 7 ids in a tight loop, each sorting after the one before', () => {
    const before = Date.now();
    const ids: string[] = [];
    for (let i = 0; i < 100_000; i += 1) ids.push(timeOrderedId());
    const after = Date.now();
    expect(new Set(ids).size).toBe(ids.length);
    let unordered = 0;
    let malformed = 0;
    for (let i = 0; i < ids.length; i += 1) {
      const id = ids[i] as string;
      if (!V7.test(id)) malformed += 1;
      if (i > 0 && !((ids[i - 1] as string) < id)) unordered += 1;
    }
    expect(malformed).toBe(0);
    expect(unordered).toBe(0);
    // The ids carry the time they were made (a counter that overflows within a millisecond may run ahead by one).
    expect(millisecondOf(ids[0] as string)).toBeGreaterThanOrEqual(before);
    expect(millisecondOf(ids[ids.length - 1] as string)).toBeLessThanOrEqual(after + 1);
  });

  it('passes the memory id rule every store applies to a generated id', () => {
    expect(checkMemoryId(timeOrderedId())).toBeNull();
  });
});
