import { EngramError, engramErrorCode, hasEngramErrorShape } from '@engram/contracts/errors';

/** Stable codes of {@link EngramCliError}. */
export const ENGRAM_CLI_ERROR_CODES = [
  'ENGRAM_CLI_INVALID_ARGUMENTS',
  'ENGRAM_CLI_FILE_UNREADABLE',
  'ENGRAM_CLI_INVALID_EVENTS',
  'ENGRAM_CLI_STORE_FAILED',
  'ENGRAM_CLI_NOT_FOUND',
  'ENGRAM_CLI_TOOL_FAILED',
  'ENGRAM_CLI_SERVE_FAILED',
  'ENGRAM_CLI_EMBEDDER_UNAVAILABLE',
  'ENGRAM_CLI_EMBEDDER_MISMATCH',
  'ENGRAM_CLI_LINE_TOO_LONG',
  'ENGRAM_CLI_AGENT_MISMATCH',
] as const;

/** One stable error code of the CLI. */
export type EngramCliErrorCode = (typeof ENGRAM_CLI_ERROR_CODES)[number];

const CODES: ReadonlySet<string> = new Set<string>(ENGRAM_CLI_ERROR_CODES);

/**
 * The one error type of the CLI (its commands, MCP server and demo). Messages are fixed per situation: they name files, flags,
 * line numbers and error codes, never memory content, queries or provider text.
 */
export class EngramCliError extends EngramError<EngramCliErrorCode> {
  constructor(code: EngramCliErrorCode, message: string, options?: { readonly cause?: unknown }) {
    super('EngramCliError', code, message, options);
  }
}

/** Guard for {@link EngramCliError} that checks `code` and `name`, not `instanceof`. */
export function isEngramCliError(value: unknown): value is EngramCliError {
  return hasEngramErrorShape(value, ['EngramCliError'], CODES);
}

/**
 * The CLI's code of what the composition root (`@engram/memory/compose`) reports in the CLI's name: a database
 * that cannot be opened, its embedder, the `ENGRAM_EMBEDDER` setting. Any other code as is.
 */
const CLI_CODES: Readonly<Record<string, EngramCliErrorCode>> = {
  ENGRAM_MEMORY_INVALID_CONFIG: 'ENGRAM_CLI_INVALID_ARGUMENTS',
  ENGRAM_MEMORY_STORE_FAILED: 'ENGRAM_CLI_STORE_FAILED',
  ENGRAM_MEMORY_EMBEDDER_UNAVAILABLE: 'ENGRAM_CLI_EMBEDDER_UNAVAILABLE',
  ENGRAM_MEMORY_EMBEDDER_MISMATCH: 'ENGRAM_CLI_EMBEDDER_MISMATCH',
};

/** The `code` of any Engram error (`ENGRAM_*`) as the CLI reports it, or undefined. */
export function cliErrorCode(value: unknown): string | undefined {
  const code = engramErrorCode(value);
  return code === undefined ? undefined : (CLI_CODES[code] ?? code);
}
