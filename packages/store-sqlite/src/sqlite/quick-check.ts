/**
 * The file's integrity check: `PRAGMA quick_check` (the b-tree structure, page by page; O(file size), no
 * lock beyond a read). Its outcome is recorded on the context: health reports it, and a failed check makes every
 * later write refuse with `ENGRAM_STORE_CORRUPT` naming the way to recover.
 *
 * The bound: a write open checks a file of at most `QUICK_CHECK_MAX_BYTES` by itself (a larger one stays
 * `notChecked` until `checkIntegrity()` is called); a read open never checks by itself; `checkIntegrity()`
 * always runs the check, whatever the size.
 */
import { statSync } from 'node:fs';
import { classifySqliteError } from './classify.js';
import type { IntegrityResult, StoreContext } from './context.js';

/** A write open checks files up to this size (256 MiB) by itself. */
export const QUICK_CHECK_MAX_BYTES: number = 256 * 1024 * 1024;

/** Runs `PRAGMA quick_check` and records its outcome (a corruption error while checking counts as failed). */
export function quickCheck(ctx: StoreContext): IntegrityResult {
  let ok: boolean;
  try {
    const rows = ctx.db.prepare('PRAGMA quick_check(1)').all() as { quick_check?: unknown }[];
    ok = rows.length === 1 && rows[0]?.quick_check === 'ok';
  } catch (err) {
    if (classifySqliteError(err, 'checkIntegrity').code !== 'ENGRAM_STORE_CORRUPT') throw err;
    ok = false;
  }
  ctx.count('meta');
  ctx.integrity = { state: ok ? 'ok' : 'failed', checkedAt: ctx.now() };
  return ctx.integrity;
}

/** True when a write open of `path` checks it by itself (a file within the size bound). */
export function checksAtOpen(path: string): boolean {
  try {
    return statSync(path).size <= QUICK_CHECK_MAX_BYTES;
  } catch {
    return false;
  }
}
