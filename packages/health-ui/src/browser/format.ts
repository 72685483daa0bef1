import type { Locale, Translate } from './i18n.js';

/** What the page shows for a missing sample or gauge: an em dash, never `0 ms`. */
export const EM_DASH = '—';

/** Number formatting of one language; every function renders a missing value as {@link EM_DASH}. */
export interface Formatter {
  /** A grouped integer (`12,345`). */
  count(value: number | null | undefined): string;
  /** A latency in milliseconds (`0.42 ms`, `12.3 ms`, `1,234 ms`). */
  ms(value: number | null | undefined): string;
  /** An axis tick in milliseconds, without trailing zeros (`0 ms`, `2.5 ms`, `10 ms`). */
  msCompact(value: number | null | undefined): string;
  /** A duration in milliseconds, in the largest fitting unit (`3.50 ms`, `12.5 s`, `4 min`, `2.5 h`). */
  duration(value: number | null | undefined): string;
  /** An age in milliseconds: like `duration`, whole milliseconds below a second (`0 ms`, `850 ms`, `12.5 s`). */
  age(value: number | null | undefined): string;
  /** A number of rows (`64 rows`). */
  rows(value: number | null | undefined): string;
  /** A date and time (epoch ms). */
  dateTime(value: number | null | undefined): string;
  /** A time of day (epoch ms). */
  time(value: number | null | undefined): string;
}

/** True for a value the page can show: a finite, non-negative number. */
export function isPresent(value: number | null | undefined): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0;
}

/** Fraction digits for a millisecond figure: two below 10 ms, one below 100 ms, none above. */
export function msFractionDigits(value: number): number {
  if (value < 10) return 2;
  if (value < 100) return 1;
  return 0;
}

/** Creates the formatter of one language; unit words come from the message tables. */
export function createFormatter(locale: Locale, t: Translate): Formatter {
  const integer = new Intl.NumberFormat(locale, { maximumFractionDigits: 0 });
  const fixed = [0, 1, 2].map(
    (digits) =>
      new Intl.NumberFormat(locale, { minimumFractionDigits: digits, maximumFractionDigits: digits }),
  );
  const upToOne = new Intl.NumberFormat(locale, { maximumFractionDigits: 1 });
  const upToTwo = new Intl.NumberFormat(locale, { maximumFractionDigits: 2 });
  const dateTime = new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeStyle: 'medium' });
  const timeOfDay = new Intl.DateTimeFormat(locale, { timeStyle: 'medium' });

  const ms = (value: number | null | undefined): string => {
    if (!isPresent(value)) return EM_DASH;
    const digits = msFractionDigits(value);
    return t('unit.ms', { value: (fixed[digits] ?? integer).format(value) });
  };

  const longer = (value: number): string => {
    if (value < 60_000) return t('unit.s', { value: upToOne.format(value / 1000) });
    if (value < 3_600_000) return t('unit.min', { value: upToOne.format(value / 60_000) });
    return t('unit.h', { value: upToOne.format(value / 3_600_000) });
  };

  return {
    count: (value) => (isPresent(value) ? integer.format(Math.round(value)) : EM_DASH),
    ms,
    msCompact: (value) => (isPresent(value) ? t('unit.ms', { value: upToTwo.format(value) }) : EM_DASH),
    duration(value) {
      if (!isPresent(value)) return EM_DASH;
      return value < 1000 ? ms(value) : longer(value);
    },
    age(value) {
      if (!isPresent(value)) return EM_DASH;
      return value < 1000 ? t('unit.ms', { value: integer.format(Math.round(value)) }) : longer(value);
    },
    rows: (value) =>
      isPresent(value) ? t('unit.rows', { value: integer.format(Math.round(value)) }) : EM_DASH,
    dateTime: (value) => (isPresent(value) ? dateTime.format(value) : EM_DASH),
    time: (value) => (isPresent(value) ? timeOfDay.format(value) : EM_DASH),
  };
}
