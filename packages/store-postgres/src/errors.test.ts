import { EngramStoreError } from '@engram/store';
import { describe, expect, it } from 'vitest';
import { classifyPgError } from './errors.js';

const pgError = (
  code: string,
  message = 'duplicate key value violates unique constraint "x" Key (id)=(secret)',
) => Object.assign(new Error(message), { code });

describe('classifyPgError', () => {
  it('maps SQLSTATE classes to the store codes, retryable only when busy', () => {
    expect(classifyPgError(pgError('23505')).code).toBe('ENGRAM_STORE_CONFLICT');
    const busy = classifyPgError(pgError('40P01'));
    expect([busy.code, busy.retryable]).toEqual(['ENGRAM_STORE_BUSY', true]);
    expect(classifyPgError(pgError('55P03')).code).toBe('ENGRAM_STORE_BUSY');
    expect(classifyPgError(pgError('08006')).code).toBe('ENGRAM_STORE_IO');
    expect(classifyPgError(pgError('ECONNREFUSED')).code).toBe('ENGRAM_STORE_IO');
    expect(classifyPgError(pgError('XX001')).code).toBe('ENGRAM_STORE_CORRUPT');
    expect(classifyPgError(new Error('Cannot use a pool after calling end on the pool')).code).toBe(
      'ENGRAM_STORE_CLOSED',
    );
    expect(classifyPgError(pgError('42601')).code).toBe('ENGRAM_STORE_UNKNOWN');
  });

  it('never carries the server message (user values, SQL) and keeps a store error as it is', () => {
    const err = classifyPgError(pgError('23505'), 'insertMemory');
    expect(err.message).not.toContain('secret');
    expect(err.message).toContain('insertMemory');
    const own = new EngramStoreError('ENGRAM_STORE_NOT_FOUND', 'no memory');
    expect(classifyPgError(own)).toBe(own);
  });
});
