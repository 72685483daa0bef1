/**
 * The facts slice: forgetting (with tombstones), deleting an agent's memories, and contradiction links.
 * Forgetting follows the store's forget setting (`ctx.forgetMode`): `erase` removes the rows, their derived rows
 * and the text their history kept, leaving a tombstone; `keep` archives the rows, marked forgotten.
 */

import type {
  ConflictLink,
  ConflictResolution,
  ConflictState,
  DeleteAllOptions,
  DeleteAllResult,
  ForgetOptions,
  ForgetResult,
  UserScope,
} from '@engram/store/port-kit';
import {
  CONFLICT_REASONS,
  CONFLICT_STATES,
  checkUserScope,
  EngramStoreError,
  forgetOptions,
  invalidInput,
  validateAgentId,
  validateId,
  validateLimit,
  visibleToUser,
} from '@engram/store/port-kit';
import { unindexContent } from './chunks.js';
import type { StoreContext } from './context.js';
import { eraseHistoryContent, recordHistory, supersedeChain } from './history.js';
import { rowForWrite, selectRow } from './memory-rows.js';
import { deleteTags } from './mirrors.js';
import { linksChanged, mayHaveOpenLinks } from './open-links.js';
import { type MemoryRow, toRecord } from './rows.js';

/** Forgets one row as the setting says, with its tombstone; inside the caller's transaction. */
function forgetRow(
  ctx: StoreContext,
  row: MemoryRow,
  who: { actor: string; reason: string | null },
  now: number,
): void {
  recordHistory(ctx, {
    agentId: row.agent_id,
    memoryId: row.id,
    action: 'forgotten',
    at: now,
    revision: row.revision,
    actor: who.actor,
    reason: who.reason,
  });
  if (ctx.forgetMode === 'erase') {
    ctx.stmt('write', 'DELETE FROM memories WHERE rid = ?').run(row.rid);
    deleteTags(ctx, row.rid, row.agent_id, toRecord(row).tags);
    unindexContent(ctx, row.rid, row.agent_id, row.chunk_count, row.has_cjk === 1);
    return;
  }
  ctx
    .stmt(
      'write',
      `UPDATE memories SET lifecycle = 'archived', forgotten_at = ?, valid_to = coalesce(valid_to, ?),
         revision = revision + 1, updated_at = ? WHERE rid = ?`,
    )
    .run(now, now, now, row.rid);
}

/** Forgets a memory and its superseded predecessors (one transaction). */
export function forgetMemory(
  ctx: StoreContext,
  agentId: string,
  id: string,
  options?: ForgetOptions & UserScope,
): Promise<ForgetResult> {
  return ctx.op('forgetMemory', () => {
    validateAgentId(agentId);
    validateId(id);
    const who = forgetOptions(options);
    const forUser = checkUserScope(options === undefined ? undefined : { forUser: options.forUser });
    const now = ctx.now();
    return ctx.tx(() => {
      const row = selectRow(ctx, agentId, id, forUser);
      if (row === undefined || row.forgotten_at !== null) {
        throw new EngramStoreError('ENGRAM_STORE_NOT_FOUND', 'no memory with this id for this agent');
      }
      // The predecessors of the chain: the versions this memory replaced (never its successors).
      const chain = supersedeChain(ctx, agentId, id);
      const ids = chain.slice(0, chain.indexOf(id) + 1);
      const forgotten: string[] = [];
      for (const memoryId of ids) {
        const r = selectRow(ctx, agentId, memoryId);
        if (r === undefined || r.forgotten_at !== null || !visibleToUser(r.user_id, forUser)) continue;
        forgetRow(ctx, r, who, now);
        forgotten.push(memoryId);
      }
      if (ctx.forgetMode === 'erase') eraseHistoryContent(ctx, agentId, forgotten);
      closeLinks(ctx, agentId, forgotten, now);
      return { forgotten, mode: ctx.forgetMode };
    });
  });
}

/** Marks the open conflict links of forgotten memories dismissed. */
function closeLinks(ctx: StoreContext, agentId: string, ids: readonly string[], now: number): void {
  linksChanged(ctx);
  ctx
    .stmt(
      'write',
      `UPDATE memory_links SET state = 'dismissed', resolved_at = ?
       WHERE agent_id = ? AND state = 'open'
         AND (older_id IN (SELECT value FROM json_each(?)) OR newer_id IN (SELECT value FROM json_each(?)))`,
    )
    .run(now, agentId, JSON.stringify(ids), JSON.stringify(ids));
}

/**
 * Forgets every memory of an agent; in `erase` mode also its events, cursors and skills (one transaction). With
 * `options.userId`, only that user's memories and events (see {@link deleteUserAll}).
 */
export function deleteAll(
  ctx: StoreContext,
  agentId: string,
  options?: DeleteAllOptions,
): Promise<DeleteAllResult> {
  return ctx.op('deleteAll', () => {
    validateAgentId(agentId);
    const who = forgetOptions(options);
    const userId = deleteAllUser(options);
    const now = ctx.now();
    if (userId !== null) return ctx.tx(() => deleteUserAll(ctx, agentId, userId, who, now));
    return ctx.tx(() => {
      const rows = ctx
        .stmt('read', 'SELECT * FROM memories WHERE agent_id = ? AND forgotten_at IS NULL ORDER BY rid')
        .all<MemoryRow>(agentId);
      for (const row of rows) forgetRow(ctx, row, who, now);
      let events = 0;
      let skills = 0;
      if (ctx.forgetMode === 'erase') {
        ctx.stmt('write', 'UPDATE memory_history SET content = NULL WHERE agent_id = ?').run(agentId);
        linksChanged(ctx);
        ctx.stmt('write', 'DELETE FROM memory_links WHERE agent_id = ?').run(agentId);
        events = ctx.stmt('write', 'DELETE FROM events WHERE agent_id = ?').run(agentId).changes;
        ctx.stmt('write', 'DELETE FROM session_cursors WHERE agent_id = ?').run(agentId);
        skills = ctx.stmt('write', 'DELETE FROM skills WHERE agent_id = ?').run(agentId).changes;
      } else {
        closeLinks(
          ctx,
          agentId,
          rows.map((r) => r.id),
          now,
        );
      }
      return { memories: rows.length, events, skills, mode: ctx.forgetMode };
    });
  });
}

/** The one user of a delete-all, or null for the whole agent; invalid input throws. */
function deleteAllUser(options: DeleteAllOptions | undefined): string | null {
  const userId = options?.userId;
  return userId === undefined ? null : validateAgentId(userId, 'options.userId');
}

/**
 * Forgets one user's memories (as the forget setting says, tombstoned) and, in `erase` mode, that user's events
 * and the text their history kept; the agent's own memories, other users', the cursors and the skills stay.
 */
function deleteUserAll(
  ctx: StoreContext,
  agentId: string,
  userId: string,
  who: { actor: string; reason: string | null },
  now: number,
): DeleteAllResult {
  const rows = ctx
    .stmt(
      'read',
      'SELECT * FROM memories WHERE agent_id = ? AND user_id = ? AND forgotten_at IS NULL ORDER BY rid',
    )
    .all<MemoryRow>(agentId, userId);
  for (const row of rows) forgetRow(ctx, row, who, now);
  const ids = rows.map((r) => r.id);
  let events = 0;
  if (ctx.forgetMode === 'erase') {
    eraseHistoryContent(ctx, agentId, ids);
    events = ctx
      .stmt('write', 'DELETE FROM events WHERE agent_id = ? AND user_id = ?')
      .run(agentId, userId).changes;
  }
  closeLinks(ctx, agentId, ids, now);
  return { memories: rows.length, events, skills: 0, mode: ctx.forgetMode };
}

type LinkRow = {
  older_id: string;
  newer_id: string;
  state: string;
  reason: string;
  created_at: number;
  resolved_at: number | null;
};

function toLink(r: LinkRow): ConflictLink {
  return {
    olderId: r.older_id,
    newerId: r.newer_id,
    state: r.state as ConflictState,
    reason: r.reason,
    createdAt: r.created_at,
    resolvedAt: r.resolved_at,
  };
}

/** Links two of the agent's facts as contradicting; false when already linked. */
export function linkConflict(
  ctx: StoreContext,
  agentId: string,
  olderId: string,
  newerId: string,
  reason: string,
): Promise<boolean> {
  return ctx.op('linkConflict', () => {
    validateAgentId(agentId);
    validateId(olderId, 'olderId');
    validateId(newerId, 'newerId');
    if (olderId === newerId) throw invalidInput('a memory cannot conflict with itself');
    if (typeof reason !== 'string' || !CONFLICT_REASONS.has(reason)) {
      throw invalidInput('reason must be number, negation or entity');
    }
    const now = ctx.now();
    return ctx.tx(() => {
      for (const id of [olderId, newerId]) {
        if (selectRow(ctx, agentId, id) === undefined) {
          throw new EngramStoreError('ENGRAM_STORE_NOT_FOUND', 'no memory with this id for this agent');
        }
      }
      const info = ctx
        .stmt(
          'write',
          `INSERT INTO memory_links(agent_id, older_id, newer_id, kind, state, reason, created_at)
           VALUES (?, ?, ?, 'conflict', 'open', ?, ?) ON CONFLICT DO NOTHING`,
        )
        .run(agentId, olderId, newerId, reason, now);
      if (info.changes === 0) return false;
      linksChanged(ctx);
      for (const [memoryId, relatedId] of [
        [olderId, newerId],
        [newerId, olderId],
      ] as const) {
        recordHistory(ctx, { agentId, memoryId, action: 'conflictLinked', at: now, reason, relatedId });
      }
      return true;
    });
  });
}

/** The agent's conflict links (touching `ids` when given), oldest first. */
export function listConflicts(
  ctx: StoreContext,
  agentId: string,
  options: { readonly ids?: readonly string[]; readonly state?: ConflictState; readonly limit?: number } = {},
): Promise<readonly ConflictLink[]> {
  return ctx.op('listConflicts', () => {
    validateAgentId(agentId);
    if (typeof options !== 'object' || options === null) throw invalidInput('options must be an object');
    let ids: string | null = null;
    if (options.ids !== undefined) {
      if (!Array.isArray(options.ids) || options.ids.length > 10_000) {
        throw invalidInput('ids must be an array of at most 10,000 ids');
      }
      ids = JSON.stringify(options.ids.map((id) => validateId(id, 'ids entry')));
    }
    if (options.state !== undefined && !CONFLICT_STATES.has(options.state)) {
      throw invalidInput('state is not a conflict state');
    }
    const limit = validateLimit(options.limit, 'limit', 10_000, 1000);
    // Open links are what a search asks for after each answer with facts: an agent known to have none reads
    // nothing (see `open-links.ts`).
    if (options.state === 'open' && !mayHaveOpenLinks(ctx, agentId)) return [];
    return ctx
      .stmt(
        'read',
        `SELECT older_id, newer_id, state, reason, created_at, resolved_at FROM memory_links
         WHERE agent_id = @agent AND (@state IS NULL OR state = @state)
           AND (@ids IS NULL OR older_id IN (SELECT value FROM json_each(@ids))
             OR newer_id IN (SELECT value FROM json_each(@ids)))
         ORDER BY created_at, older_id, newer_id LIMIT @limit`,
      )
      .all<LinkRow>({ agent: agentId, state: options.state ?? null, ids, limit })
      .map(toLink);
  });
}

/** Settles an open link: supersede one side by the other, or dismiss it (both stay current). */
export function resolveConflict(
  ctx: StoreContext,
  agentId: string,
  olderId: string,
  newerId: string,
  resolution: ConflictResolution,
): Promise<ConflictLink> {
  return ctx.op('resolveConflict', () => {
    validateAgentId(agentId);
    validateId(olderId, 'olderId');
    validateId(newerId, 'newerId');
    if (typeof resolution !== 'object' || resolution === null)
      throw invalidInput('resolution must be an object');
    if (resolution.outcome !== 'supersede' && resolution.outcome !== 'dismiss') {
      throw invalidInput('resolution.outcome must be supersede or dismiss');
    }
    const keepId = resolution.outcome === 'supersede' ? (resolution.keepId ?? newerId) : null;
    if (keepId !== null && keepId !== olderId && keepId !== newerId) {
      throw invalidInput('resolution.keepId must be one side of the link');
    }
    const who = forgetOptions({
      ...(resolution.actor === undefined ? {} : { actor: resolution.actor }),
      ...(resolution.reason === undefined ? {} : { reason: resolution.reason }),
    });
    const now = ctx.now();
    return ctx.tx(() => {
      const link = ctx
        .stmt(
          'read',
          `SELECT older_id, newer_id, state, reason, created_at, resolved_at FROM memory_links
           WHERE agent_id = ? AND older_id = ? AND newer_id = ? AND kind = 'conflict'`,
        )
        .get<LinkRow>(agentId, olderId, newerId);
      if (link === undefined) {
        throw new EngramStoreError('ENGRAM_STORE_NOT_FOUND', 'no conflict link between these memories');
      }
      if (link.state !== 'open') {
        throw new EngramStoreError('ENGRAM_STORE_REVISION_CONFLICT', 'the conflict is already settled');
      }
      const state: ConflictState = keepId === null ? 'dismissed' : 'resolved';
      if (keepId !== null) {
        const retireId = keepId === olderId ? newerId : olderId;
        const row = rowForWrite(ctx, agentId, retireId, undefined);
        if (row.lifecycle === 'active') {
          ctx
            .stmt(
              'write',
              `UPDATE memories SET lifecycle = 'superseded', superseded_by = ?, valid_to = coalesce(valid_to, ?),
                 revision = revision + 1, updated_at = ? WHERE rid = ?`,
            )
            .run(keepId, now, now, row.rid);
          recordHistory(ctx, {
            agentId,
            memoryId: retireId,
            action: 'superseded',
            at: now,
            revision: row.revision + 1,
            actor: who.actor,
            reason: who.reason,
            relatedId: keepId,
          });
        }
      }
      linksChanged(ctx);
      ctx
        .stmt(
          'write',
          `UPDATE memory_links SET state = ?, resolved_at = ? WHERE agent_id = ? AND older_id = ? AND newer_id = ?`,
        )
        .run(state, now, agentId, olderId, newerId);
      for (const [memoryId, relatedId] of [
        [olderId, newerId],
        [newerId, olderId],
      ] as const) {
        recordHistory(ctx, {
          agentId,
          memoryId,
          action: 'conflictResolved',
          at: now,
          actor: who.actor,
          reason: who.reason ?? state,
          relatedId,
        });
      }
      return toLink({ ...link, state, resolved_at: now });
    });
  });
}
