import type { DegradationCause } from '@engram/contracts/enums';
import { engramErrorCode } from '@engram/contracts/errors';
import type { EngramStoreErrorCode } from '@engram/store';

/** The causes a store rejection can give a failed or degraded call. */
export type StoreFailureCause = Extract<
  DegradationCause,
  'storeUnusable' | 'storeTimeout' | 'storeError' | 'ftsUnavailable' | 'vectorCold' | 'unknown'
>;

/**
 * Every store error code and what it means for a retrieval call, exhaustive by type: a code the store adds
 * fails the typecheck until it is classified here. Busy → `storeTimeout`; closed, corrupt, a schema, key,
 * fingerprint or vector index setting the process cannot use, missing native code → `storeUnusable`; an unavailable vector index →
 * `vectorCold`; an unavailable full-text index → `ftsUnavailable`. The retriever checks its input with the store's own rules before any read, so a store
 * `INVALID_INPUT` is a disagreement the retriever did not expect (`unknown`), never the store's fault.
 */
const CAUSE_BY_STORE_CODE: Readonly<Record<EngramStoreErrorCode, StoreFailureCause>> = Object.freeze({
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
  // The lexical arm degrades: the call answers from the vector arm alone.
  ENGRAM_STORE_FTS_UNAVAILABLE: 'ftsUnavailable',
  ENGRAM_STORE_ENCRYPTION_KEY: 'storeUnusable',
  ENGRAM_STORE_UNKNOWN: 'storeError',
});

function isClassifiedCode(code: string | undefined): code is EngramStoreErrorCode {
  return code !== undefined && Object.hasOwn(CAUSE_BY_STORE_CODE, code);
}

/**
 * Classifies a store rejection by its stable code (never by its message) through the exhaustive table above;
 * anything that is not a store error code → `storeError`.
 */
export function classifyStoreError(error: unknown): StoreFailureCause {
  const code = engramErrorCode(error);
  return isClassifiedCode(code) ? CAUSE_BY_STORE_CODE[code] : 'storeError';
}
