/**
 * Time in queries. A query that names a time ("last weekend", "in March 2023", "two weeks ago", "on 3 May") is
 * resolved against the call's reference time by chrono-node's English parser, into a window of epoch
 * milliseconds as wide as what the words name: a day for a date, the week for "last week", the month for "in
 * March", the year for "last year". A memory whose time (`validFrom`: when what it says holds, by default when
 * it was written) falls in the window gains a share of its lexical score, before fusion. A query that names no
 * time, or one only a clock time ("at night"), is unchanged.
 */
import type { MemoryBrief } from '@engram/store';
import * as chrono from 'chrono-node';

/** How a named time moves a memory; `boost` 0 turns it off. */
export interface TimeScoring {
  /** Share of its own lexical score a memory in the query's window gains. */
  readonly boost: number;
}

/**
 * Default: a memory in the named window gains twice its lexical score: the best of 0, 0.25, 0.5, 1, 2 and 4 on
 * LoCoMo's development split (conversations 1–5), where no question category lost (see the README).
 */
export const DEFAULT_TIME_SCORING: TimeScoring = Object.freeze({ boost: 2 });

/** Off: a named time changes nothing. */
export const NO_TIME_SCORING: TimeScoring = Object.freeze({ boost: 0 });

/** The window a query names, `from` inclusive and `to` exclusive, with the words that named it. */
export interface TimeWindow {
  readonly from: number;
  readonly to: number;
  /** The words of the query that named it (part of the query: never logged or recorded). */
  readonly text: string;
}

const DAY = 86_400_000;
/** Longest query parsed for a time: a time is named in a sentence, and parsing is linear in its length. */
const MAX_QUERY_CHARS = 2_000;

type Unit = 'day' | 'week' | 'weekend' | 'month' | 'year';

/** The span the words name: what they say ("week"), else the finest part of the date chrono is sure of. */
function unitOf(result: chrono.ParsedResult): Unit | null {
  const words = result.text.toLowerCase();
  if (/\bweekends?\b/.test(words)) return 'weekend';
  if (/\bweeks?\b/.test(words)) return 'week';
  if (/\bmonths?\b/.test(words)) return 'month';
  if (/\byears?\b/.test(words)) return 'year';
  const c = result.start;
  return c.isCertain('day') ? 'day' : c.isCertain('month') ? 'month' : c.isCertain('year') ? 'year' : null;
}

function startOfDay(t: number): number {
  return Math.floor(t / DAY) * DAY;
}

/** The window of one unit around a date chrono gave (UTC calendar). */
function spanOf(at: Date, unit: Unit): { from: number; to: number } {
  const y = at.getUTCFullYear();
  const m = at.getUTCMonth();
  switch (unit) {
    case 'year':
      return { from: Date.UTC(y, 0, 1), to: Date.UTC(y + 1, 0, 1) };
    case 'month':
      return { from: Date.UTC(y, m, 1), to: Date.UTC(y, m + 1, 1) };
    case 'week': {
      // The ISO week (Monday to Sunday) holding the date.
      const day = startOfDay(at.getTime());
      const monday = day - ((at.getUTCDay() + 6) % 7) * DAY;
      return { from: monday, to: monday + 7 * DAY };
    }
    case 'weekend': {
      // Friday evening to Monday: the weekend holding the date, or the one before it on a weekday.
      const day = startOfDay(at.getTime());
      const back = (at.getUTCDay() + 1) % 7; // days since Saturday
      const saturday = day - back * DAY;
      return { from: saturday - DAY, to: saturday + 2 * DAY };
    }
    default: {
      const day = startOfDay(at.getTime());
      return { from: day, to: day + DAY };
    }
  }
}

/**
 * The window a query names, resolved against `reference` (epoch ms), or null when it names none. Never throws:
 * a query chrono cannot read names no time.
 */
export function queryTimeWindow(query: string, reference: number): TimeWindow | null {
  if (query.length > MAX_QUERY_CHARS || !Number.isFinite(reference)) return null;
  let results: chrono.ParsedResult[];
  try {
    results = chrono.parse(query, { instant: new Date(reference), timezone: 0 }, { forwardDate: false });
  } catch {
    return null;
  }
  for (const result of results) {
    const unit = unitOf(result);
    if (unit === null) continue;
    const start = spanOf(result.start.date(), unit);
    const end = result.end === null || result.end === undefined ? start : spanOf(result.end.date(), unit);
    if (!(Number.isFinite(start.from) && Number.isFinite(end.to)) || end.to <= start.from) continue;
    return { from: start.from, to: end.to, text: result.text };
  }
  return null;
}

/** Whether a memory's time falls in the window. */
export function inWindow(record: Pick<MemoryBrief, 'validFrom'>, window: TimeWindow): boolean {
  return record.validFrom >= window.from && record.validFrom < window.to;
}
