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
export class EngramEmbedderError extends Error {
  /** Stable machine-readable code. */
  readonly code: EngramEmbedderErrorCode;

  constructor(code: EngramEmbedderErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.name = code === 'ENGRAM_EMBEDDER_ABORTED' ? 'AbortError' : 'EngramEmbedderError';
  }
}

/** Guard for {@link EngramEmbedderError} that checks `code` and `name`, not `instanceof`. */
export function isEngramEmbedderError(value: unknown): value is EngramEmbedderError {
  if (typeof value !== 'object' || value === null) return false;
  const { code, name } = value as { code?: unknown; name?: unknown };
  return (
    typeof code === 'string' &&
    (ENGRAM_EMBEDDER_ERROR_CODES as readonly string[]).includes(code) &&
    (name === 'EngramEmbedderError' || name === 'AbortError')
  );
}
