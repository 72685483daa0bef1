/**
 * The event-log slice: idempotent appends by seq, reads, sessions, and the per-session ingestion cursor moved
 * atomically with the memories of a batch.
 */

import { contentHash } from '@engram/contracts';
import type {
  AppendEventsResult,
  EventInput,
  EventRecord,
  IngestBatch,
  MemoryRecord,
} from '@engram/store/port-kit';
import {
  callRules,
  EngramStoreError,
  invalidInput,
  MAX_COUNTER,
  type PreparedEvent,
  storedCounter,
  storedRows,
  validateAgentId,
} from '@engram/store/port-kit';
import type { StoreContext } from './context.js';
import { insertPreparedBatch } from './memory-rows.js';

/**
 * A stored counter in SQL: the value when it is an integer from 0 to `MAX_COUNTER`, else NULL (a row damaged
 * outside the store neither counts as the session's last position nor moves it past what can be added to).
 */
const validCounter = (column: string): string =>
  `CASE WHEN typeof(${column}) = 'integer' AND ${column} BETWEEN 0 AND ${MAX_COUNTER} THEN ${column} END`;
const VALID_SEQ = validCounter('seq');

/** Drops identical re-sends inside a batch (counted as skipped); two different events with one seq are invalid. */
function dedupeBatch(prepared: readonly PreparedEvent[]): { unique: PreparedEvent[]; skipped: number } {
  const bySeq = new Map<number, PreparedEvent>();
  let skipped = 0;
  const unique: PreparedEvent[] = [];
  for (const e of prepared) {
    const prev = bySeq.get(e.seq);
    if (prev === undefined) {
      bySeq.set(e.seq, e);
      unique.push(e);
    } else if (storedRows.sameEvent(prev, e)) {
      skipped += 1;
    } else {
      throw invalidInput('the batch has two different events with the same seq');
    }
  }
  return { unique, skipped };
}

/** Appends events idempotently by seq: identical re-appends are skipped, a differing one is a conflict. */
export function appendEvents(
  ctx: StoreContext,
  agentId: string,
  sessionId: string,
  events: readonly EventInput[],
): Promise<AppendEventsResult> {
  return ctx.op('appendEvents', () => {
    const prepared = callRules.prepareAppend(ctx, agentId, sessionId, events);
    const { unique, skipped: skippedInBatch } = dedupeBatch(prepared);
    const now = ctx.now();
    return ctx.tx(() => {
      // Counted inside the transaction: `tx` may run it again after repairing a damaged vector chunk.
      let skipped = skippedInBatch;
      let appended = 0;
      if (unique.length > 0) {
        const existing = ctx
          .stmt(
            'read',
            `SELECT seq, type, role, content, tool_name, metadata, user_id FROM events
             WHERE agent_id = ? AND session_id = ? AND seq IN (SELECT value FROM json_each(?))`,
          )
          .all<
            Pick<
              storedRows.EventRow,
              'seq' | 'type' | 'role' | 'content' | 'tool_name' | 'metadata' | 'user_id'
            >
          >(agentId, sessionId, JSON.stringify(unique.map((e) => e.seq)));
        const stored = new Map(existing.map((r) => [r.seq, r]));
        const insert = ctx.stmt(
          'write',
          `INSERT INTO events(agent_id, session_id, seq, type, role, content, tool_name, metadata, content_hash, created_at,
             user_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        );
        for (const e of unique) {
          const s = stored.get(e.seq);
          if (s !== undefined) {
            if (storedRows.sameEvent(storedRows.eventFields(s), e)) {
              skipped += 1;
              continue;
            }
            throw new EngramStoreError(
              'ENGRAM_STORE_CONFLICT',
              'an event with this seq is already stored with different content',
            );
          }
          insert.run(
            agentId,
            sessionId,
            e.seq,
            e.type,
            e.role,
            e.content,
            e.toolName,
            e.metadataJson,
            contentHash(e.content),
            e.createdAt ?? now,
            e.userId,
          );
          appended += 1;
        }
      }
      const last = ctx
        .stmt('read', `SELECT max(${VALID_SEQ}) AS last FROM events WHERE agent_id = ? AND session_id = ?`)
        .get<{ last: unknown }>(agentId, sessionId);
      return { appended, skipped, lastSeq: storedCounter(last?.last) };
    });
  });
}

/** Exactly the stored events with `fromSeq ≤ seq ≤ toSeq`, in order. */
export function readEvents(
  ctx: StoreContext,
  agentId: string,
  sessionId: string,
  fromSeq: number,
  toSeq: number,
): Promise<readonly EventRecord[]> {
  return ctx.op('readEvents', () => {
    callRules.validateEventRangeArgs(agentId, sessionId, fromSeq, toSeq);
    if (toSeq < fromSeq) return [];
    return ctx
      .stmt(
        'read',
        `SELECT * FROM events WHERE agent_id = ? AND session_id = ? AND seq BETWEEN ? AND ? ORDER BY seq`,
      )
      .all<storedRows.EventRow>(agentId, sessionId, fromSeq, toSeq)
      .map((r) => storedRows.toEvent(r));
  });
}

/** Up to `limit` events with `seq > afterSeq`, in order (a damaged position, not a counter, is never one). */
export function listEventsAfter(
  ctx: StoreContext,
  agentId: string,
  sessionId: string,
  afterSeq: number,
  limit: number,
): Promise<readonly EventRecord[]> {
  return ctx.op('listEventsAfter', () => {
    const n = callRules.validateEventsAfterArgs(agentId, sessionId, afterSeq, limit);
    return ctx
      .stmt(
        'read',
        `SELECT * FROM events WHERE agent_id = ? AND session_id = ? AND seq > ? AND ${VALID_SEQ} IS NOT NULL
         ORDER BY seq LIMIT ?`,
      )
      .all<storedRows.EventRow>(agentId, sessionId, afterSeq, n)
      .map((r) => storedRows.toEvent(r));
  });
}

/** The agent's sessions (with events or a cursor), with their last seq and cursor, by session id. */
export function listSessions(
  ctx: StoreContext,
  agentId: string,
): Promise<readonly { readonly sessionId: string; readonly lastSeq: number; readonly cursor: number }[]> {
  return ctx.op('listSessions', () => {
    validateAgentId(agentId);
    return ctx
      .stmt(
        'read',
        `SELECT session_id AS sessionId, max(last_seq) AS lastSeq, max(cur) AS cursor FROM (
           SELECT session_id, max(${VALID_SEQ}) AS last_seq, 0 AS cur FROM events WHERE agent_id = @agent
           GROUP BY session_id
           UNION ALL
           SELECT session_id, 0 AS last_seq, ${validCounter('cursor')} AS cur FROM session_cursors
           WHERE agent_id = @agent
         ) GROUP BY session_id ORDER BY session_id`,
      )
      .all<{ sessionId: string; lastSeq: unknown; cursor: unknown }>({ agent: agentId })
      .map((r) => ({
        sessionId: r.sessionId,
        lastSeq: storedCounter(r.lastSeq),
        cursor: storedCounter(r.cursor),
      }));
  });
}

function readCursor(ctx: StoreContext, agentId: string, sessionId: string): number {
  return storedCounter(
    ctx
      .stmt('read', 'SELECT cursor FROM session_cursors WHERE agent_id = ? AND session_id = ?')
      .get<{ cursor: unknown }>(agentId, sessionId)?.cursor,
  );
}

/** The last ingested seq of a session (0 before any ingestion). */
export function getCursor(ctx: StoreContext, agentId: string, sessionId: string): Promise<number> {
  return ctx.op('getCursor', () => {
    validateAgentId(agentId);
    validateAgentId(sessionId, 'sessionId');
    return readCursor(ctx, agentId, sessionId);
  });
}

/** Inserts the batch's memories and moves the cursor atomically (compare-and-set on the cursor). */
export function ingestBatch(ctx: StoreContext, batch: IngestBatch): Promise<readonly MemoryRecord[]> {
  return ctx.op('ingestBatch', () => {
    const { agentId, sessionId, expected, next, prepared } = callRules.validateIngestBatch(ctx, batch);
    const now = ctx.now();
    return ctx.tx(() => {
      const current = readCursor(ctx, agentId, sessionId);
      if (current !== expected) {
        throw new EngramStoreError(
          'ENGRAM_STORE_REVISION_CONFLICT',
          `the session cursor moved meanwhile (expected ${expected}, stored ${current})`,
        );
      }
      const records = insertPreparedBatch(ctx, prepared, now).map((r) => r.record);
      ctx
        .stmt(
          'write',
          `INSERT INTO session_cursors(agent_id, session_id, cursor, updated_at) VALUES (?, ?, ?, ?)
           ON CONFLICT(agent_id, session_id) DO UPDATE SET cursor = excluded.cursor, updated_at = excluded.updated_at`,
        )
        .run(agentId, sessionId, next, now);
      return records;
    });
  });
}
