import { describe, expect, it } from 'vitest';
import { niceCeiling } from './charts.js';
import { createFormatter, EM_DASH, isPresent, msFractionDigits } from './format.js';
import { createTranslator } from './i18n.js';

const en = createFormatter('en', createTranslator('en'));
const zh = createFormatter('zh-CN', createTranslator('zh-CN'));

describe('missing values', () => {
  it('render as an em dash, never as 0 ms', () => {
    for (const missing of [null, undefined, Number.NaN, Number.POSITIVE_INFINITY, -1]) {
      expect(en.ms(missing)).toBe(EM_DASH);
      expect(zh.ms(missing)).toBe(EM_DASH);
      expect(en.count(missing)).toBe(EM_DASH);
      expect(en.duration(missing)).toBe(EM_DASH);
      expect(en.age(missing)).toBe(EM_DASH);
      expect(en.msCompact(missing)).toBe(EM_DASH);
      expect(en.rows(missing)).toBe(EM_DASH);
      expect(en.dateTime(missing)).toBe(EM_DASH);
      expect(en.time(missing)).toBe(EM_DASH);
    }
    expect(EM_DASH).toBe('\u2014');
    expect(en.ms(null)).not.toContain('0');
  });

  it('keeps a real zero sample distinct from a missing one', () => {
    expect(isPresent(0)).toBe(true);
    expect(isPresent(null)).toBe(false);
    expect(en.ms(0)).toBe('0.00 ms');
    expect(en.count(0)).toBe('0');
  });
});

describe('milliseconds', () => {
  it('uses two decimals below 10 ms, one below 100 ms, none above, with grouping', () => {
    expect(msFractionDigits(0.5)).toBe(2);
    expect(msFractionDigits(10)).toBe(1);
    expect(msFractionDigits(100)).toBe(0);
    expect(en.ms(0.4237)).toBe('0.42 ms');
    expect(en.ms(3.456)).toBe('3.46 ms');
    expect(en.ms(12.345)).toBe('12.3 ms');
    expect(en.ms(99.94)).toBe('99.9 ms');
    expect(en.ms(1234.4)).toBe('1,234 ms');
    expect(en.ms(98_765.5)).toBe('98,766 ms');
  });

  it('takes the unit from the message table of the language', () => {
    expect(zh.ms(12.345)).toBe('12.3 毫秒');
    expect(zh.ms(1234.4)).toBe('1,234 毫秒');
  });
});

describe('counts and durations', () => {
  it('groups integers by the language', () => {
    expect(en.count(1_234_567)).toBe('1,234,567');
    expect(zh.count(1_234_567)).toBe('1,234,567');
    expect(en.count(41.6)).toBe('42');
    expect(en.rows(2048)).toBe('2,048 rows');
    expect(zh.rows(2048)).toBe('2,048 行');
  });

  it('formats axis ticks without trailing zeros', () => {
    expect(en.msCompact(0)).toBe('0 ms');
    expect(en.msCompact(2.5)).toBe('2.5 ms');
    expect(en.msCompact(10)).toBe('10 ms');
    expect(en.msCompact(2500)).toBe('2,500 ms');
  });

  it('picks the largest fitting unit for durations and ages', () => {
    expect(en.duration(3.5)).toBe('3.50 ms');
    expect(en.duration(850)).toBe('850 ms');
    expect(en.age(0)).toBe('0 ms');
    expect(en.age(850.4)).toBe('850 ms');
    expect(en.age(12_500)).toBe('12.5 s');
    expect(en.duration(12_500)).toBe('12.5 s');
    expect(en.duration(240_000)).toBe('4 min');
    expect(en.duration(9_000_000)).toBe('2.5 h');
    expect(zh.duration(12_500)).toBe('12.5 秒');
    expect(zh.duration(240_000)).toBe('4 分钟');
  });
});

describe('chart scale', () => {
  it('rounds the axis maximum up to 1, 2, 2.5 or 5 times a power of ten', () => {
    expect(niceCeiling(0)).toBe(1);
    expect(niceCeiling(Number.NaN)).toBe(1);
    expect(niceCeiling(0.37)).toBe(0.5);
    expect(niceCeiling(2.2)).toBe(2.5);
    expect(niceCeiling(7)).toBe(10);
    expect(niceCeiling(12)).toBe(20);
    expect(niceCeiling(45)).toBe(50);
    expect(niceCeiling(100)).toBe(100);
    expect(niceCeiling(1001)).toBe(2000);
  });
});
