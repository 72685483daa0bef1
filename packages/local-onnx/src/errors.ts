import { EngramError, hasEngramErrorShape } from '@engram/contracts/errors';

/** Stable codes of {@link EngramLocalModelError}. */
export const ENGRAM_LOCAL_MODEL_ERROR_CODES: readonly [
  'ENGRAM_LOCAL_MODEL_ABORTED',
  'ENGRAM_LOCAL_MODEL_INVALID_CONFIG',
  'ENGRAM_LOCAL_MODEL_NOT_FOUND',
  'ENGRAM_LOCAL_MODEL_LOAD_FAILED',
  'ENGRAM_LOCAL_MODEL_INFERENCE_FAILED',
  'ENGRAM_LOCAL_MODEL_DIMENSIONS',
] = [
  'ENGRAM_LOCAL_MODEL_ABORTED',
  'ENGRAM_LOCAL_MODEL_INVALID_CONFIG',
  'ENGRAM_LOCAL_MODEL_NOT_FOUND',
  'ENGRAM_LOCAL_MODEL_LOAD_FAILED',
  'ENGRAM_LOCAL_MODEL_INFERENCE_FAILED',
  'ENGRAM_LOCAL_MODEL_DIMENSIONS',
] as const;

/** One stable error code of this package. */
export type EngramLocalModelErrorCode = (typeof ENGRAM_LOCAL_MODEL_ERROR_CODES)[number];

/**
 * The one error type of this package.
 *
 * An abort has `name === 'AbortError'` (like `fetch`); every other error has `name === 'EngramLocalModelError'`.
 * Messages name the model (a directory or a hub id: configuration, never user content) and the option to change;
 * they never contain a query, a document, token ids, scores or vectors. A load failure carries the runtime's
 * error as `cause` (it names model files); an inference failure carries none.
 */
export class EngramLocalModelError extends EngramError<EngramLocalModelErrorCode> {
  constructor(code: EngramLocalModelErrorCode, message: string, options?: { cause?: unknown }) {
    super(
      code === 'ENGRAM_LOCAL_MODEL_ABORTED' ? 'AbortError' : 'EngramLocalModelError',
      code,
      message,
      options,
    );
  }
}

/** Guard for {@link EngramLocalModelError} that checks `code` and `name`, not `instanceof`. */
export function isEngramLocalModelError(value: unknown): value is EngramLocalModelError {
  return hasEngramErrorShape(value, ['EngramLocalModelError', 'AbortError'], ENGRAM_LOCAL_MODEL_ERROR_CODES);
}

/** The error of an aborted call, with the signal's reason as `cause`. */
export function abortError(signal: AbortSignal, what: string): EngramLocalModelError {
  return new EngramLocalModelError('ENGRAM_LOCAL_MODEL_ABORTED', `The ${what} call was aborted.`, {
    cause: signal.reason,
  });
}

/** An `ENGRAM_LOCAL_MODEL_INVALID_CONFIG` naming the setting, never its value. */
export function invalidConfig(what: string, setting: string, rule: string): EngramLocalModelError {
  return new EngramLocalModelError(
    'ENGRAM_LOCAL_MODEL_INVALID_CONFIG',
    `Invalid ${what} configuration: ${setting} ${rule}.`,
  );
}

/** Throws the abort error when `signal` has aborted (read through a call, so no narrowing survives an await). */
export function throwIfAborted(signal: AbortSignal | undefined, what: string): void {
  if (signal?.aborted === true) throw abortError(signal, what);
}
