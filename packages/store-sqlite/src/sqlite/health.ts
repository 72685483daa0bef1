/**
 * The health slice: zero-filled counts for the health page (never rejects) and the list of agents.
 */

import {
  EMBEDDING_STATES,
  type EmbeddingState,
  LIFECYCLES,
  type Lifecycle,
  MEMORY_KINDS,
  type MemoryKind,
} from '@engram/contracts';
import type { StoreHealth } from '@engram/store/port-kit';
import { type EngramStoreErrorCode, validateAgentId } from '@engram/store/port-kit';
import { classifySqliteError } from './classify.js';
import type { IntegrityResult, StoreContext } from './context.js';
import { quickCheck } from './quick-check.js';

/** The health result: counts, or the store error code that prevented them. */
export type HealthResult =
  | { readonly ok: true; readonly health: StoreHealth }
  | { readonly ok: false; readonly code: EngramStoreErrorCode; readonly integrity?: IntegrityResult };

function zeroes<K extends string>(keys: readonly K[]): Record<K, number> {
  return Object.fromEntries(keys.map((k) => [k, 0])) as Record<K, number>;
}

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
    const byKind = zeroes<MemoryKind>(MEMORY_KINDS);
    const byLifecycle = zeroes<Lifecycle>(LIFECYCLES);
    const byEmbeddingState = zeroes<EmbeddingState>(EMBEDDING_STATES);
    const where = agentId === undefined ? '' : 'WHERE agent_id = @agent';
    const params = agentId === undefined ? {} : { agent: agentId };
    const rows = ctx
      .stmt(
        'read',
        `SELECT kind, lifecycle, embedding_state AS state, count(*) AS n FROM memories ${where}
         GROUP BY kind, lifecycle, embedding_state`,
      )
      .all<{ kind: string; lifecycle: string; state: string; n: number }>(params);
    let memories = 0;
    let facts = 0;
    for (const r of rows) {
      memories += r.n;
      if (r.kind in byKind) byKind[r.kind as MemoryKind] += r.n;
      if (r.lifecycle in byLifecycle) byLifecycle[r.lifecycle as Lifecycle] += r.n;
      if (r.state in byEmbeddingState) byEmbeddingState[r.state as EmbeddingState] += r.n;
      if (r.kind === 'fact' && r.lifecycle === 'active') facts += r.n;
    }
    const events =
      ctx.stmt('read', `SELECT count(*) AS n FROM events ${where}`).get<{ n: number }>(params)?.n ?? 0;
    const skills =
      ctx.stmt('read', `SELECT count(*) AS n FROM skills ${where}`).get<{ n: number }>(params)?.n ?? 0;
    return Promise.resolve({
      ok: true,
      health: {
        totals: { memories, events, facts, skills },
        byKind,
        byLifecycle,
        byEmbeddingState,
        integrity: { ...ctx.integrity },
      },
    });
  } catch (err) {
    const code = classifySqliteError(err, 'health').code;
    const { state, checkedAt } = ctx.integrity;
    // A damaged file often cannot be counted: the failed check is the answer then.
    return Promise.resolve(
      state === 'failed' ? { ok: false, code, integrity: { state, checkedAt } } : { ok: false, code },
    );
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
