import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import * as enums from './enums.js';

describe('the enums module', () => {
  it('imports nothing, so the health page can load its build in a browser as is', () => {
    const source = readFileSync(new URL('./enums.ts', import.meta.url), 'utf8');
    expect(source).not.toMatch(/^\s*(import|export\s+\*|export\s+\{[^}]*\}\s+from)\b/m);
    expect(source).not.toMatch(/\brequire\(|\bimport\(/);
  });

  it('lists every tuple without duplicates, in a stable order', () => {
    const tuples = Object.entries(enums).filter(([, v]) => Array.isArray(v)) as [string, readonly string[]][];
    expect(tuples.length).toBeGreaterThanOrEqual(23);
    for (const [, values] of tuples) expect(new Set(values).size).toBe(values.length);
    expect(enums.RETRIEVAL_PURPOSES).toEqual(['recall', 'search', 'decision', 'injection']);
    expect(enums.RETRIEVAL_STAGES.at(-1)).toBe('total');
    expect(enums.DEGRADATION_CAUSES).toContain('ftsUnavailable');
  });

  it('recalls every kind except the managed persona and skill records', () => {
    expect(enums.MEMORY_KINDS.filter((k) => !enums.RECALLABLE_KINDS.includes(k))).toEqual([
      'persona',
      'skill',
    ]);
  });
});
