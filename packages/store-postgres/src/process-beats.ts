/**
 * Process beats on PostgreSQL (schema version 7, table `process_beats`): one row per process that has the
 * database open, holding its content-free diagnostics snapshot. Beat times are on the server clock (as the
 * maintenance leases'), so expiry does not depend on the processes' clocks. The write replaces the process's row
 * and deletes the rows past their time-to-live in one transaction; the read never throws on what it reads (the
 * port's `liveProcessBeats` skips and counts malformed rows).
 */
import type { ProcessBeatInput, ProcessBeatList, StoredProcessBeatRow } from '@engram/store/port-kit';
import {
  liveProcessBeats,
  MAX_PROCESS_BEATS_LISTED,
  validateProcessBeat,
  validateProcessId,
} from '@engram/store/port-kit';
import type { PgContext } from './context.js';

/** The server clock in epoch milliseconds. */
const SERVER_NOW = '(extract(epoch from clock_timestamp()) * 1000)::bigint';

/** Rows a listing reads at most: the listed cap and room for skipped ones. */
const ROWS_READ = MAX_PROCESS_BEATS_LISTED * 4;

/** Replaces this process's beat and deletes expired rows; answers how many were deleted. */
export function publishProcessBeat(
  ctx: PgContext,
  beat: ProcessBeatInput,
): Promise<{ readonly expired: number }> {
  return ctx.op('publishProcessBeat', async () => {
    const valid = validateProcessBeat(beat);
    const rows = await ctx.q<{ expired: string | number }>(
      ctx.pool,
      'write',
      `WITH up AS (
         INSERT INTO process_beats(process_id, started_at, beat_at, ttl_ms, snapshot)
         VALUES ($1, $2, ${SERVER_NOW}, $3, $4)
         ON CONFLICT (process_id) DO UPDATE SET started_at = excluded.started_at, beat_at = excluded.beat_at,
           ttl_ms = excluded.ttl_ms, snapshot = excluded.snapshot
         RETURNING 1
       ), gone AS (
         DELETE FROM process_beats WHERE process_id <> $1 AND beat_at + ttl_ms < ${SERVER_NOW} RETURNING 1
       )
       SELECT (SELECT count(*) FROM gone) AS expired, (SELECT count(*) FROM up) AS written`,
      [valid.processId, valid.startedAt, valid.ttlMs, valid.snapshotJson],
    );
    return { expired: Number(rows[0]?.expired ?? 0) };
  });
}

/** Deletes this process's beat (a clean close). */
export function removeProcessBeat(ctx: PgContext, processId: string): Promise<void> {
  return ctx.op('removeProcessBeat', async () => {
    const id = validateProcessId(processId);
    await ctx.q(ctx.pool, 'write', 'DELETE FROM process_beats WHERE process_id = $1', [id]);
  });
}

/** The live beats, oldest process first (expiry by the server clock). */
export function listProcessBeats(ctx: PgContext): Promise<ProcessBeatList> {
  return ctx.op('listProcessBeats', async () => {
    const rows = await ctx.q<StoredProcessBeatRow & { readonly now: string | number }>(
      ctx.pool,
      'read',
      `SELECT process_id, started_at, beat_at, ttl_ms, snapshot, ${SERVER_NOW} AS now FROM process_beats
       WHERE beat_at + ttl_ms >= ${SERVER_NOW}
       ORDER BY started_at, process_id LIMIT $1`,
      [ROWS_READ],
    );
    const first = rows[0];
    if (first === undefined) return { beats: [], skipped: 0 };
    return liveProcessBeats(rows, Number(first.now));
  });
}
