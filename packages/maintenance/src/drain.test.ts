import { describe, expect, it } from 'vitest';
import { classifyVector } from './drain.js';

describe('classifyVector', () => {
  it('accepts exactly-sized finite non-zero vectors only', () => {
    expect(classifyVector(new Float32Array([0.6, 0.8]), 2)).toBe('ok');
    expect(classifyVector(new Float32Array([0, 0]), 2)).toBe('zero');
    expect(classifyVector(new Float32Array([1, 0, 0]), 2)).toBe('malformed');
    expect(classifyVector(new Float32Array([Number.NaN, 1]), 2)).toBe('malformed');
    expect(classifyVector(new Float32Array([Number.POSITIVE_INFINITY, 1]), 2)).toBe('malformed');
    expect(classifyVector([0.6, 0.8], 2)).toBe('malformed');
    expect(classifyVector(undefined, 2)).toBe('malformed');
  });
});
