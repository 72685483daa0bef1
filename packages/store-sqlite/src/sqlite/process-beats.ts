/**
 * Process beats on SQLite (schema version 17, table `process_beats`): one row per process that has the file
 * open for writing, holding its content-free diagnostics snapshot. The write is one transaction that replaces
 * the process's row and deletes the rows past their time-to-live (by the store clock); the read never throws on
 * what it reads (the port's `liveProcessBeats` skips and counts malformed rows).
 */
import type { ProcessBeatInput, ProcessBeatList, StoredProcessBeatRow } from '@engram/store/port-kit';
import {
  liveProcessBeats,
  MAX_PROCESS_BEATS_LISTED,
  validateProcessBeat,
  validateProcessId,
} from '@engram/store/port-kit';
import type { StoreContext } from './context.js';

/** The table of the beats (created by migration 17). */
export const PROCESS_BEATS_TABLE_SQL = `CREATE TABLE IF NOT EXISTS process_beats (
  process_id TEXT PRIMARY KEY,
  started_at INTEGER NOT NULL,
  beat_at INTEGER NOT NULL,
  ttl_ms INTEGER NOT NULL,
  snapshot TEXT NOT NULL
)`;

/** Rows a listing reads at most: the listed cap and room for skipped ones. */
const ROWS_READ = MAX_PROCESS_BEATS_LISTED * 4;

function hasTable(ctx: StoreContext): boolean {
  return (
    ctx
      .stmt('meta', "SELECT 1 AS x FROM sqlite_master WHERE type = 'table' AND name = 'process_beats'")
      .get() !== undefined
  );
}

/** Replaces this process's beat and deletes expired rows; answers how many were deleted. */
export function publishProcessBeat(
  ctx: StoreContext,
  beat: ProcessBeatInput,
): Promise<{ readonly expired: number }> {
  return ctx.op('publishProcessBeat', () => {
    const valid = validateProcessBeat(beat);
    ctx.assertWritable('write');
    const now = ctx.now();
    return ctx.tx(() => {
      ctx
        .stmt(
          'meta',
          `INSERT INTO process_beats(process_id, started_at, beat_at, ttl_ms, snapshot) VALUES (?, ?, ?, ?, ?)
           ON CONFLICT(process_id) DO UPDATE SET started_at = excluded.started_at, beat_at = excluded.beat_at,
             ttl_ms = excluded.ttl_ms, snapshot = excluded.snapshot`,
        )
        .run(valid.processId, valid.startedAt, now, valid.ttlMs, valid.snapshotJson);
      const gone = ctx
        .stmt('meta', 'DELETE FROM process_beats WHERE process_id <> ? AND beat_at + ttl_ms < ?')
        .run(valid.processId, now);
      return { expired: gone.changes };
    });
  });
}

/** Deletes this process's beat (a clean close). */
export function removeProcessBeat(ctx: StoreContext, processId: string): Promise<void> {
  return ctx.op('removeProcessBeat', () => {
    const id = validateProcessId(processId);
    ctx.assertWritable('write');
    ctx.stmt('meta', 'DELETE FROM process_beats WHERE process_id = ?').run(id);
  });
}

/** The live beats, oldest process first; an empty list on a file whose schema predates the table. */
export function listProcessBeats(ctx: StoreContext): Promise<ProcessBeatList> {
  return ctx.op('listProcessBeats', () => {
    if (!hasTable(ctx)) return { beats: [], skipped: 0 };
    const now = ctx.now();
    const rows = ctx
      .stmt(
        'meta',
        `SELECT process_id, started_at, beat_at, ttl_ms, snapshot FROM process_beats
         WHERE NOT (typeof(beat_at) = 'integer' AND typeof(ttl_ms) = 'integer' AND beat_at + ttl_ms < ?)
         ORDER BY started_at, process_id LIMIT ?`,
      )
      .all<StoredProcessBeatRow>(now, ROWS_READ);
    return liveProcessBeats(rows, now);
  });
}
