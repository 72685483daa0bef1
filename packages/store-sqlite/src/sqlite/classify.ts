/**
 * SQLite's error codes mapped onto the store port's closed list: the adapter's one edge where a driver's
 * code (and, for a missing full-text table, its message) is read. Messages stay fixed per code and operation.
 */
import { EngramStoreError, isEngramStoreError } from '@engram/store';

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
