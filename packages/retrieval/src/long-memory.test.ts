import { describe, expect, it } from 'vitest';
import {
  DEFAULT_LONG_MEMORY_SCORING,
  isMemoryScore,
  longMemoryGain,
  NO_LONG_MEMORY_SCORING,
} from './long-memory.js';

describe('the long-memory prior', () => {
  it('gives the memory with the highest whole-memory score weight × the top score, the others in proportion', () => {
    const weight = DEFAULT_LONG_MEMORY_SCORING.weight;
    expect(longMemoryGain(8, 8, 4, DEFAULT_LONG_MEMORY_SCORING)).toBeCloseTo(weight * 4, 12);
    expect(longMemoryGain(2, 8, 4, DEFAULT_LONG_MEMORY_SCORING)).toBeCloseTo((weight * 4) / 4, 12);
  });

  it('adds nothing when turned off or when a store gave no usable whole-memory score', () => {
    expect(longMemoryGain(8, 8, 4, NO_LONG_MEMORY_SCORING)).toBe(0);
    for (const bad of [undefined, Number.NaN, Number.POSITIVE_INFINITY, -1]) {
      expect(isMemoryScore(bad)).toBe(false);
      expect(longMemoryGain(bad, 8, 4, DEFAULT_LONG_MEMORY_SCORING)).toBe(0);
    }
    expect(longMemoryGain(3, 0, 4, DEFAULT_LONG_MEMORY_SCORING)).toBe(0);
  });
});
