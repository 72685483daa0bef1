import { EngramError, hasEngramErrorShape } from '@engram/contracts/errors';

/** Stable codes of {@link EngramDiagnosticsError}. */
export const ENGRAM_DIAGNOSTICS_ERROR_CODES: readonly [
  'ENGRAM_DIAGNOSTICS_INVALID_CONFIG',
  'ENGRAM_DIAGNOSTICS_INVALID_ARGUMENT',
] = ['ENGRAM_DIAGNOSTICS_INVALID_CONFIG', 'ENGRAM_DIAGNOSTICS_INVALID_ARGUMENT'] as const;

/** One stable error code of this package. */
export type EngramDiagnosticsErrorCode = (typeof ENGRAM_DIAGNOSTICS_ERROR_CODES)[number];

/**
 * The one error type of this package, thrown for programmer errors only (an invalid collector
 * configuration, a percentile outside 0..1). Recorders never throw. Messages name the offending
 * option, never a recorded value.
 */
export class EngramDiagnosticsError extends EngramError<EngramDiagnosticsErrorCode> {
  constructor(code: EngramDiagnosticsErrorCode, message: string, options?: { cause?: unknown }) {
    super('EngramDiagnosticsError', code, message, options);
  }
}

/** Guard for {@link EngramDiagnosticsError} that checks `code` and `name`, not `instanceof`. */
export function isEngramDiagnosticsError(value: unknown): value is EngramDiagnosticsError {
  return hasEngramErrorShape(value, ['EngramDiagnosticsError'], ENGRAM_DIAGNOSTICS_ERROR_CODES);
}
