/**
 * Key rotation of an encrypted store (`sqlite3_rekey`).
 */
import { EngramStoreError, invalidInput } from '@engram/store/port-kit';
import { isValidKey, keyBytes } from './config.js';
import type { StoreContext } from './context.js';

/**
 * Re-encrypts the whole database with `newKey`. Only for a store opened with `encryption`; the file must not be
 * open elsewhere (the journal leaves WAL mode for the rewrite and returns to it; another connection makes that
 * `ENGRAM_STORE_BUSY`). Later opens need the new key.
 */
export function rekey(ctx: StoreContext, newKey: string | Uint8Array): Promise<void> {
  return ctx.op('rekey', () => {
    if (!ctx.encrypted) throw invalidInput('rekey needs a store opened with encryption');
    if (!isValidKey(newKey)) throw invalidInput('the new key must be a non-empty string or bytes');
    const db = ctx.db;
    if (typeof db.rekey !== 'function') {
      throw invalidInput('the SQLite driver does not support rekey');
    }
    const mode = (db.prepare('PRAGMA journal_mode = DELETE').get() as { journal_mode?: string } | undefined)
      ?.journal_mode;
    ctx.count('meta');
    if (mode !== 'delete') {
      throw new EngramStoreError(
        'ENGRAM_STORE_BUSY',
        'store rekey failed: the database is open in another connection',
        { retryable: true },
      );
    }
    const key = keyBytes(newKey);
    try {
      db.rekey(key);
    } finally {
      key.fill(0);
      db.exec('PRAGMA journal_mode = WAL');
      ctx.count('meta');
    }
  });
}
