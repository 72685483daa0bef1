/** Stable codes of {@link EngramDemoError}. */
export const ENGRAM_DEMO_ERROR_CODES = [
  'ENGRAM_DEMO_INVALID_ARGUMENTS',
  'ENGRAM_DEMO_FILE_UNREADABLE',
  'ENGRAM_DEMO_INVALID_EVENTS',
  'ENGRAM_DEMO_STORE_FAILED',
  'ENGRAM_DEMO_NOT_FOUND',
  'ENGRAM_DEMO_TOOL_FAILED',
  'ENGRAM_DEMO_SERVE_FAILED',
  'ENGRAM_DEMO_EMBEDDER_UNAVAILABLE',
  'ENGRAM_DEMO_EMBEDDER_MISMATCH',
  'ENGRAM_DEMO_LINE_TOO_LONG',
  'ENGRAM_DEMO_AGENT_MISMATCH',
] as const;

/** One stable error code of the demo app. */
export type EngramDemoErrorCode = (typeof ENGRAM_DEMO_ERROR_CODES)[number];

/**
 * The one error type of the demo app and CLI. Messages are fixed per situation: they name files, flags,
 * line numbers and error codes, never memory content, queries or provider text.
 */
export class EngramDemoError extends Error {
  /** Stable machine-readable code. */
  readonly code: EngramDemoErrorCode;

  constructor(code: EngramDemoErrorCode, message: string, options?: { readonly cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.name = 'EngramDemoError';
  }
}

/** Guard for {@link EngramDemoError} that checks `code` and `name`, not `instanceof`. */
export function isEngramDemoError(value: unknown): value is EngramDemoError {
  if (typeof value !== 'object' || value === null) return false;
  const { code, name } = value as { code?: unknown; name?: unknown };
  return (
    name === 'EngramDemoError' &&
    typeof code === 'string' &&
    (ENGRAM_DEMO_ERROR_CODES as readonly string[]).includes(code)
  );
}

/** The `code` of any Engram error (`ENGRAM_*`), or undefined. */
export function engramErrorCode(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const code = (value as { code?: unknown }).code;
  return typeof code === 'string' && /^ENGRAM_[A-Z0-9_]+$/.test(code) ? code : undefined;
}
