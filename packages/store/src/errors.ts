/**
 * The one error type of `@engram/store`. Messages are fixed per code and operation: they never carry memory
 * content, queries, vectors, SQL or the driver's message text. The driver error, when there is one, is kept
 * as `cause` only (it never leaves the process through diagnostics).
 */

/** Stable error codes of the store. */
export const ENGRAM_STORE_ERROR_CODES = [
  'ENGRAM_STORE_INVALID_INPUT',
  'ENGRAM_STORE_NOT_FOUND',
  'ENGRAM_STORE_REVISION_CONFLICT',
  'ENGRAM_STORE_CONFLICT',
  'ENGRAM_STORE_BUSY',
  'ENGRAM_STORE_FINGERPRINT_MISMATCH',
  'ENGRAM_STORE_VECTOR_INDEX_MISMATCH',
  'ENGRAM_STORE_SCHEMA_TOO_NEW',
  'ENGRAM_STORE_SCHEMA_TOO_OLD',
  'ENGRAM_STORE_NOT_ENGRAM',
  'ENGRAM_STORE_READ_ONLY',
  'ENGRAM_STORE_VECTOR_DIMENSIONS',
  'ENGRAM_STORE_VECTOR_INVALID',
  'ENGRAM_STORE_VECTOR_UNAVAILABLE',
  'ENGRAM_STORE_NATIVE_UNAVAILABLE',
  'ENGRAM_STORE_CLOSED',
  'ENGRAM_STORE_IO',
  'ENGRAM_STORE_CORRUPT',
  'ENGRAM_STORE_FTS_UNAVAILABLE',
  'ENGRAM_STORE_ENCRYPTION_KEY',
  'ENGRAM_STORE_UNKNOWN',
] as const;

/** A stable store error code. */
export type EngramStoreErrorCode = (typeof ENGRAM_STORE_ERROR_CODES)[number];

const CODE_SET: ReadonlySet<string> = new Set<string>(ENGRAM_STORE_ERROR_CODES);

/** Options of an `EngramStoreError`. */
export interface EngramStoreErrorOptions {
  /** The underlying error (driver error, parse error …); never rendered into the message. */
  readonly cause?: unknown;
  /** True when the same call may succeed if retried later (busy/locked database). Defaults by code. */
  readonly retryable?: boolean;
}

/** The base error of `@engram/store`, with a stable `code`, a `cause` and a `retryable` hint. */
export class EngramStoreError extends Error {
  /** Stable machine-readable code. */
  readonly code: EngramStoreErrorCode;
  /** True when retrying the same call later may succeed. */
  readonly retryable: boolean;

  constructor(code: EngramStoreErrorCode, message: string, options: EngramStoreErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'EngramStoreError';
    this.code = code;
    this.retryable = options.retryable ?? code === 'ENGRAM_STORE_BUSY';
  }
}

/** True when `value` is an `EngramStoreError` (checked by `name` and `code`, so it works across copies). */
export function isEngramStoreError(value: unknown): value is EngramStoreError {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as { name?: unknown; code?: unknown };
  return v.name === 'EngramStoreError' && typeof v.code === 'string' && CODE_SET.has(v.code);
}

/** The store error code of a value, or undefined when it is not a store error. */
export function storeErrorCode(value: unknown): EngramStoreErrorCode | undefined {
  return isEngramStoreError(value) ? value.code : undefined;
}

function driverCode(err: unknown): string | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' ? code : undefined;
}

/** The names of the full-text index's own tables: a missing one means the index, not the data, is gone. */
const FULL_TEXT_FAILURE = /no such module: fts5|no such table: (?:main\.)?(?:memories_fts_\w+|lexical_\w+)/;

/**
 * Whether a driver error says the full-text index is unusable: SQLite's extended code for a corrupt virtual
 * table, or a missing FTS5 module or index table (read from the driver's message at this edge only).
 */
function isFullTextFailure(code: string, err: unknown): boolean {
  if (code === 'SQLITE_CORRUPT_VTAB') return true;
  const message =
    typeof err === 'object' && err !== null ? (err as { message?: unknown }).message : undefined;
  return typeof message === 'string' && FULL_TEXT_FAILURE.test(message);
}

/** How to recover a damaged file: the words every corruption error ends with. */
export const RECOVERY_HINT =
  'recover it with the sqlite3 shell (sqlite3 damaged.db ".recover" | sqlite3 recovered.db) or restore a backup';

/**
 * Why a file could not be opened or written, by SQLite's (extended) code: a read-only file or directory, a WAL
 * file whose `-wal`/`-shm` companions are missing and cannot be created, or a file that cannot be opened.
 */
function cannotWrite(code: string): string {
  if (
    code === 'SQLITE_READONLY_CANTINIT' ||
    code === 'SQLITE_READONLY_DIRECTORY' ||
    code === 'SQLITE_CANTOPEN'
  ) {
    return 'the database file cannot be opened: it is in WAL mode and its -wal and -shm files are missing and cannot be created here (a read-only directory?), or the file or its directory is not accessible; open it once where it can be written, or make the directory writable';
  }
  return 'the database file or its directory is read-only (or not accessible to this user)';
}

/**
 * Maps a driver (SQLite) error to an `EngramStoreError`: busy/locked → `ENGRAM_STORE_BUSY` (retryable),
 * constraint → `ENGRAM_STORE_CONFLICT`, corrupt/not-a-database → `ENGRAM_STORE_CORRUPT` (the message says how
 * to recover), I/O, full disk, cannot-open, read-only → `ENGRAM_STORE_IO` (the message says which: a full disk,
 * a read-only file or directory, WAL companions that cannot be created), a damaged or missing full-text index (a corrupt virtual table, a
 * missing FTS5 module or index table) → `ENGRAM_STORE_FTS_UNAVAILABLE`, anything else → `ENGRAM_STORE_UNKNOWN`. A store error passes
 * through unchanged. `operation` names the store method (a fixed identifier, never user text).
 */
export function classifySqliteError(err: unknown, operation = 'operation'): EngramStoreError {
  if (isEngramStoreError(err)) return err;
  const code = driverCode(err) ?? '';
  const primary = code.startsWith('SQLITE_') ? `SQLITE_${code.split('_')[1] ?? ''}` : '';
  const opts = { cause: err };
  if (isFullTextFailure(code, err)) {
    return new EngramStoreError(
      'ENGRAM_STORE_FTS_UNAVAILABLE',
      `store ${operation} failed: the full-text index is unavailable (run the integrity repair or re-index)`,
      opts,
    );
  }
  switch (primary) {
    case 'SQLITE_BUSY':
    case 'SQLITE_LOCKED':
      return new EngramStoreError('ENGRAM_STORE_BUSY', `store ${operation} failed: database is busy`, {
        ...opts,
        retryable: true,
      });
    case 'SQLITE_CONSTRAINT':
      return new EngramStoreError(
        'ENGRAM_STORE_CONFLICT',
        `store ${operation} failed: a uniqueness or integrity constraint was violated`,
        opts,
      );
    case 'SQLITE_CORRUPT':
      return new EngramStoreError(
        'ENGRAM_STORE_CORRUPT',
        `store ${operation} failed: the database file is corrupt; ${RECOVERY_HINT}`,
        opts,
      );
    case 'SQLITE_NOTADB':
    case 'SQLITE_FORMAT':
      return new EngramStoreError(
        'ENGRAM_STORE_CORRUPT',
        `store ${operation} failed: the database file is corrupt, not a database, or encrypted (open it with its key)`,
        opts,
      );
    case 'SQLITE_FULL':
      return new EngramStoreError(
        'ENGRAM_STORE_IO',
        `store ${operation} failed: the disk is full (or the database reached its size limit); free space and retry`,
        opts,
      );
    case 'SQLITE_READONLY':
    case 'SQLITE_CANTOPEN':
    case 'SQLITE_PERM':
      return new EngramStoreError('ENGRAM_STORE_IO', `store ${operation} failed: ${cannotWrite(code)}`, opts);
    case 'SQLITE_IOERR':
    case 'SQLITE_NOLFS':
    case 'SQLITE_AUTH':
      return new EngramStoreError('ENGRAM_STORE_IO', `store ${operation} failed: database I/O error`, opts);
    default:
      break;
  }
  if (typeof err === 'object' && err !== null && (err as { name?: unknown }).name === 'TypeError') {
    const message = (err as { message?: unknown }).message;
    if (typeof message === 'string' && message.includes('database connection is not open')) {
      return new EngramStoreError(
        'ENGRAM_STORE_CLOSED',
        `store ${operation} failed: the store is closed`,
        opts,
      );
    }
  }
  return new EngramStoreError('ENGRAM_STORE_UNKNOWN', `store ${operation} failed: unexpected error`, opts);
}

/** Shorthand for an `ENGRAM_STORE_INVALID_INPUT` error; `what` names the field, never its value. */
export function invalidInput(what: string, cause?: unknown): EngramStoreError {
  return new EngramStoreError(
    'ENGRAM_STORE_INVALID_INPUT',
    `invalid input: ${what}`,
    cause === undefined ? {} : { cause },
  );
}
