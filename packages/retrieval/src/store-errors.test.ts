import { ENGRAM_STORE_ERROR_CODES, type EngramStoreErrorCode } from '@engram/store';
import { describe, expect, it } from 'vitest';
import { classifyStoreError, type StoreFailureCause } from './store-errors.js';

// Typed over every store code: a code the store adds fails the typecheck until it is classified here.
const EXPECTED: Record<EngramStoreErrorCode, StoreFailureCause> = {
  // The retriever validates with the store's rules first: a store INVALID_INPUT is unexpected, not a store fault.
  ENGRAM_STORE_INVALID_INPUT: 'unknown',
  ENGRAM_STORE_NOT_FOUND: 'storeError',
  ENGRAM_STORE_REVISION_CONFLICT: 'storeError',
  ENGRAM_STORE_CONFLICT: 'storeError',
  ENGRAM_STORE_BUSY: 'storeTimeout',
  ENGRAM_STORE_FINGERPRINT_MISMATCH: 'storeUnusable',
  ENGRAM_STORE_VECTOR_INDEX_MISMATCH: 'storeUnusable',
  ENGRAM_STORE_SCHEMA_TOO_NEW: 'storeUnusable',
  ENGRAM_STORE_SCHEMA_TOO_OLD: 'storeUnusable',
  ENGRAM_STORE_NOT_ENGRAM: 'storeUnusable',
  ENGRAM_STORE_READ_ONLY: 'storeError',
  ENGRAM_STORE_VECTOR_DIMENSIONS: 'storeError',
  ENGRAM_STORE_VECTOR_INVALID: 'storeError',
  ENGRAM_STORE_VECTOR_UNAVAILABLE: 'vectorCold',
  ENGRAM_STORE_NATIVE_UNAVAILABLE: 'storeUnusable',
  ENGRAM_STORE_CLOSED: 'storeUnusable',
  ENGRAM_STORE_IO: 'storeError',
  ENGRAM_STORE_CORRUPT: 'storeUnusable',
  ENGRAM_STORE_FTS_UNAVAILABLE: 'ftsUnavailable',
  ENGRAM_STORE_ENCRYPTION_KEY: 'storeUnusable',
  ENGRAM_STORE_UNKNOWN: 'storeError',
};

describe('classifyStoreError', () => {
  it('maps every store error code to a degradation cause', () => {
    for (const code of ENGRAM_STORE_ERROR_CODES) {
      expect([code, classifyStoreError({ code })]).toEqual([code, EXPECTED[code]]);
    }
  });

  it('reads the code only, never the message', () => {
    expect(classifyStoreError(new Error('SQLITE_BUSY: database is locked'))).toBe('storeError');
    expect(classifyStoreError({ code: 'ENGRAM_STORE_FTS_UNAVAILABLE', message: 'closed' })).toBe(
      'ftsUnavailable',
    );
    expect(classifyStoreError({ code: 42 })).toBe('storeError');
    expect(classifyStoreError(null)).toBe('storeError');
  });

  it('reports `ftsUnavailable` for the FTS-unavailable code, and only for it', () => {
    expect(classifyStoreError({ code: 'ENGRAM_STORE_FTS_UNAVAILABLE' })).toBe('ftsUnavailable');
    const fts = ENGRAM_STORE_ERROR_CODES.filter((code) => classifyStoreError({ code }) === 'ftsUnavailable');
    expect(fts).toEqual(['ENGRAM_STORE_FTS_UNAVAILABLE']);
  });

  it('classifies a code the store does not have as `storeError`, whatever it names', () => {
    for (const code of [
      'PORT_FTS_UNAVAILABLE',
      'SQLITE_BUSY',
      'ENGRAM_STORE_TIMEOUT',
      'constructor',
      'toString',
    ]) {
      expect([code, classifyStoreError({ code })]).toEqual([code, 'storeError']);
    }
  });
});
