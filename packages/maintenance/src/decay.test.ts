import { describe, expect, it } from 'vitest';
import { DECAY_BASE_HALF_LIFE_MS, decayScore, shouldArchiveByDecay } from './decay.js';

const DAY = 24 * 60 * 60 * 1000;

describe('decayScore', () => {
  it('is 1 for a new memory and halves every 30 days at importance 0', () => {
    expect(DECAY_BASE_HALF_LIFE_MS).toBe(30 * DAY);
    expect(decayScore(0, 0)).toBe(1);
    expect(decayScore(30 * DAY, 0)).toBeCloseTo(0.5, 12);
    expect(decayScore(60 * DAY, 0)).toBeCloseTo(0.25, 12);
  });

  it('stretches the half-life by (1 + importance)', () => {
    expect(decayScore(60 * DAY, 1)).toBeCloseTo(0.5, 12);
    expect(decayScore(45 * DAY, 0.5)).toBeCloseTo(0.5, 12);
    // 0.5^(90 / (30 · 1.2)) = 0.5^2.5
    expect(decayScore(90 * DAY, 0.2)).toBeCloseTo(0.5 ** 2.5, 12);
  });

  it('clamps negative ages and out-of-range importance', () => {
    expect(decayScore(-5 * DAY, 0)).toBe(1);
    expect(decayScore(60 * DAY, 7)).toBeCloseTo(0.5, 12);
    expect(decayScore(30 * DAY, Number.NaN)).toBeCloseTo(0.5, 12);
  });
});

describe('shouldArchiveByDecay', () => {
  const now = 1_000 * DAY;
  const config = { floor: 0.1, minAgeMs: 14 * DAY };
  const row = (ageDays: number, kind: 'event' | 'fact' | 'semantic' = 'semantic', importance = 0) => ({
    kind,
    importance,
    createdAt: now - ageDays * DAY,
    lastAccessedAt: null,
  });

  it('archives below the floor after the minimum age only', () => {
    // 0.5^(100/30) ≈ 0.099 < 0.1
    expect(shouldArchiveByDecay(now, row(100), config)).toBe(true);
    expect(shouldArchiveByDecay(now, row(99), config)).toBe(false);
    expect(shouldArchiveByDecay(now, row(200), { floor: 0.1, minAgeMs: 300 * DAY })).toBe(false);
  });

  it('keeps important memories longer', () => {
    expect(shouldArchiveByDecay(now, row(100, 'semantic', 1), config)).toBe(false);
    expect(shouldArchiveByDecay(now, row(200, 'semantic', 1), config)).toBe(true);
  });

  it('exempts facts by default and honours a custom exemption list', () => {
    expect(shouldArchiveByDecay(now, row(500, 'fact'), config)).toBe(false);
    expect(shouldArchiveByDecay(now, row(500, 'event'), config)).toBe(true);
    expect(shouldArchiveByDecay(now, row(500, 'event'), { ...config, exemptKinds: ['event'] })).toBe(false);
    expect(shouldArchiveByDecay(now, row(500, 'fact'), { ...config, exemptKinds: [] })).toBe(true);
  });

  it('counts age from the last access', () => {
    const accessed = { ...row(500), lastAccessedAt: now - DAY };
    expect(shouldArchiveByDecay(now, accessed, config)).toBe(false);
  });
});
