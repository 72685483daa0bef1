/**
 * The one error type of `@engram/memory`. Messages are fixed per situation: they name options, ids' absence,
 * embedder profiles and error codes, never memory content, queries, vectors or SQL. An error from a package
 * underneath (store, retrieval, maintenance) that the facade does not translate passes through unchanged with
 * its own typed code; {@link engramErrorCode} reads the code of any of them.
 */
import { EngramError, hasEngramErrorShape } from '@engram/contracts/errors';

/** Stable codes of {@link EngramMemoryError}. */
export const ENGRAM_MEMORY_ERROR_CODES = [
  'ENGRAM_MEMORY_INVALID_INPUT',
  'ENGRAM_MEMORY_INVALID_CONFIG',
  'ENGRAM_MEMORY_NOT_FOUND',
  'ENGRAM_MEMORY_CONFLICT',
  'ENGRAM_MEMORY_CLOSED',
  'ENGRAM_MEMORY_EMBEDDER_MISMATCH',
  'ENGRAM_MEMORY_EMBEDDER_UNAVAILABLE',
  'ENGRAM_MEMORY_VECTOR_INDEX_MISMATCH',
  'ENGRAM_MEMORY_SEARCH_FAILED',
  'ENGRAM_MEMORY_STORE_FAILED',
] as const;

/** One stable error code of the facade. */
export type EngramMemoryErrorCode = (typeof ENGRAM_MEMORY_ERROR_CODES)[number];

const CODES: ReadonlySet<string> = new Set<string>(ENGRAM_MEMORY_ERROR_CODES);

/** The base error of `@engram/memory`, with a stable `code` and the underlying error as `cause`. */
export class EngramMemoryError extends EngramError<EngramMemoryErrorCode> {
  constructor(code: EngramMemoryErrorCode, message: string, options?: { readonly cause?: unknown }) {
    super('EngramMemoryError', code, message, options);
  }
}

/** Guard for {@link EngramMemoryError} that checks `name` and `code`, not `instanceof` (works across copies). */
export function isEngramMemoryError(value: unknown): value is EngramMemoryError {
  return hasEngramErrorShape(value, ['EngramMemoryError'], CODES);
}

/** The `code` of any Engram error (`ENGRAM_*`, from this package or one underneath), or undefined. */
export { engramErrorCode } from '@engram/contracts/errors';

/** A caller's mistake: nothing was read or written. */
export function invalidInput(message: string, cause?: unknown): EngramMemoryError {
  return new EngramMemoryError(
    'ENGRAM_MEMORY_INVALID_INPUT',
    message,
    cause === undefined ? undefined : { cause },
  );
}
