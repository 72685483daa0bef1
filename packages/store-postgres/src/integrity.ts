/**
 * The integrity check on PostgreSQL. The server guarantees page-level integrity itself (checksums, WAL), so there
 * is no file to scan as SQLite's `quick_check` does; the check verifies what the store's own schema relies on:
 * the exact-duplicate rule's unique index is present, and the BM25 statistics and term frequencies, per agent and per
 * user, agree with the units and postings they count; and no row holds a value no reader can use (a timestamp outside
 * JavaScript's `Date` range, metadata that is not a JSON object, a revision, position or cursor that is not a
 * counter: `IntegrityResult.badRows`). The result is recorded in the context and reported by
 * `integrity`.
 */
import { MAX_TIMESTAMP_MS } from '@engram/contracts/rules';
import type { IntegrityResult } from '@engram/store';
import { integrityResult, MAX_COUNTER } from '@engram/store/port-kit';
import type { PgContext } from './context.js';

/** Runs the check now and records it (`ok` or `failed`, and when). */
export function checkIntegrity(ctx: PgContext): Promise<IntegrityResult> {
  return ctx.op('checkIntegrity', async () => {
    const rows = await ctx.q<{ index_ok: boolean; stats_ok: boolean }>(
      ctx.pool,
      'read',
      `SELECT to_regclass('memories_active_content') IS NOT NULL AS index_ok,
         NOT EXISTS (
           SELECT 1 FROM (SELECT agent_id, count(*) AS docs, coalesce(sum(length), 0) AS total
                          FROM lexical_docs GROUP BY agent_id) d
           FULL JOIN lexical_stats s ON s.agent_id = d.agent_id
           WHERE coalesce(d.docs, 0) <> coalesce(s.docs, 0) OR coalesce(d.total, 0) <> coalesce(s.total_length, 0)
         ) AND NOT EXISTS (
           SELECT 1 FROM (SELECT agent_id, term, count(*) AS df FROM lexical_postings GROUP BY agent_id, term) p
           FULL JOIN (SELECT * FROM lexical_terms WHERE df <> 0) t ON t.agent_id = p.agent_id AND t.term = p.term
           WHERE coalesce(p.df, 0) <> coalesce(t.df, 0)
         ) AND NOT EXISTS (
           SELECT 1 FROM (SELECT agent_id, user_id, count(*) AS docs, coalesce(sum(length), 0) AS total
                          FROM lexical_docs GROUP BY agent_id, user_id) d
           FULL JOIN (SELECT * FROM lexical_user_stats WHERE docs <> 0) s
             ON s.agent_id = d.agent_id AND s.user_id = d.user_id
           WHERE coalesce(d.docs, 0) <> coalesce(s.docs, 0) OR coalesce(d.total, 0) <> coalesce(s.total_length, 0)
         ) AND NOT EXISTS (
           SELECT 1 FROM (SELECT d.agent_id, d.user_id, p.term, count(*) AS df
                          FROM lexical_postings p JOIN lexical_docs d ON d.key = p.key
                          GROUP BY d.agent_id, d.user_id, p.term) p
           FULL JOIN (SELECT * FROM lexical_user_terms WHERE df <> 0) t
             ON t.agent_id = p.agent_id AND t.user_id = p.user_id AND t.term = p.term
           WHERE coalesce(p.df, 0) <> coalesce(t.df, 0)
         ) AND NOT EXISTS (
           SELECT 1 FROM lexical_docs d JOIN memories m ON m.rid = d.rid AND m.agent_id = d.agent_id
           WHERE d.user_id <> coalesce(m.user_id, '')
         ) AS stats_ok`,
    );
    const ok = rows[0]?.index_ok === true && rows[0]?.stats_ok === true;
    const bad = ok ? await badRows(ctx) : 0;
    ctx.integrity = integrityResult(ok, bad, ctx.now());
    return ctx.integrity;
  });
}

const MAX_MS = MAX_TIMESTAMP_MS;
const badTime = (column: string): string => `${column} NOT BETWEEN -${MAX_MS} AND ${MAX_MS}`;

/** A counter the store can add to: from `min` to `MAX_COUNTER` (a revision, a position, a cursor). */
const badCounter = (column: string, min: number): string => `${column} NOT BETWEEN ${min} AND ${MAX_COUNTER}`;

/**
 * Rows holding a value no reader can use (see `IntegrityResult.badRows`): one scan of `memories`, `events` and
 * the session cursors.
 */
async function badRows(ctx: PgContext): Promise<number> {
  const memory = ['created_at', 'updated_at', 'last_accessed_at', 'valid_from', 'valid_to', 'forgotten_at']
    .map(badTime)
    .concat("jsonb_typeof(metadata) <> 'object'", badCounter('revision', 1));
  const rows = await ctx.q<{ n: string | number }>(
    ctx.pool,
    'read',
    `SELECT (SELECT count(*) FROM memories WHERE ${memory.join(' OR ')})
          + (SELECT count(*) FROM events WHERE ${badTime('created_at')} OR ${badCounter('seq', 1)})
          + (SELECT count(*) FROM session_cursors WHERE ${badCounter('cursor', 0)}) AS n`,
  );
  return Number(rows[0]?.n ?? 0);
}
