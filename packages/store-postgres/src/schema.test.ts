import { describe, expect, it } from 'vitest';
import { pgvectorSupported } from './schema.js';

describe('pgvector version check', () => {
  it('accepts 0.8 and later (iterative index scans) and refuses older or unknown versions', () => {
    for (const v of ['0.8.0', '0.8.7', '0.9.1', '1.0.0', '0.10.0']) expect(pgvectorSupported(v)).toBe(true);
    for (const v of ['0.7.4', '0.5.1', '0.4', '', 'dev', undefined]) expect(pgvectorSupported(v)).toBe(false);
  });
});
