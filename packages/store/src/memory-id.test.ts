import { checkMemoryId } from '@engram/contracts';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { timeOrderedId } from './memory-id.js';

const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** The creation millisecond a version 7 id carries in its first 48 bits. */
function millisecondOf(id: string): number {
  return Number.parseInt(id.slice(0, 8) + id.slice(9, 13), 16);
}

afterEach(() => {
  vi.restoreAllMocks();
});

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
    // 100k ids and 100k regular-expression checks: well under a second alone, longer on a loaded machine.
  }, 60_000);

  it('keeps counting within a millisecond and when the clock steps back, never reusing or reordering an id', async () => {
    // A fresh module instance: its state (the last millisecond, here in the year 2400) stays with this test.
    vi.resetModules();
    const { timeOrderedId } = await import('./memory-id.js');
    const clock = vi.spyOn(Date, 'now');
    // A millisecond later than any id made before, so this test starts a new one.
    const t = Date.UTC(2400, 0, 1);
    clock.mockReturnValue(t);
    const same = Array.from({ length: 1000 }, () => timeOrderedId());
    clock.mockReturnValue(t - 60_000);
    const back = Array.from({ length: 1000 }, () => timeOrderedId());
    clock.mockReturnValue(t + 1);
    const next = timeOrderedId();
    const ids = [...same, ...back, next];
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.every((id) => V7.test(id))).toBe(true);
    expect(ids.every((id, i) => i === 0 || (ids[i - 1] as string) < id)).toBe(true);
    // The clock that stepped back is not believed: those ids keep the last millisecond and count on; the next
    // millisecond starts afresh.
    expect([...same, ...back].every((id) => millisecondOf(id) === t)).toBe(true);
    expect(millisecondOf(next)).toBe(t + 1);
    // The tail after the counter is random: ids of one millisecond differ there too.
    expect(new Set(same.map((id) => id.slice(-10))).size).toBeGreaterThan(990);
  });

  it('passes the memory id rule every store applies to a generated id', () => {
    expect(checkMemoryId(timeOrderedId())).toBeNull();
  });
});
