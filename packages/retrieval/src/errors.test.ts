import { describe, expect, it } from 'vitest';
import { EngramRetrievalError, isEngramRetrievalError } from './errors.js';

describe('EngramRetrievalError', () => {
  it('carries a stable code, a name and a cause', () => {
    const cause = new Error('inner');
    const error = new EngramRetrievalError(
      'ENGRAM_RETRIEVAL_INVALID_INPUT',
      'agentId must be a non-empty string.',
      {
        cause,
      },
    );
    expect(error).toMatchObject({
      code: 'ENGRAM_RETRIEVAL_INVALID_INPUT',
      name: 'EngramRetrievalError',
      cause,
    });
    expect(isEngramRetrievalError(error)).toBe(true);
  });

  it('is recognised by code and name, not by instanceof', () => {
    expect(
      isEngramRetrievalError({ name: 'EngramRetrievalError', code: 'ENGRAM_RETRIEVAL_INVALID_CONFIG' }),
    ).toBe(true);
    expect(isEngramRetrievalError({ name: 'EngramRetrievalError', code: 'ENGRAM_STORE_BUSY' })).toBe(false);
    expect(isEngramRetrievalError({ name: 'Error', code: 'ENGRAM_RETRIEVAL_INVALID_INPUT' })).toBe(false);
    expect(isEngramRetrievalError(new Error('x'))).toBe(false);
    expect(isEngramRetrievalError(null)).toBe(false);
  });
});
