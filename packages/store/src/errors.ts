/**
 * The one error type of `@engram/store`. Messages are fixed per code and operation: they never carry memory
 * content, queries, vectors, SQL or the driver's message text. The driver error, when there is one, is kept
 * as `cause` only (it never leaves the process through diagnostics).
 */

import { EngramError, hasEngramErrorShape } from '@engram/contracts/errors';

/** Stable error codes of the store. */
export const ENGRAM_STORE_ERROR_CODES = [
  'ENGRAM_STORE_INVALID_INPUT',
  'ENGRAM_STORE_NOT_FOUND',
  'ENGRAM_STORE_REVISION_CONFLICT',
  'ENGRAM_STORE_CONFLICT',
  'ENGRAM_STORE_BUSY',
  'ENGRAM_STORE_FINGERPRINT_MISMATCH',
  'ENGRAM_STORE_VECTOR_INDEX_MISMATCH',
  'ENGRAM_STORE_SCHEMA_TOO_NEW',
  'ENGRAM_STORE_SCHEMA_TOO_OLD',
  'ENGRAM_STORE_NOT_ENGRAM',
  'ENGRAM_STORE_READ_ONLY',
  'ENGRAM_STORE_VECTOR_DIMENSIONS',
  'ENGRAM_STORE_VECTOR_INVALID',
  'ENGRAM_STORE_VECTOR_UNAVAILABLE',
  'ENGRAM_STORE_NATIVE_UNAVAILABLE',
  'ENGRAM_STORE_CLOSED',
  'ENGRAM_STORE_IO',
  'ENGRAM_STORE_CORRUPT',
  'ENGRAM_STORE_FTS_UNAVAILABLE',
  'ENGRAM_STORE_ENCRYPTION_KEY',
  'ENGRAM_STORE_UNKNOWN',
] as const;

/** A stable store error code. */
export type EngramStoreErrorCode = (typeof ENGRAM_STORE_ERROR_CODES)[number];

const CODE_SET: ReadonlySet<string> = new Set<string>(ENGRAM_STORE_ERROR_CODES);

/** Options of an `EngramStoreError`. */
export interface EngramStoreErrorOptions {
  /** The underlying error (driver error, parse error …); never rendered into the message. */
  readonly cause?: unknown;
  /** True when the same call may succeed if retried later (busy/locked database). Defaults by code. */
  readonly retryable?: boolean;
}

/** The error of `@engram/store`: an `EngramError` with a stable `code`, a `cause` and a `retryable` hint. */
export class EngramStoreError extends EngramError<EngramStoreErrorCode> {
  constructor(code: EngramStoreErrorCode, message: string, options: EngramStoreErrorOptions = {}) {
    super('EngramStoreError', code, message, {
      cause: options.cause,
      retryable: options.retryable ?? code === 'ENGRAM_STORE_BUSY',
    });
  }
}

/** True when `value` is an `EngramStoreError` (checked by `name` and `code`, so it works across copies). */
export function isEngramStoreError(value: unknown): value is EngramStoreError {
  return hasEngramErrorShape(value, ['EngramStoreError'], CODE_SET);
}

/** The store error code of a value, or undefined when it is not a store error. */
export function storeErrorCode(value: unknown): EngramStoreErrorCode | undefined {
  return isEngramStoreError(value) ? value.code : undefined;
}

/** Shorthand for an `ENGRAM_STORE_INVALID_INPUT` error; `what` names the field, never its value. */
export function invalidInput(what: string, cause?: unknown): EngramStoreError {
  return new EngramStoreError(
    'ENGRAM_STORE_INVALID_INPUT',
    `invalid input: ${what}`,
    cause === undefined ? {} : { cause },
  );
}
