import { EngramError, hasEngramErrorShape } from '@engram/contracts/errors';

/** Stable codes of {@link EngramEmbedderUseError}. */
export const ENGRAM_EMBEDDER_USE_ERROR_CODES: readonly [
  'ENGRAM_EMBEDDER_USE_ABORTED',
  'ENGRAM_EMBEDDER_USE_INVALID_INPUT',
  'ENGRAM_EMBEDDER_USE_INVALID_CONFIG',
  'ENGRAM_EMBEDDER_USE_MODEL_LOAD_FAILED',
  'ENGRAM_EMBEDDER_USE_RUNTIME_CONFLICT',
  'ENGRAM_EMBEDDER_USE_INFERENCE_FAILED',
  'ENGRAM_EMBEDDER_USE_WORKER_FAILED',
  'ENGRAM_EMBEDDER_USE_CLOSED',
] = [
  'ENGRAM_EMBEDDER_USE_ABORTED',
  'ENGRAM_EMBEDDER_USE_INVALID_INPUT',
  'ENGRAM_EMBEDDER_USE_INVALID_CONFIG',
  'ENGRAM_EMBEDDER_USE_MODEL_LOAD_FAILED',
  'ENGRAM_EMBEDDER_USE_RUNTIME_CONFLICT',
  'ENGRAM_EMBEDDER_USE_INFERENCE_FAILED',
  'ENGRAM_EMBEDDER_USE_WORKER_FAILED',
  'ENGRAM_EMBEDDER_USE_CLOSED',
] as const;

/** One stable error code of this package. */
export type EngramEmbedderUseErrorCode = (typeof ENGRAM_EMBEDDER_USE_ERROR_CODES)[number];

/**
 * The one error type of this package.
 *
 * An abort has `name === 'AbortError'` (like `fetch`), so generic abort checks recognise it; every other
 * error has `name === 'EngramEmbedderUseError'`. Messages never contain input text, token ids or vectors.
 * A model-load failure carries the file-system or runtime error as `cause` (it names files of the model
 * package, never user content); an inference failure carries no cause.
 */
export class EngramEmbedderUseError extends EngramError<EngramEmbedderUseErrorCode> {
  constructor(code: EngramEmbedderUseErrorCode, message: string, options?: { cause?: unknown }) {
    super(
      code === 'ENGRAM_EMBEDDER_USE_ABORTED' ? 'AbortError' : 'EngramEmbedderUseError',
      code,
      message,
      options,
    );
  }
}

/** Guard for {@link EngramEmbedderUseError} that checks `code` and `name`, not `instanceof`. */
export function isEngramEmbedderUseError(value: unknown): value is EngramEmbedderUseError {
  return hasEngramErrorShape(
    value,
    ['EngramEmbedderUseError', 'AbortError'],
    ENGRAM_EMBEDDER_USE_ERROR_CODES,
  );
}

/** The error of an aborted call, with the signal's reason as `cause`. */
export function abortError(signal: AbortSignal): EngramEmbedderUseError {
  return new EngramEmbedderUseError('ENGRAM_EMBEDDER_USE_ABORTED', 'Embedding was aborted.', {
    cause: signal.reason,
  });
}
