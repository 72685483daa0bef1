import { describe, expect, it } from 'vitest';
import { mayMerge, textSimilarity, tokenSet } from './similarity.js';

describe('textSimilarity', () => {
  it('is Jaccard over words and CJK bigrams', () => {
    expect(textSimilarity('use pnpm for installs', 'use pnpm for installs')).toBe(1);
    expect(textSimilarity('a b', 'b c')).toBeCloseTo(1 / 3, 12);
    expect([...tokenSet('用户喜欢 pnpm')].sort()).toEqual(['pnpm', '喜欢', '户喜', '用户'].sort());
    expect(textSimilarity('', '')).toBe(1);
    expect(textSimilarity('x', '')).toBe(0);
  });
});

describe('mayMerge', () => {
  it('never merges memories that differ in a number, a negation or a named entity', () => {
    expect(mayMerge('The API listens on port 8080', 'The API listens on port 3000')).toBe(false);
    expect(mayMerge('use pnpm', "don't use pnpm")).toBe(false);
    expect(mayMerge('use pnpm', 'do not use pnpm')).toBe(false);
    expect(mayMerge('用 pnpm', '不用 pnpm')).toBe(false);
    expect(mayMerge('The user prefers English for replies', 'The user prefers Spanish for replies')).toBe(
      false,
    );
    expect(mayMerge('Tests live next to src/a.ts', 'Tests live next to src/b.ts')).toBe(false);
    expect(mayMerge('The API listens on port 8080', 'The API listens on port 8080.')).toBe(true);
    expect(mayMerge('use pnpm always', 'always use pnpm')).toBe(true);
  });
});
