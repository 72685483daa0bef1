import { EngramError, engramErrorCode } from '@engram/contracts/errors';
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

  it('is an EngramError of the shared hierarchy: not retryable, its code read by engramErrorCode', () => {
    const error = new EngramRetrievalError('ENGRAM_RETRIEVAL_INVALID_CONFIG', 'limit is out of range.');
    expect(error).toBeInstanceOf(EngramError);
    expect(error.retryable).toBe(false);
    expect(engramErrorCode(error)).toBe('ENGRAM_RETRIEVAL_INVALID_CONFIG');
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
