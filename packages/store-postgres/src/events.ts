/**
 * The event-log slice on PostgreSQL: appends idempotent by the `(agent, session, seq)` primary key
 * (`ON CONFLICT DO NOTHING`, then the skipped seqs are compared with what is stored: identical is skipped, a
 * difference is `ENGRAM_STORE_CONFLICT` and the whole append rolls back), and the ingestion cursor moved by a
 * compare-and-set statement in the transaction that inserts the batch's memories.
 */

import { contentHash } from '@engram/contracts';
import {
  type AppendEventsResult,
  EngramStoreError,
  type EventInput,
  type EventRecord,
  type IngestBatch,
  type MemoryRecord,
} from '@engram/store';
import {
  callRules,
  invalidInput,
  MAX_COUNTER,
  type PreparedEvent,
  storedCounter,
  storedRows,
  validateAgentId,
} from '@engram/store/port-kit';
import type { PgContext } from './context.js';
import { insertPrepared } from './write.js';

/**
 * A stored counter in SQL: the value when it is from 0 to `MAX_COUNTER`, else NULL (a row edited outside the
 * store neither counts as the session's last position nor moves it past what can be added to). A cursor
 * outside the bound reads as 0, in reads and in the compare-and-set alike.
 */
const validCounter = (column: string): string =>
  `CASE WHEN ${column} BETWEEN 0 AND ${MAX_COUNTER} THEN ${column} END`;
const VALID_SEQ = validCounter('seq');
const VALID_CURSOR = `coalesce(${validCounter('cursor')}, 0)`;

/** Appends events idempotently by seq: identical re-appends are skipped, a differing one is a conflict. */
export function appendEvents(
  ctx: PgContext,
  agentId: string,
  sessionId: string,
  events: readonly EventInput[],
): Promise<AppendEventsResult> {
  return ctx.op('appendEvents', async () => {
    const prepared = callRules.prepareAppend(ctx, agentId, sessionId, events);
    const bySeq = new Map<number, PreparedEvent>();
    let skipped = 0;
    for (const e of prepared) {
      const prev = bySeq.get(e.seq);
      if (prev === undefined) bySeq.set(e.seq, e);
      else if (storedRows.sameEvent(prev, e)) {
        skipped += 1;
      } else throw invalidInput('the batch has two different events with the same seq');
    }
    const unique = [...bySeq.values()];
    const now = ctx.now();
    return ctx.tx(async (db) => {
      let appended = 0;
      if (unique.length > 0) {
        const inserted = await ctx.q<{ seq: string }>(
          db,
          'write',
          `INSERT INTO events(agent_id, session_id, seq, type, role, content, tool_name, metadata, content_hash, created_at,
             user_id)
           SELECT $1::text, $2::text, * FROM unnest($3::bigint[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::bigint[], $11::text[])
           ON CONFLICT (agent_id, session_id, seq) DO NOTHING RETURNING seq`,
          [
            agentId,
            sessionId,
            unique.map((e) => e.seq),
            unique.map((e) => e.type),
            unique.map((e) => e.role),
            unique.map((e) => e.content),
            unique.map((e) => e.toolName),
            unique.map((e) => e.metadataJson),
            unique.map((e) => contentHash(e.content)),
            unique.map((e) => e.createdAt ?? now),
            unique.map((e) => e.userId),
          ],
        );
        appended = inserted.length;
        const done = new Set(inserted.map((r) => Number(r.seq)));
        const rest = unique.filter((e) => !done.has(e.seq));
        if (rest.length > 0) {
          const stored = await ctx.q<storedRows.EventRow>(
            db,
            'read',
            'SELECT * FROM events WHERE agent_id = $1 AND session_id = $2 AND seq = ANY($3::bigint[])',
            [agentId, sessionId, rest.map((e) => e.seq)],
          );
          const bySeqStored = new Map(stored.map((r) => [Number(r.seq), r]));
          for (const e of rest) {
            const s = bySeqStored.get(e.seq);
            if (s === undefined || !storedRows.sameEvent(e, storedRows.eventFields(s))) {
              throw new EngramStoreError(
                'ENGRAM_STORE_CONFLICT',
                'an event with this seq is already stored with different content',
              );
            }
            skipped += 1;
          }
        }
      }
      const last = await ctx.q<{ last: string | null }>(
        db,
        'read',
        `SELECT max(${VALID_SEQ}) AS last FROM events WHERE agent_id = $1 AND session_id = $2`,
        [agentId, sessionId],
      );
      return { appended, skipped, lastSeq: storedCounter(last[0]?.last) };
    });
  });
}

/** Exactly the stored events with `fromSeq ≤ seq ≤ toSeq`, in order. */
export function readEvents(
  ctx: PgContext,
  agentId: string,
  sessionId: string,
  fromSeq: number,
  toSeq: number,
): Promise<readonly EventRecord[]> {
  return ctx.op('readEvents', async () => {
    callRules.validateEventRangeArgs(agentId, sessionId, fromSeq, toSeq);
    if (toSeq < fromSeq) return [];
    const rows = await ctx.q<storedRows.EventRow>(
      ctx.pool,
      'read',
      'SELECT * FROM events WHERE agent_id = $1 AND session_id = $2 AND seq BETWEEN $3 AND $4 ORDER BY seq',
      [agentId, sessionId, fromSeq, toSeq],
    );
    return rows.map((r) => storedRows.toEvent(r));
  });
}

/** Up to `limit` events with `seq > afterSeq`, in order (a position past `MAX_COUNTER` is never one). */
export function listEventsAfter(
  ctx: PgContext,
  agentId: string,
  sessionId: string,
  afterSeq: number,
  limit: number,
): Promise<readonly EventRecord[]> {
  return ctx.op('listEventsAfter', async () => {
    const n = callRules.validateEventsAfterArgs(agentId, sessionId, afterSeq, limit);
    const rows = await ctx.q<storedRows.EventRow>(
      ctx.pool,
      'read',
      `SELECT * FROM events WHERE agent_id = $1 AND session_id = $2 AND seq > $3 AND seq <= ${MAX_COUNTER}
       ORDER BY seq LIMIT $4`,
      [agentId, sessionId, afterSeq, n],
    );
    return rows.map((r) => storedRows.toEvent(r));
  });
}

/** The agent's sessions (with events or a cursor), with their last seq and cursor, by session id. */
export function listSessions(
  ctx: PgContext,
  agentId: string,
): Promise<readonly { readonly sessionId: string; readonly lastSeq: number; readonly cursor: number }[]> {
  return ctx.op('listSessions', async () => {
    validateAgentId(agentId);
    const rows = await ctx.q<{ session_id: string; last_seq: string; cursor: string }>(
      ctx.pool,
      'read',
      `SELECT session_id, max(last_seq) AS last_seq, max(cur) AS cursor FROM (
         SELECT session_id, max(${VALID_SEQ}) AS last_seq, 0 AS cur FROM events WHERE agent_id = $1
         GROUP BY session_id
         UNION ALL
         SELECT session_id, 0 AS last_seq, ${VALID_CURSOR} AS cur FROM session_cursors WHERE agent_id = $1
       ) s GROUP BY session_id ORDER BY session_id COLLATE "C"`,
      [agentId],
    );
    return rows.map((r) => ({
      sessionId: r.session_id,
      lastSeq: storedCounter(r.last_seq),
      cursor: storedCounter(r.cursor),
    }));
  });
}

/** The last ingested seq of a session (0 before any ingestion). */
export function getCursor(ctx: PgContext, agentId: string, sessionId: string): Promise<number> {
  return ctx.op('getCursor', async () => {
    validateAgentId(agentId);
    validateAgentId(sessionId, 'sessionId');
    const rows = await ctx.q<{ cursor: string }>(
      ctx.pool,
      'read',
      `SELECT ${VALID_CURSOR} AS cursor FROM session_cursors WHERE agent_id = $1 AND session_id = $2`,
      [agentId, sessionId],
    );
    return storedCounter(rows[0]?.cursor);
  });
}

/**
 * Inserts the batch's memories and moves the cursor atomically. The cursor move is one compare-and-set
 * statement (an insert for a session never ingested, an `UPDATE … WHERE cursor = expected` otherwise); when it
 * changes nothing the cursor moved meanwhile and the transaction rolls back.
 */
export function ingestBatch(ctx: PgContext, batch: IngestBatch): Promise<readonly MemoryRecord[]> {
  return ctx.op('ingestBatch', async () => {
    const { agentId, sessionId, expected, next, prepared } = callRules.validateIngestBatch(ctx, batch);
    const now = ctx.now();
    const records = await ctx.tx(async (db) => {
      const moved =
        expected === 0
          ? await ctx.run(
              db,
              'write',
              `INSERT INTO session_cursors(agent_id, session_id, cursor, updated_at) VALUES ($1, $2, $3, $4)
               ON CONFLICT (agent_id, session_id) DO UPDATE SET cursor = EXCLUDED.cursor, updated_at = EXCLUDED.updated_at
               WHERE ${VALID_CURSOR.replaceAll('cursor', 'session_cursors.cursor')} = 0`,
              [agentId, sessionId, next, now],
            )
          : await ctx.run(
              db,
              'write',
              `UPDATE session_cursors SET cursor = $3, updated_at = $4
               WHERE agent_id = $1 AND session_id = $2 AND ${VALID_CURSOR} = $5`,
              [agentId, sessionId, next, now, expected],
            );
      if (moved !== 1) {
        const stored = await ctx.q<{ cursor: string }>(
          db,
          'read',
          `SELECT ${VALID_CURSOR} AS cursor FROM session_cursors WHERE agent_id = $1 AND session_id = $2`,
          [agentId, sessionId],
        );
        throw new EngramStoreError(
          'ENGRAM_STORE_REVISION_CONFLICT',
          `the session cursor moved meanwhile (expected ${expected}, stored ${storedCounter(stored[0]?.cursor)})`,
        );
      }
      return (await insertPrepared(ctx, db, prepared, now)).map((i) => i.record);
    });
    await ctx.noteInserted(records.length);
    return records;
  });
}
