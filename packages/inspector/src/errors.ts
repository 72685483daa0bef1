import { EngramError, hasEngramErrorShape } from '@engram/contracts/errors';

/** Stable codes of {@link EngramInspectorError}. */
export const ENGRAM_INSPECTOR_ERROR_CODES: readonly [
  'ENGRAM_INSPECTOR_INVALID_CONFIG',
  'ENGRAM_INSPECTOR_ASSETS_MISSING',
  'ENGRAM_INSPECTOR_LISTEN_FAILED',
  'ENGRAM_INSPECTOR_NOT_FOUND',
] = [
  'ENGRAM_INSPECTOR_INVALID_CONFIG',
  'ENGRAM_INSPECTOR_ASSETS_MISSING',
  'ENGRAM_INSPECTOR_LISTEN_FAILED',
  'ENGRAM_INSPECTOR_NOT_FOUND',
] as const;

/** One stable error code of this package. */
export type EngramInspectorErrorCode = (typeof ENGRAM_INSPECTOR_ERROR_CODES)[number];

/**
 * The one error type of this package: an invalid configuration, built assets that cannot be found, a server
 * that cannot listen, or a memory file that does not exist. Messages name the option, never memory content.
 */
export class EngramInspectorError extends EngramError<EngramInspectorErrorCode> {
  constructor(code: EngramInspectorErrorCode, message: string, options?: { cause?: unknown }) {
    super('EngramInspectorError', code, message, options);
  }
}

/** Guard for {@link EngramInspectorError} that checks `code` and `name`, not `instanceof`. */
export function isEngramInspectorError(value: unknown): value is EngramInspectorError {
  return hasEngramErrorShape(value, ['EngramInspectorError'], ENGRAM_INSPECTOR_ERROR_CODES);
}
