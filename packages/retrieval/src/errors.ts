import { EngramError, hasEngramErrorShape } from '@engram/contracts/errors';

/** Stable codes of {@link EngramRetrievalError}. */
export const ENGRAM_RETRIEVAL_ERROR_CODES: readonly [
  'ENGRAM_RETRIEVAL_INVALID_INPUT',
  'ENGRAM_RETRIEVAL_INVALID_CONFIG',
] = ['ENGRAM_RETRIEVAL_INVALID_INPUT', 'ENGRAM_RETRIEVAL_INVALID_CONFIG'] as const;

/** One stable error code of this package. */
export type EngramRetrievalErrorCode = (typeof ENGRAM_RETRIEVAL_ERROR_CODES)[number];

/**
 * The one error type of this package, thrown for programmer errors only (an agent id the store's rule refuses,
 * a limit that is not a positive integer, an invalid configuration). Degradations and store failures never throw: they
 * are reported in the execution context. Messages name the offending parameter, never user content.
 */
export class EngramRetrievalError extends EngramError<EngramRetrievalErrorCode> {
  constructor(code: EngramRetrievalErrorCode, message: string, options?: { cause?: unknown }) {
    super('EngramRetrievalError', code, message, options);
  }
}

/** Guard for {@link EngramRetrievalError} that checks `code` and `name`, not `instanceof`. */
export function isEngramRetrievalError(value: unknown): value is EngramRetrievalError {
  return hasEngramErrorShape(value, ['EngramRetrievalError'], ENGRAM_RETRIEVAL_ERROR_CODES);
}
