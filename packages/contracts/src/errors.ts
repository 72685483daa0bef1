/**
 * The one error hierarchy of Engram. Every package's error class (`EngramStoreError`, `EngramRetrievalError`,
 * `EngramMemoryError` …) extends {@link EngramError}: a stable `code` from that package's closed list, a
 * `retryable` hint and the underlying error as `cause`. Messages are fixed per situation and never carry user
 * content (memory text, queries, SQL, stack traces, connection strings, secrets); `cause` never leaves the
 * process through diagnostics.
 *
 * Guards check `name` and `code`, never `instanceof`, so they hold across two copies of a package.
 */

/** The pattern every Engram error code follows (`ENGRAM_<PACKAGE>_<SITUATION>`). */
export const ENGRAM_ERROR_CODE_PATTERN: RegExp = /^ENGRAM_[A-Z0-9_]+$/;

/** Options every Engram error accepts. */
export interface EngramErrorOptions {
  /** The underlying error; kept as `cause`, never rendered into the message. */
  readonly cause?: unknown;
  /** True when the same call may succeed if retried later; each package defaults it by code (else false). */
  readonly retryable?: boolean;
}

/**
 * The base of every Engram error. A package subclasses it with its own name and closed list of codes; the
 * constructor sets `name`, `code`, `retryable` (default false) and `cause` (only when given).
 */
export class EngramError<Code extends string = string> extends Error {
  /** Stable machine-readable code, one of the throwing package's closed list. */
  readonly code: Code;
  /** True when retrying the same call later may succeed. */
  readonly retryable: boolean;

  constructor(name: string, code: Code, message: string, options: EngramErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = name;
    this.code = code;
    this.retryable = options.retryable ?? false;
  }
}

/**
 * The shared guard behind each package's `isEngram…Error`: true when `value` is an object whose `name` is one
 * of `names` and whose `code` is one of `codes`. Checked by shape, not `instanceof`, so it works across copies.
 */
export function hasEngramErrorShape(
  value: unknown,
  names: readonly string[],
  codes: readonly string[] | ReadonlySet<string>,
): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const { code, name } = value as { code?: unknown; name?: unknown };
  if (typeof name !== 'string' || !names.includes(name) || typeof code !== 'string') return false;
  return codes instanceof Set ? codes.has(code) : (codes as readonly string[]).includes(code);
}

/** True when `value` is an error of any Engram package (an `ENGRAM_*` code and a string name). */
export function isEngramError(value: unknown): value is EngramError {
  if (typeof value !== 'object' || value === null) return false;
  const { name } = value as { name?: unknown };
  return typeof name === 'string' && engramErrorCode(value) !== undefined;
}

/**
 * The `code` of any Engram error (`ENGRAM_*`, from any package), or undefined — for a non-Engram error, a
 * non-object, or a code outside the pattern. Never reads the message.
 */
export function engramErrorCode(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const code = (value as { code?: unknown }).code;
  return typeof code === 'string' && ENGRAM_ERROR_CODE_PATTERN.test(code) ? code : undefined;
}
