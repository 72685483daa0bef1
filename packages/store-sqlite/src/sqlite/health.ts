/**
 * The health slice: zero-filled counts for the health page (never rejects) and the list of agents.
 */

import {
  type HealthCountRow,
  healthFailure,
  healthFromCounts,
  type StoreHealthResult,
  validateAgentId,
} from '@engram/store/port-kit';
import { classifySqliteError } from './classify.js';
import type { IntegrityResult, StoreContext } from './context.js';
import { quickCheck } from './quick-check.js';

/** The health result: counts, or the store error code that prevented them. */
export type HealthResult = StoreHealthResult;

/**
 * Runs the file's integrity check now (`PRAGMA quick_check`, whatever the file's size, then the scan for rows no
 * reader can use: `IntegrityResult.badRows`) and records it.
 */
export function checkIntegrity(ctx: StoreContext): Promise<IntegrityResult> {
  return ctx.op('checkIntegrity', () => {
    return { ...quickCheck(ctx) };
  });
}

/**
 * Zero-filled counts by kind, lifecycle and embedding state, and the last integrity check. Totals: `memories` = all rows, `events` = rows of
 * the event log, `facts` = active `fact` rows, `skills` = skills. Never rejects.
 */
export function health(ctx: StoreContext, agentId?: string): Promise<HealthResult> {
  try {
    if (ctx.closed) return Promise.resolve({ ok: false, code: 'ENGRAM_STORE_CLOSED' });
    if (agentId !== undefined) validateAgentId(agentId);
    const where = agentId === undefined ? '' : 'WHERE agent_id = @agent';
    const params = agentId === undefined ? {} : { agent: agentId };
    const rows = ctx
      .stmt(
        'read',
        `SELECT kind, lifecycle, embedding_state AS state, count(*) AS n FROM memories ${where}
         GROUP BY kind, lifecycle, embedding_state`,
      )
      .all<HealthCountRow>(params);
    const events =
      ctx.stmt('read', `SELECT count(*) AS n FROM events ${where}`).get<{ n: number }>(params)?.n ?? 0;
    const skills =
      ctx.stmt('read', `SELECT count(*) AS n FROM skills ${where}`).get<{ n: number }>(params)?.n ?? 0;
    return Promise.resolve(healthFromCounts(rows, events, skills, ctx.integrity));
  } catch (err) {
    return Promise.resolve(healthFailure(classifySqliteError(err, 'health').code, ctx.integrity));
  }
}

/** Distinct agents with at least one memory or event, sorted. */
export function listAgents(ctx: StoreContext): Promise<readonly string[]> {
  return ctx.op('listAgents', () =>
    ctx
      .stmt('read', 'SELECT agent_id FROM memories UNION SELECT agent_id FROM events ORDER BY agent_id')
      .all<{ agent_id: string }>()
      .map((r) => r.agent_id),
  );
}
