/**
 * The file's integrity check: `PRAGMA quick_check` (the b-tree structure, page by page; O(file size), no
 * lock beyond a read), then the scans for rows no reader can use and damaged vector chunks. Its outcome is
 * recorded on the context: health reports it, and a failed structural check makes every later write refuse with
 * `ENGRAM_STORE_CORRUPT` naming the way to recover (a failure only on `badRows` or `damagedVectorChunks` leaves
 * writes allowed).
 *
 * The bound: a write open checks a file of at most `QUICK_CHECK_MAX_BYTES` by itself (a larger one stays
 * `notChecked` until `checkIntegrity()` is called); a read open never checks by itself; `checkIntegrity()`
 * always runs the check, whatever the size.
 */
import { statSync } from 'node:fs';
import { EMBEDDING_STATES, EVENT_TYPES, LIFECYCLES, MEMORY_KINDS } from '@engram/contracts/enums';
import { MAX_TIMESTAMP_MS } from '@engram/contracts/rules';
import { CONFLICT_STATES, HISTORY_ACTION_LIST, integrityResult, MAX_COUNTER } from '@engram/store/port-kit';
import { classifySqliteError } from './classify.js';
import type { IntegrityResult, StoreContext } from './context.js';
import { countDamagedVectorChunks } from './vector-chunks.js';

/** A write open checks files up to this size (256 MiB) by itself. */
export const QUICK_CHECK_MAX_BYTES: number = 256 * 1024 * 1024;

/** Runs `PRAGMA quick_check` and records its outcome (a corruption error while checking counts as failed). */
export function quickCheck(ctx: StoreContext): IntegrityResult {
  let ok: boolean;
  // The structure only: a writable connection's quick_check also verifies CHECK constraints, and a row that
  // breaks one is a row no reader can use (counted by `badRows`, on read and write opens alike), not damage
  // that makes writing unsafe: forgetting it must stay possible.
  const ignoring =
    (ctx.db.prepare('PRAGMA ignore_check_constraints').get() as { ignore_check_constraints?: unknown })
      ?.ignore_check_constraints === 1;
  if (!ignoring) ctx.db.exec('PRAGMA ignore_check_constraints = ON');
  try {
    const rows = ctx.db.prepare('PRAGMA quick_check(1)').all() as { quick_check?: unknown }[];
    ok = rows.length === 1 && rows[0]?.quick_check === 'ok';
  } catch (err) {
    if (classifySqliteError(err, 'checkIntegrity').code !== 'ENGRAM_STORE_CORRUPT') throw err;
    ok = false;
  } finally {
    if (!ignoring) ctx.db.exec('PRAGMA ignore_check_constraints = OFF');
  }
  ctx.count('meta');
  const bad = ok ? badRows(ctx) : 0;
  const chunks = ok ? countDamagedVectorChunks(ctx.db) : 0;
  ctx.integrity = integrityResult(ok, bad, ctx.now(), chunks);
  return ctx.integrity;
}

const MAX_MS = MAX_TIMESTAMP_MS;
/** A column that must hold a timestamp a `Date` can represent (`nullable`: or NULL). */
const badTime = (column: string, nullable: boolean): string =>
  `${nullable ? `(${column} IS NOT NULL AND ` : '('}(typeof(${column}) <> 'integer' OR ${column} NOT BETWEEN -${MAX_MS} AND ${MAX_MS}))`;
/** A column that must hold JSON text of one type (CASE: `json_type` of malformed JSON would raise). */
const badJson = (column: string, type: 'object' | 'array'): string =>
  `(CASE WHEN typeof(${column}) = 'text' AND json_valid(${column}) THEN json_type(${column}) <> '${type}' ELSE 1 END)`;

/** A column that must hold a counter the store can add to: an integer from `min` to `MAX_COUNTER`. */
const badCounter = (column: string, min: number): string =>
  `(typeof(${column}) <> 'integer' OR ${column} NOT BETWEEN ${min} AND ${MAX_COUNTER})`;

/** A column whose value is not one of a closed list (the values are the contracts' enums, never user text). */
const notIn = (column: string, values: readonly string[]): string =>
  `(${column} IS NULL OR ${column} NOT IN (${values.map((v) => `'${v}'`).join(',')}))`;
/** A column that must hold a number from 0 to 1. */
const notFraction = (column: string): string =>
  `(typeof(${column}) NOT IN ('real', 'integer') OR ${column} < 0 OR ${column} > 1)`;

/**
 * Rows holding a value no reader can use (see `IntegrityResult.badRows`): a timestamp outside the `Date` range or
 * not an integer, metadata not a JSON object, a tag list not a JSON list, an id that is not text, a revision,
 * position or session cursor that is not a counter the store can add to, and a value outside a column's closed
 * list or range (kind, lifecycle, embedding state, importance, confidence, event type, link, history action,
 * chunk state): every CHECK constraint of the schema, since `quickCheck` runs `quick_check` with them ignored.
 * One scan each of `memories`, `events`, `session_cursors`, `memory_links`, `memory_history`, `memory_chunks`.
 */
export function badRows(ctx: StoreContext): number {
  const has = (table: string, column: string): boolean =>
    (ctx.db.prepare(`SELECT 1 AS x FROM pragma_table_info('${table}') WHERE name = ?`).get(column) as
      | { x: number }
      | undefined) !== undefined;
  const memory = [
    notIn('kind', MEMORY_KINDS),
    notIn('lifecycle', LIFECYCLES),
    notIn('embedding_state', EMBEDDING_STATES),
    notFraction('importance'),
    notFraction('confidence'),
    badTime('created_at', false),
    badTime('updated_at', false),
    badTime('last_accessed_at', true),
    badJson('tags', 'array'),
    "typeof(id) <> 'text'",
    badCounter('revision', 1),
  ];
  if (has('memories', 'valid_from')) {
    memory.push(
      badTime('valid_from', false),
      badTime('valid_to', true),
      badTime('forgotten_at', true),
      badJson('metadata', 'object'),
    );
  }
  const event = [
    notIn('type', EVENT_TYPES),
    badTime('created_at', false),
    badJson('metadata', 'object'),
    badCounter('seq', 1),
  ];
  // The other tables' CHECK constraints, and session cursors.
  const others: string[] = [`(SELECT count(*) FROM session_cursors WHERE ${badCounter('cursor', 0)})`];
  if (has('memory_links', 'state')) {
    others.push(
      `(SELECT count(*) FROM memory_links WHERE ${notIn('kind', ['conflict'])} OR ${notIn('state', [...CONFLICT_STATES])})`,
    );
  }
  if (has('memory_history', 'action')) {
    others.push(`(SELECT count(*) FROM memory_history WHERE ${notIn('action', HISTORY_ACTION_LIST)})`);
  }
  if (has('memory_chunks', 'vec')) {
    others.push(`(SELECT count(*) FROM memory_chunks WHERE vec IS NULL OR vec NOT IN (0, 1, 2))`);
  }
  const row = ctx.db
    .prepare(
      `SELECT (SELECT count(*) FROM memories WHERE ${memory.join(' OR ')})
            + (SELECT count(*) FROM events WHERE ${event.join(' OR ')})${others.map((o) => ` + ${o}`).join('')} AS n`,
    )
    .get() as { n: number } | undefined;
  ctx.count('meta');
  return Number(row?.n ?? 0);
}

/** True when a write open of `path` checks it by itself (a file within the size bound). */
export function checksAtOpen(path: string): boolean {
  try {
    return statSync(path).size <= QUICK_CHECK_MAX_BYTES;
  } catch {
    return false;
  }
}
