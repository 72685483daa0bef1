/**
 * The lineage of a memory: history entries written by updates, supersedes, forgets and contradiction links,
 * and the read that assembles a memory's supersede chain and entries in time order.
 */
import type {
  HistoryInput,
  MemoryHistory,
  MemoryHistoryAction,
  MemoryHistoryEntry,
  MemoryRecord,
  UserScope,
} from '@engram/store/port-kit';
import { checkUserScope, validateAgentId, validateId, visibleToUser } from '@engram/store/port-kit';
import type { StoreContext } from './context.js';
import { selectRow } from './memory-rows.js';
import { type MemoryRow, toRecord } from './rows.js';

/** Appends one history entry (inside the caller's transaction). */
export function recordHistory(ctx: StoreContext, e: HistoryInput): void {
  ctx
    .stmt(
      'write',
      `INSERT INTO memory_history(agent_id, memory_id, action, at, revision, actor, reason, related_id, content)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    )
    .run(
      e.agentId,
      e.memoryId,
      e.action,
      e.at,
      e.revision ?? null,
      e.actor ?? null,
      e.reason ?? null,
      e.relatedId ?? null,
      e.content ?? null,
    );
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

/** Longest supersede chain followed (a guard against a cycle in a damaged file). */
const MAX_CHAIN = 1000;

/** The ids of the supersede chain through `id`, oldest first, from rows and from the history. */
export function supersedeChain(ctx: StoreContext, agentId: string, id: string): string[] {
  const older = (of: string): string[] =>
    ctx
      .stmt(
        'read',
        `SELECT id FROM memories WHERE agent_id = ? AND superseded_by = ?
         UNION SELECT memory_id FROM memory_history WHERE agent_id = ? AND action = 'superseded' AND related_id = ?`,
      )
      .all<{ id: string }>(agentId, of, agentId, of)
      .map((r) => r.id);
  const newer = (of: string): string | null => {
    const row = selectRow(ctx, agentId, of);
    if (row?.superseded_by) return row.superseded_by;
    const h = ctx
      .stmt(
        'read',
        `SELECT related_id FROM memory_history WHERE agent_id = ? AND memory_id = ? AND action = 'superseded'
         ORDER BY seq DESC LIMIT 1`,
      )
      .get<{ related_id: string | null }>(agentId, of);
    return h?.related_id ?? null;
  };
  const seen = new Set<string>([id]);
  const before: string[] = [];
  let frontier = [id];
  while (frontier.length > 0 && seen.size < MAX_CHAIN) {
    const next: string[] = [];
    for (const current of frontier) {
      for (const o of older(current)) {
        if (seen.has(o)) continue;
        seen.add(o);
        before.unshift(o);
        next.push(o);
      }
    }
    frontier = next;
  }
  const after: string[] = [];
  let cursor = newer(id);
  while (cursor !== null && !seen.has(cursor) && seen.size < MAX_CHAIN) {
    seen.add(cursor);
    after.push(cursor);
    cursor = newer(cursor);
  }
  return [...before, id, ...after];
}

type HistoryRow = {
  memory_id: string;
  action: string;
  at: number;
  revision: number | null;
  actor: string | null;
  reason: string | null;
  related_id: string | null;
  content: string | null;
};

function entry(r: HistoryRow): MemoryHistoryEntry {
  return {
    memoryId: r.memory_id,
    action: r.action as MemoryHistoryAction,
    at: r.at,
    revision: r.revision,
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
  ctx: StoreContext,
  agentId: string,
  id: string,
  scope?: UserScope,
): Promise<MemoryHistory> {
  return ctx.op('history', () => {
    validateAgentId(agentId);
    validateId(id);
    const forUser = checkUserScope(scope);
    const own = selectRow(ctx, agentId, id);
    if (own !== undefined && !visibleToUser(own.user_id, forUser)) {
      return { id, chain: [id], records: [], entries: [] };
    }
    const hidden = new Set<string>();
    const chain = supersedeChain(ctx, agentId, id).filter((memoryId) => {
      const r = memoryId === id ? own : selectRow(ctx, agentId, memoryId);
      if (r === undefined || visibleToUser(r.user_id, forUser)) return true;
      hidden.add(memoryId);
      return false;
    });
    const records: MemoryRecord[] = [];
    const entries: MemoryHistoryEntry[] = [];
    for (const [index, memoryId] of chain.entries()) {
      const row: MemoryRow | undefined = selectRow(ctx, agentId, memoryId);
      if (row !== undefined) {
        records.push(toRecord(row));
        entries.push({
          memoryId,
          action: 'created',
          at: row.created_at,
          revision: 1,
          actor: null,
          reason: null,
          relatedId: index > 0 ? (chain[index - 1] ?? null) : null,
          previousContent: null,
        });
      }
    }
    const rows = ctx
      .stmt(
        'read',
        `SELECT memory_id, action, at, revision, actor, reason, related_id, content FROM memory_history
         WHERE agent_id = ? AND memory_id IN (SELECT value FROM json_each(?)) ORDER BY seq`,
      )
      .all<HistoryRow>(agentId, JSON.stringify(chain));
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
}
