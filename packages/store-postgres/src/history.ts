/**
 * The lineage of a memory: history entries written by updates, supersedes, forgets and contradiction links,
 * and the read that assembles a memory's supersede chain and entries in time order (as the SQLite store does).
 */
import type {
  MemoryHistory,
  MemoryHistoryAction,
  MemoryHistoryEntry,
  MemoryRecord,
  UserScope,
} from '@engram/store';
import {
  checkUserScope,
  type HistoryInput,
  validateAgentId,
  validateId,
  visibleToUser,
} from '@engram/store/port-kit';
import type { PgContext, Queryable } from './context.js';
import { MEMORY_COLUMNS, type MemoryRow, num, toRecord } from './rows.js';

/** Appends one history entry (inside the caller's transaction). */
export async function recordHistory(ctx: PgContext, db: Queryable, e: HistoryInput): Promise<void> {
  await ctx.run(
    db,
    'write',
    `INSERT INTO memory_history(agent_id, memory_id, action, at, revision, actor, reason, related_id, content)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [
      e.agentId,
      e.memoryId,
      e.action,
      e.at,
      e.revision ?? null,
      e.actor ?? null,
      e.reason ?? null,
      e.relatedId ?? null,
      e.content ?? null,
    ],
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

/** Longest supersede chain followed (a guard against a cycle in damaged data). */
const MAX_CHAIN = 1000;

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
export async function supersedeChain(
  ctx: PgContext,
  db: Queryable,
  agentId: string,
  id: string,
): Promise<string[]> {
  const older = async (of: string): Promise<string[]> =>
    (
      await ctx.q<{ id: string }>(
        db,
        'read',
        `SELECT id FROM memories WHERE agent_id = $1 AND superseded_by = $2
         UNION SELECT memory_id FROM memory_history WHERE agent_id = $1 AND action = 'superseded' AND related_id = $2`,
        [agentId, of],
      )
    ).map((r) => r.id);
  const newer = async (of: string): Promise<string | null> => {
    const row = await selectRow(ctx, db, agentId, of);
    if (row?.superseded_by) return row.superseded_by;
    const h = await ctx.q<{ related_id: string | null }>(
      db,
      'read',
      `SELECT related_id FROM memory_history WHERE agent_id = $1 AND memory_id = $2 AND action = 'superseded'
       ORDER BY seq DESC LIMIT 1`,
      [agentId, of],
    );
    return h[0]?.related_id ?? null;
  };
  const seen = new Set<string>([id]);
  const before: string[] = [];
  let frontier = [id];
  while (frontier.length > 0 && seen.size < MAX_CHAIN) {
    const next: string[] = [];
    for (const current of frontier) {
      // The UNION's order is unspecified: sort for a stable chain.
      for (const o of (await older(current)).sort()) {
        if (seen.has(o)) continue;
        seen.add(o);
        before.unshift(o);
        next.push(o);
      }
    }
    frontier = next;
  }
  const after: string[] = [];
  let cursor = await newer(id);
  while (cursor !== null && !seen.has(cursor) && seen.size < MAX_CHAIN) {
    seen.add(cursor);
    after.push(cursor);
    cursor = await newer(cursor);
  }
  return [...before, id, ...after];
}

type HistoryRow = {
  memory_id: string;
  action: string;
  at: string | number;
  revision: string | number | null;
  actor: string | null;
  reason: string | null;
  related_id: string | null;
  content: string | null;
};

function entry(r: HistoryRow): MemoryHistoryEntry {
  return {
    memoryId: r.memory_id,
    action: r.action as MemoryHistoryAction,
    at: Number(r.at),
    revision: num(r.revision),
    actor: r.actor,
    reason: r.reason,
    relatedId: r.related_id,
    previousContent: r.content,
  };
}

/**
 * A memory's lineage: its chain, its rows still stored, and the entries (creations included), oldest first.
 * With `scope.forUser`, another user's memory has an empty history (as an unknown id), and another user's rows
 * of the chain are left out with their entries.
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
      const own = await selectRow(ctx, db, agentId, id);
      if (own !== undefined && !visibleToUser(own.user_id, forUser)) {
        return { id, chain: [id], records: [], entries: [] };
      }
      const hidden = new Set<string>();
      const chain: string[] = [];
      const stored = new Map<string, MemoryRow>();
      for (const memoryId of await supersedeChain(ctx, db, agentId, id)) {
        const r = await selectRow(ctx, db, agentId, memoryId);
        if (r !== undefined && !visibleToUser(r.user_id, forUser)) {
          hidden.add(memoryId);
          continue;
        }
        if (r !== undefined) stored.set(memoryId, r);
        chain.push(memoryId);
      }
      const records: MemoryRecord[] = [];
      const entries: MemoryHistoryEntry[] = [];
      for (const [index, memoryId] of chain.entries()) {
        const row = stored.get(memoryId);
        if (row === undefined) continue;
        records.push(toRecord(row));
        entries.push({
          memoryId,
          action: 'created',
          at: Number(row.created_at),
          revision: 1,
          actor: null,
          reason: null,
          relatedId: index > 0 ? (chain[index - 1] ?? null) : null,
          previousContent: null,
        });
      }
      const rows = await ctx.q<HistoryRow>(
        db,
        'read',
        `SELECT memory_id, action, at, revision, actor, reason, related_id, content FROM memory_history
         WHERE agent_id = $1 AND memory_id = ANY($2::text[]) ORDER BY seq`,
        [agentId, chain],
      );
      for (const r of rows) if (!hidden.has(r.memory_id)) entries.push(entry(r));
      // Stable by time: creations first at equal times, then the recorded order.
      const order = new Map(entries.map((e, i) => [e, i]));
      entries.sort(
        (a, b) =>
          a.at - b.at ||
          (a.action === 'created' ? 0 : 1) - (b.action === 'created' ? 0 : 1) ||
          (order.get(a) ?? 0) - (order.get(b) ?? 0),
      );
      return { id, chain, records, entries };
    });
  });
}
