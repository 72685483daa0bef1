/**
 * Driver errors of PostgreSQL mapped to the store port's error type (`EngramStoreError` of `@engram/store`,
 * the same class and codes as the SQLite adapter). Messages are fixed per code and operation: the server's
 * message, the SQL and the parameters never reach them; the driver error is kept as `cause` only.
 */
import { EngramStoreError, isEngramStoreError } from '@engram/store';

function sqlState(err: unknown): string {
  if (typeof err !== 'object' || err === null) return '';
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' ? code : '';
}

/**
 * Maps a `pg` error by SQLSTATE class: 23 (integrity) → `ENGRAM_STORE_CONFLICT`; 40001/40P01 (serialization,
 * deadlock), 55P03 (lock not available), 53 (insufficient resources) → `ENGRAM_STORE_BUSY` (retryable); 08
 * (connection) and socket errors → `ENGRAM_STORE_IO`; 57P (shutdown) → `ENGRAM_STORE_IO`; XX (internal) →
 * `ENGRAM_STORE_CORRUPT`; a pool used after `end()` → `ENGRAM_STORE_CLOSED`; else `ENGRAM_STORE_UNKNOWN`.
 */
export function classifyPgError(err: unknown, operation = 'operation'): EngramStoreError {
  if (isEngramStoreError(err)) return err;
  const state = sqlState(err);
  const opts = { cause: err };
  if (state.startsWith('23')) {
    return new EngramStoreError(
      'ENGRAM_STORE_CONFLICT',
      `store ${operation} failed: a uniqueness or integrity constraint was violated`,
      opts,
    );
  }
  if (state === '40001' || state === '40P01' || state === '55P03' || state.startsWith('53')) {
    return new EngramStoreError('ENGRAM_STORE_BUSY', `store ${operation} failed: database is busy`, {
      ...opts,
      retryable: true,
    });
  }
  if (state.startsWith('08') || state.startsWith('57P') || /^E[A-Z]+$/.test(state)) {
    return new EngramStoreError('ENGRAM_STORE_IO', `store ${operation} failed: database I/O error`, opts);
  }
  if (state.startsWith('XX')) {
    return new EngramStoreError(
      'ENGRAM_STORE_CORRUPT',
      `store ${operation} failed: the database is corrupt`,
      opts,
    );
  }
  const message =
    typeof err === 'object' && err !== null ? (err as { message?: unknown }).message : undefined;
  if (typeof message === 'string' && /pool after calling end/i.test(message)) {
    return new EngramStoreError(
      'ENGRAM_STORE_CLOSED',
      `store ${operation} failed: the store is closed`,
      opts,
    );
  }
  if (typeof message === 'string' && /Connection terminated|ECONNREFUSED|ECONNRESET/i.test(message)) {
    return new EngramStoreError('ENGRAM_STORE_IO', `store ${operation} failed: database I/O error`, opts);
  }
  return new EngramStoreError('ENGRAM_STORE_UNKNOWN', `store ${operation} failed: unexpected error`, opts);
}
