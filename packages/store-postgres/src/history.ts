/**
 * The lineage of a memory: history entries written by updates, supersedes, forgets and contradiction links,
 * and the read that assembles a memory's supersede chain and entries in time order (as the SQLite store does).
 */

import type { MemoryHistory, MemoryRecord, UserScope } from '@engram/store';
import {
  checkUserScope,
  type HistoryInput,
  historyRules,
  validateAgentId,
  validateId,
} from '@engram/store/port-kit';
import type { PgContext, Queryable } from './context.js';
import { MEMORY_COLUMNS, type MemoryRow, toRecord } from './rows.js';

/** Appends one history entry (inside the caller's transaction). */
export async function recordHistory(ctx: PgContext, db: Queryable, e: HistoryInput): Promise<void> {
  await ctx.run(
    db,
    'write',
    `INSERT INTO memory_history(agent_id, memory_id, action, at, revision, actor, reason, related_id, content, user_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
    historyRules.historyValues(e),
  );
}

/** Erases the text kept by the history of these memories (their tombstones stay). */
export async function eraseHistoryContent(
  ctx: PgContext,
  db: Queryable,
  agentId: string,
  ids: readonly string[],
): Promise<void> {
  await ctx.run(
    db,
    'write',
    `UPDATE memory_history SET content = NULL
     WHERE agent_id = $1 AND memory_id = ANY($2::text[]) AND content IS NOT NULL`,
    [agentId, ids],
  );
}

/** One row of an agent by id (any lifecycle). */
export async function selectRow(
  ctx: PgContext,
  db: Queryable,
  agentId: string,
  id: string,
): Promise<MemoryRow | undefined> {
  const rows = await ctx.q<MemoryRow>(
    db,
    'read',
    `SELECT ${MEMORY_COLUMNS} FROM memories WHERE id = $1 AND agent_id = $2`,
    [id, agentId],
  );
  return rows[0];
}

/** The ids of the supersede chain through `id`, oldest first, from rows and from the history. */
export function supersedeChain(
  ctx: PgContext,
  db: Queryable,
  agentId: string,
  id: string,
): Promise<string[]> {
  return historyRules.supersedeChainAsync(id, async ({ direction, of }) => {
    if (direction === 'older') {
      const rows = await ctx.q<{ id: string }>(
        db,
        'read',
        `SELECT id FROM memories WHERE agent_id = $1 AND superseded_by = $2
         UNION SELECT memory_id FROM memory_history WHERE agent_id = $1 AND action = 'superseded' AND related_id = $2`,
        [agentId, of],
      );
      return rows.map((r) => r.id);
    }
    const successor = (await selectRow(ctx, db, agentId, of))?.superseded_by;
    if (successor) return [successor];
    const h = await ctx.q<{ related_id: string | null }>(
      db,
      'read',
      `SELECT related_id FROM memory_history WHERE agent_id = $1 AND memory_id = $2 AND action = 'superseded'
       ORDER BY seq DESC LIMIT 1`,
      [agentId, of],
    );
    const related = h[0]?.related_id;
    return related ? [related] : [];
  });
}

/**
 * A memory's lineage: its chain, its rows still stored, and the entries (creations included), oldest first.
 * With `scope.forUser`, another user's memory has an empty history (as an unknown id), and another user's rows
 * of the chain are left out with their entries, an erased one by the user its history rows name
 * (`historyRules.assembleHistory`).
 */
export function history(
  ctx: PgContext,
  agentId: string,
  id: string,
  scope?: UserScope,
): Promise<MemoryHistory> {
  return ctx.op('history', async () => {
    validateAgentId(agentId);
    validateId(id);
    const forUser = checkUserScope(scope);
    // One snapshot for the whole read.
    return ctx.tx(async (db) => {
      await ctx.run(db, 'meta', 'SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
      const chain = await supersedeChain(ctx, db, agentId, id);
      const records: (MemoryRecord | undefined)[] = [];
      for (const memoryId of chain) {
        const row = await selectRow(ctx, db, agentId, memoryId);
        records.push(row === undefined ? undefined : toRecord(row));
      }
      const rows = await ctx.q<historyRules.HistoryRow>(
        db,
        'read',
        `SELECT memory_id, action, at, revision, actor, reason, related_id, content, user_id FROM memory_history
         WHERE agent_id = $1 AND memory_id = ANY($2::text[]) ORDER BY seq`,
        [agentId, chain],
      );
      return historyRules.assembleHistory(id, chain, records, rows, forUser);
    });
  });
}
