import { EngramError, hasEngramErrorShape } from '@engram/contracts/errors';

/** Stable codes of {@link EngramHealthUiError}. */
export const ENGRAM_HEALTH_UI_ERROR_CODES: readonly [
  'ENGRAM_HEALTH_UI_INVALID_CONFIG',
  'ENGRAM_HEALTH_UI_ASSETS_MISSING',
  'ENGRAM_HEALTH_UI_LISTEN_FAILED',
] = [
  'ENGRAM_HEALTH_UI_INVALID_CONFIG',
  'ENGRAM_HEALTH_UI_ASSETS_MISSING',
  'ENGRAM_HEALTH_UI_LISTEN_FAILED',
] as const;

/** One stable error code of this package. */
export type EngramHealthUiErrorCode = (typeof ENGRAM_HEALTH_UI_ERROR_CODES)[number];

/**
 * The one error type of this package: an invalid handler configuration, built assets that cannot be
 * found, or a server that cannot listen. Messages name the option or the file, never health data.
 */
export class EngramHealthUiError extends EngramError<EngramHealthUiErrorCode> {
  constructor(code: EngramHealthUiErrorCode, message: string, options?: { cause?: unknown }) {
    super('EngramHealthUiError', code, message, options);
  }
}

/** Guard for {@link EngramHealthUiError} that checks `code` and `name`, not `instanceof`. */
export function isEngramHealthUiError(value: unknown): value is EngramHealthUiError {
  return hasEngramErrorShape(value, ['EngramHealthUiError'], ENGRAM_HEALTH_UI_ERROR_CODES);
}
