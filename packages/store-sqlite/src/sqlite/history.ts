/**
 * The lineage of a memory: history entries written by updates, supersedes, forgets and contradiction links,
 * and the read that assembles a memory's supersede chain and entries in time order.
 */

import type { HistoryInput, MemoryHistory, UserScope } from '@engram/store/port-kit';
import { checkUserScope, historyRules, validateAgentId, validateId } from '@engram/store/port-kit';
import type { StoreContext } from './context.js';
import { selectRow } from './memory-rows.js';
import { toRecord } from './rows.js';

/** Appends one history entry (inside the caller's transaction). */
export function recordHistory(ctx: StoreContext, e: HistoryInput): void {
  ctx
    .stmt(
      'write',
      `INSERT INTO memory_history(agent_id, memory_id, action, at, revision, actor, reason, related_id, content, user_id)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    )
    .run(...historyRules.historyValues(e));
}

/** Erases the text kept by the history of these memories (their tombstones stay). */
export function eraseHistoryContent(ctx: StoreContext, agentId: string, ids: readonly string[]): void {
  ctx
    .stmt(
      'write',
      `UPDATE memory_history SET content = NULL
       WHERE agent_id = ? AND memory_id IN (SELECT value FROM json_each(?)) AND content IS NOT NULL`,
    )
    .run(agentId, JSON.stringify(ids));
}

/** The ids of the supersede chain through `id`, oldest first, from rows and from the history. */
export function supersedeChain(ctx: StoreContext, agentId: string, id: string): string[] {
  return historyRules.supersedeChainSync(id, ({ direction, of }) => {
    if (direction === 'older') {
      return ctx
        .stmt(
          'read',
          `SELECT id FROM memories WHERE agent_id = ? AND superseded_by = ?
           UNION SELECT memory_id FROM memory_history WHERE agent_id = ? AND action = 'superseded' AND related_id = ?`,
        )
        .all<{ id: string }>(agentId, of, agentId, of)
        .map((r) => r.id);
    }
    const successor = selectRow(ctx, agentId, of)?.superseded_by;
    if (successor) return [successor];
    const h = ctx
      .stmt(
        'read',
        `SELECT related_id FROM memory_history WHERE agent_id = ? AND memory_id = ? AND action = 'superseded'
         ORDER BY seq DESC LIMIT 1`,
      )
      .get<{ related_id: string | null }>(agentId, of);
    return h?.related_id ? [h.related_id] : [];
  });
}

/**
 * A memory's lineage: its chain, its rows still stored, and the entries (creations included), oldest first.
 * With `scope.forUser`, another user's memory has an empty history (as an unknown id), and another user's rows
 * of the chain are left out with their entries, an erased one by the user its history rows name
 * (`historyRules.assembleHistory`).
 */
export function history(
  ctx: StoreContext,
  agentId: string,
  id: string,
  scope?: UserScope,
): Promise<MemoryHistory> {
  return ctx.op('history', () => {
    validateAgentId(agentId);
    validateId(id);
    const forUser = checkUserScope(scope);
    const chain = supersedeChain(ctx, agentId, id);
    const records = chain.map((memoryId) => {
      const row = selectRow(ctx, agentId, memoryId);
      return row === undefined ? undefined : toRecord(row);
    });
    const rows = ctx
      .stmt(
        'read',
        `SELECT memory_id, action, at, revision, actor, reason, related_id, content, user_id FROM memory_history
         WHERE agent_id = ? AND memory_id IN (SELECT value FROM json_each(?)) ORDER BY seq`,
      )
      .all<historyRules.HistoryRow>(agentId, JSON.stringify(chain));
    return historyRules.assembleHistory(id, chain, records, rows, forUser);
  });
}
