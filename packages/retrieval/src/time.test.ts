// Time in queries: the window a query names, as wide as its words say, counted from the reference time.
import { describe, expect, it } from 'vitest';
import { inWindow, queryTimeWindow } from './time.js';

// Saturday 20 May 2023, noon UTC.
const REF = Date.UTC(2023, 4, 20, 12);
const day = (y: number, m: number, d: number): number => Date.UTC(y, m - 1, d);

describe('the window a query names', () => {
  it('is the day of a date, the month of a month, the year of a year', () => {
    expect(queryTimeWindow('What did Gina find on 1 February, 2023?', REF)).toMatchObject({
      from: day(2023, 2, 1),
      to: day(2023, 2, 2),
    });
    expect(queryTimeWindow('What did John attend in March 2023?', REF)).toMatchObject({
      from: day(2023, 3, 1),
      to: day(2023, 4, 1),
    });
    expect(queryTimeWindow('Where did John go on a road trip last year?', REF)).toMatchObject({
      from: day(2022, 1, 1),
      to: day(2023, 1, 1),
    });
  });

  it('counts relative words from the reference time, as wide as they say', () => {
    // The weekend before Saturday 20 May: Friday 12 to Monday 15.
    expect(queryTimeWindow('What did I do last weekend?', REF)).toMatchObject({
      from: day(2023, 5, 12),
      to: day(2023, 5, 15),
    });
    // "last week" is the week (Monday to Sunday) before this one.
    expect(queryTimeWindow('what did we fix last week', REF)).toMatchObject({
      from: day(2023, 5, 8),
      to: day(2023, 5, 15),
    });
    expect(queryTimeWindow('what happened yesterday', REF)).toMatchObject({
      from: day(2023, 5, 19),
      to: day(2023, 5, 20),
    });
    // The same words a year later name another window.
    expect(queryTimeWindow('what happened yesterday', REF + 365 * 86_400_000)?.from).toBe(day(2024, 5, 18));
  });

  it('is null for a query that names no date, or only a time of day', () => {
    expect(queryTimeWindow('When did Caroline go to the support group?', REF)).toBeNull();
    expect(queryTimeWindow('How does Jon feel about the opening night?', REF)).toBeNull();
    expect(queryTimeWindow('', REF)).toBeNull();
  });

  it('never throws on what it reads, and skips a query longer than a sentence', () => {
    for (const q of ['\u0000\u202e last week', 'in 99999999999 years', 'on 31 February', '1'.repeat(5000)]) {
      expect(() => queryTimeWindow(q, REF)).not.toThrow();
    }
    expect(queryTimeWindow(`${'x '.repeat(1500)} last week`, REF)).toBeNull();
    expect(queryTimeWindow('last week', Number.NaN)).toBeNull();
  });

  it('holds a memory whose time is inside it, the end excluded', () => {
    const w = { from: day(2023, 3, 1), to: day(2023, 4, 1), text: 'March' };
    expect(inWindow({ validFrom: day(2023, 3, 31) }, w)).toBe(true);
    expect(inWindow({ validFrom: day(2023, 4, 1) }, w)).toBe(false);
    expect(inWindow({ validFrom: day(2023, 2, 28) }, w)).toBe(false);
  });
});
