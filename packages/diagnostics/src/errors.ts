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
export class EngramDiagnosticsError extends Error {
  /** Stable machine-readable code. */
  readonly code: EngramDiagnosticsErrorCode;

  constructor(code: EngramDiagnosticsErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.name = 'EngramDiagnosticsError';
  }
}

/** Guard for {@link EngramDiagnosticsError} that checks `code` and `name`, not `instanceof`. */
export function isEngramDiagnosticsError(value: unknown): value is EngramDiagnosticsError {
  if (typeof value !== 'object' || value === null) return false;
  const { code, name } = value as { code?: unknown; name?: unknown };
  return (
    name === 'EngramDiagnosticsError' &&
    typeof code === 'string' &&
    (ENGRAM_DIAGNOSTICS_ERROR_CODES as readonly string[]).includes(code)
  );
}
