import { EngramError, hasEngramErrorShape } from '@engram/contracts/errors';

/** Stable codes of {@link EngramEmbedderError}. */
export const ENGRAM_EMBEDDER_ERROR_CODES: readonly [
  'ENGRAM_EMBEDDER_ABORTED',
  'ENGRAM_EMBEDDER_INVALID_INPUT',
] = ['ENGRAM_EMBEDDER_ABORTED', 'ENGRAM_EMBEDDER_INVALID_INPUT'] as const;

/** One stable error code of this package. */
export type EngramEmbedderErrorCode = (typeof ENGRAM_EMBEDDER_ERROR_CODES)[number];

/**
 * The one error type of this package.
 *
 * An abort has `name === 'AbortError'` (like `fetch`), so generic abort checks recognise it;
 * every other error has `name === 'EngramEmbedderError'`. Messages never contain input text.
 */
export class EngramEmbedderError extends EngramError<EngramEmbedderErrorCode> {
  constructor(code: EngramEmbedderErrorCode, message: string, options?: { cause?: unknown }) {
    super(code === 'ENGRAM_EMBEDDER_ABORTED' ? 'AbortError' : 'EngramEmbedderError', code, message, options);
  }
}

/** Guard for {@link EngramEmbedderError} that checks `code` and `name`, not `instanceof`. */
export function isEngramEmbedderError(value: unknown): value is EngramEmbedderError {
  return hasEngramErrorShape(value, ['EngramEmbedderError', 'AbortError'], ENGRAM_EMBEDDER_ERROR_CODES);
}
