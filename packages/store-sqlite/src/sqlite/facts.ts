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
  EngramStoreError,
  factsRules,
  forgetOptions,
  lifecycleRules,
  validateAgentId,
  writableByUser,
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
  recordHistory(
    ctx,
    factsRules.forgottenEntry(
      { agentId: row.agent_id, id: row.id, revision: row.revision, userId: row.user_id },
      who,
      now,
    ),
  );
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

/**
 * Forgets a memory and its superseded predecessors (one transaction); with `options.forUser`, another user's
 * memory is not found and another user's versions stay.
 */
export function forgetMemory(
  ctx: StoreContext,
  agentId: string,
  id: string,
  options?: ForgetOptions & UserScope,
): Promise<ForgetResult> {
  return ctx.op('forgetMemory', () => {
    const who = factsRules.validateForgetArgs(agentId, id, options);
    const forUser = factsRules.forgetUser(options);
    const now = ctx.now();
    return ctx.tx(() => {
      const row = selectRow(ctx, agentId, id);
      if (row === undefined || row.forgotten_at !== null || !writableByUser(row.user_id, forUser)) {
        throw new EngramStoreError('ENGRAM_STORE_NOT_FOUND', 'no memory with this id for this agent');
      }
      const forgotten: string[] = [];
      for (const memoryId of factsRules.forgetScope(supersedeChain(ctx, agentId, id), id)) {
        const r = selectRow(ctx, agentId, memoryId);
        if (r === undefined || r.forgotten_at !== null || !writableByUser(r.user_id, forUser)) continue;
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
    const userId = factsRules.deleteAllUser(options);
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

/** Links two of the agent's facts as contradicting; false when already linked. */
export function linkConflict(
  ctx: StoreContext,
  agentId: string,
  olderId: string,
  newerId: string,
  reason: string,
): Promise<boolean> {
  return ctx.op('linkConflict', () => {
    factsRules.validateLinkArgs(agentId, olderId, newerId, reason);
    const now = ctx.now();
    return ctx.tx(() => {
      const [older, newer] = [olderId, newerId].map((id) => {
        const row = selectRow(ctx, agentId, id);
        if (row === undefined) {
          throw new EngramStoreError('ENGRAM_STORE_NOT_FOUND', 'no memory with this id for this agent');
        }
        return row;
      });
      const info = ctx
        .stmt(
          'write',
          `INSERT INTO memory_links(agent_id, older_id, newer_id, kind, state, reason, created_at)
           VALUES (?, ?, ?, 'conflict', 'open', ?, ?) ON CONFLICT DO NOTHING`,
        )
        .run(agentId, olderId, newerId, reason, now);
      if (info.changes === 0) return false;
      linksChanged(ctx);
      const users = { older: older?.user_id, newer: newer?.user_id };
      for (const e of factsRules.conflictLinkedEntries(agentId, olderId, newerId, reason, now, users))
        recordHistory(ctx, e);
      return true;
    });
  });
}

/** A link side (`column`) that the call's user (`@forUser`) sees: the agent's own memory or the user's. */
function seenByUser(column: 'older_id' | 'newer_id'): string {
  return `EXISTS (SELECT 1 FROM memories m WHERE m.agent_id = @agent AND m.id = ${column}
    AND (m.user_id IS NULL OR m.user_id = @forUser))`;
}

/** The agent's conflict links (touching `ids` when given; with `forUser`, those it sees), oldest first. */
export function listConflicts(
  ctx: StoreContext,
  agentId: string,
  options: {
    readonly ids?: readonly string[];
    readonly state?: ConflictState;
    readonly limit?: number;
  } & UserScope = {},
): Promise<readonly ConflictLink[]> {
  return ctx.op('listConflicts', () => {
    const { ids, state, limit, forUser } = factsRules.validateListConflictsArgs(agentId, options);
    // Open links are what a search asks for after each answer with facts: an agent known to have none reads
    // nothing (see `open-links.ts`).
    if (state === 'open' && !mayHaveOpenLinks(ctx, agentId)) return [];
    return ctx
      .stmt(
        'read',
        `SELECT ${factsRules.CONFLICT_LINK_COLUMNS} FROM memory_links
         WHERE agent_id = @agent AND (@state IS NULL OR state = @state)
           AND (@ids IS NULL OR older_id IN (SELECT value FROM json_each(@ids))
             OR newer_id IN (SELECT value FROM json_each(@ids)))
           ${forUser === null ? '' : `AND ${seenByUser('older_id')} AND ${seenByUser('newer_id')}`}
         ORDER BY created_at, older_id, newer_id LIMIT @limit`,
      )
      .all<factsRules.ConflictRow>({
        agent: agentId,
        state,
        ids: ids === null ? null : JSON.stringify(ids),
        limit,
        ...(forUser === null ? {} : { forUser }),
      })
      .map(factsRules.conflictLink);
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
    const { keepId, who } = factsRules.validateResolveArgs(agentId, olderId, newerId, resolution);
    const now = ctx.now();
    return ctx.tx(() => {
      const link = ctx
        .stmt(
          'read',
          `SELECT ${factsRules.CONFLICT_LINK_COLUMNS} FROM memory_links
           WHERE agent_id = ? AND older_id = ? AND newer_id = ? AND kind = 'conflict'`,
        )
        .get<factsRules.ConflictRow>(agentId, olderId, newerId);
      const { state, retireId, settled } = factsRules.settleConflict(link, keepId, now);
      if (keepId !== null && retireId !== null) {
        const row = rowForWrite(ctx, agentId, retireId, undefined);
        if (row.lifecycle === 'active') {
          ctx
            .stmt(
              'write',
              `UPDATE memories SET lifecycle = 'superseded', superseded_by = ?, valid_to = coalesce(valid_to, ?),
                 revision = revision + 1, updated_at = ? WHERE rid = ?`,
            )
            .run(keepId, now, now, row.rid);
          recordHistory(
            ctx,
            lifecycleRules.supersededEntry(
              agentId,
              { id: retireId, revision: row.revision + 1, userId: row.user_id },
              keepId,
              now,
              who,
            ),
          );
        }
      }
      linksChanged(ctx);
      ctx
        .stmt(
          'write',
          `UPDATE memory_links SET state = ?, resolved_at = ? WHERE agent_id = ? AND older_id = ? AND newer_id = ?`,
        )
        .run(state, now, agentId, olderId, newerId);
      const users = {
        older: selectRow(ctx, agentId, olderId)?.user_id,
        newer: selectRow(ctx, agentId, newerId)?.user_id,
      };
      for (const e of factsRules.conflictResolvedEntries(agentId, olderId, newerId, who, state, now, users))
        recordHistory(ctx, e);
      return settled;
    });
  });
}
