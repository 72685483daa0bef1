/**
 * The facts slice: forgetting (with tombstones), deleting an agent's memories, and contradiction links, with
 * the SQLite store's semantics. Forgetting follows the store's forget setting (`ctx.forgetMode`): `erase` removes
 * the rows (their derived rows go by cascade) and the text their history kept, leaving a tombstone; `keep`
 * archives the rows, marked forgotten.
 */

import {
  type ConflictLink,
  type ConflictResolution,
  type ConflictState,
  type DeleteAllOptions,
  type DeleteAllResult,
  EngramStoreError,
  type ForgetOptions,
  type ForgetResult,
  type UserScope,
} from '@engram/store';
import {
  factsRules,
  forgetOptions,
  lifecycleRules,
  validateAgentId,
  writableByUser,
} from '@engram/store/port-kit';
import type { PgContext, Queryable } from './context.js';
import { eraseHistoryContent, recordHistory, selectRow, supersedeChain } from './history.js';
import { MEMORY_COLUMNS, type MemoryRow } from './rows.js';
import { rowForWrite } from './write.js';

/** Forgets one row as the setting says, with its tombstone; inside the caller's transaction. */
async function forgetRow(
  ctx: PgContext,
  db: Queryable,
  row: MemoryRow,
  who: { actor: string; reason: string | null },
  now: number,
): Promise<void> {
  const forgotten = {
    agentId: row.agent_id,
    id: row.id,
    revision: Number(row.revision),
    userId: row.user_id,
  };
  await recordHistory(ctx, db, factsRules.forgottenEntry(forgotten, who, now));
  if (ctx.forgetMode === 'erase') {
    await ctx.run(db, 'write', 'DELETE FROM memories WHERE rid = $1', [row.rid]);
    return;
  }
  await ctx.run(
    db,
    'write',
    `UPDATE memories SET lifecycle = 'archived', forgotten_at = $1, valid_to = coalesce(valid_to, $1),
       revision = revision + 1, updated_at = $1 WHERE rid = $2`,
    [now, row.rid],
  );
}

/** Marks the open conflict links of forgotten memories dismissed. */
async function closeLinks(
  ctx: PgContext,
  db: Queryable,
  agentId: string,
  ids: readonly string[],
  now: number,
): Promise<void> {
  await ctx.run(
    db,
    'write',
    `UPDATE memory_links SET state = 'dismissed', resolved_at = $1
     WHERE agent_id = $2 AND state = 'open' AND (older_id = ANY($3::text[]) OR newer_id = ANY($3::text[]))`,
    [now, agentId, ids],
  );
}

/**
 * Forgets a memory and its superseded predecessors (one transaction); with `options.forUser`, another user's
 * memory is not found and another user's versions stay.
 */
export function forgetMemory(
  ctx: PgContext,
  agentId: string,
  id: string,
  options?: ForgetOptions & UserScope,
): Promise<ForgetResult> {
  return ctx.op('forgetMemory', async () => {
    const who = factsRules.validateForgetArgs(agentId, id, options);
    const forUser = factsRules.forgetUser(options);
    const now = ctx.now();
    return ctx.tx(async (db) => {
      const row = await selectRow(ctx, db, agentId, id);
      if (row === undefined || row.forgotten_at !== null || !writableByUser(row.user_id, forUser)) {
        throw new EngramStoreError('ENGRAM_STORE_NOT_FOUND', 'no memory with this id for this agent');
      }
      const forgotten: string[] = [];
      for (const memoryId of factsRules.forgetScope(await supersedeChain(ctx, db, agentId, id), id)) {
        const rows = await ctx.q<MemoryRow>(
          db,
          'read',
          `SELECT ${MEMORY_COLUMNS} FROM memories WHERE id = $1 AND agent_id = $2 FOR UPDATE`,
          [memoryId, agentId],
        );
        const r = rows[0];
        if (r === undefined || r.forgotten_at !== null || !writableByUser(r.user_id, forUser)) continue;
        await forgetRow(ctx, db, r, who, now);
        forgotten.push(memoryId);
      }
      if (ctx.forgetMode === 'erase') await eraseHistoryContent(ctx, db, agentId, forgotten);
      await closeLinks(ctx, db, agentId, forgotten, now);
      return { forgotten, mode: ctx.forgetMode };
    });
  });
}

/**
 * Forgets every memory of an agent; in `erase` mode also its events, cursors and skills (one transaction). With
 * `options.userId`, only that user's memories and events (see {@link deleteUserAll}).
 */
export function deleteAll(
  ctx: PgContext,
  agentId: string,
  options?: DeleteAllOptions,
): Promise<DeleteAllResult> {
  return ctx.op('deleteAll', async () => {
    validateAgentId(agentId);
    const who = forgetOptions(options);
    const userId = factsRules.deleteAllUser(options);
    const now = ctx.now();
    if (userId !== null) return ctx.tx((db) => deleteUserAll(ctx, db, agentId, userId, who, now));
    return ctx.tx(async (db) => {
      const rows = await ctx.q<MemoryRow>(
        db,
        'read',
        `SELECT ${MEMORY_COLUMNS} FROM memories WHERE agent_id = $1 AND forgotten_at IS NULL ORDER BY rid FOR UPDATE`,
        [agentId],
      );
      for (const row of rows) await forgetRow(ctx, db, row, who, now);
      let events = 0;
      let skills = 0;
      if (ctx.forgetMode === 'erase') {
        await ctx.run(db, 'write', 'UPDATE memory_history SET content = NULL WHERE agent_id = $1', [agentId]);
        await ctx.run(db, 'write', 'DELETE FROM memory_links WHERE agent_id = $1', [agentId]);
        events = await ctx.run(db, 'write', 'DELETE FROM events WHERE agent_id = $1', [agentId]);
        await ctx.run(db, 'write', 'DELETE FROM session_cursors WHERE agent_id = $1', [agentId]);
        skills = await ctx.run(db, 'write', 'DELETE FROM skills WHERE agent_id = $1', [agentId]);
      } else {
        await closeLinks(
          ctx,
          db,
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
async function deleteUserAll(
  ctx: PgContext,
  db: Queryable,
  agentId: string,
  userId: string,
  who: { actor: string; reason: string | null },
  now: number,
): Promise<DeleteAllResult> {
  const rows = await ctx.q<MemoryRow>(
    db,
    'read',
    `SELECT ${MEMORY_COLUMNS} FROM memories WHERE agent_id = $1 AND user_id = $2 AND forgotten_at IS NULL
     ORDER BY rid FOR UPDATE`,
    [agentId, userId],
  );
  for (const row of rows) await forgetRow(ctx, db, row, who, now);
  const ids = rows.map((r) => r.id);
  let events = 0;
  if (ctx.forgetMode === 'erase') {
    await eraseHistoryContent(ctx, db, agentId, ids);
    events = await ctx.run(db, 'write', 'DELETE FROM events WHERE agent_id = $1 AND user_id = $2', [
      agentId,
      userId,
    ]);
  }
  await closeLinks(ctx, db, agentId, ids, now);
  return { memories: rows.length, events, skills: 0, mode: ctx.forgetMode };
}

/** Links two of the agent's facts as contradicting; false when already linked. */
export function linkConflict(
  ctx: PgContext,
  agentId: string,
  olderId: string,
  newerId: string,
  reason: string,
): Promise<boolean> {
  return ctx.op('linkConflict', async () => {
    factsRules.validateLinkArgs(agentId, olderId, newerId, reason);
    const now = ctx.now();
    return ctx.tx(async (db) => {
      const sides: MemoryRow[] = [];
      for (const id of [olderId, newerId]) {
        const row = await selectRow(ctx, db, agentId, id);
        if (row === undefined) {
          throw new EngramStoreError('ENGRAM_STORE_NOT_FOUND', 'no memory with this id for this agent');
        }
        sides.push(row);
      }
      const n = await ctx.run(
        db,
        'write',
        `INSERT INTO memory_links(agent_id, older_id, newer_id, kind, state, reason, created_at)
         VALUES ($1, $2, $3, 'conflict', 'open', $4, $5) ON CONFLICT DO NOTHING`,
        [agentId, olderId, newerId, reason, now],
      );
      if (n === 0) return false;
      const users = { older: sides[0]?.user_id, newer: sides[1]?.user_id };
      for (const e of factsRules.conflictLinkedEntries(agentId, olderId, newerId, reason, now, users)) {
        await recordHistory(ctx, db, e);
      }
      return true;
    });
  });
}

/** The agent's conflict links (touching `ids` when given), oldest first. */
export function listConflicts(
  ctx: PgContext,
  agentId: string,
  options: {
    readonly ids?: readonly string[];
    readonly state?: ConflictState;
    readonly limit?: number;
  } & UserScope = {},
): Promise<readonly ConflictLink[]> {
  return ctx.op('listConflicts', async () => {
    const { ids, state, limit, forUser } = factsRules.validateListConflictsArgs(agentId, options);
    // With a user, only the links whose two sides the user sees (the agent's own memories and the user's).
    const seen = (column: string) =>
      `EXISTS (SELECT 1 FROM memories m WHERE m.agent_id = $1 AND m.id = ${column}
         AND (m.user_id IS NULL OR m.user_id = $5))`;
    const rows = await ctx.q<factsRules.ConflictRow>(
      ctx.pool,
      'read',
      `SELECT ${factsRules.CONFLICT_LINK_COLUMNS} FROM memory_links
       WHERE agent_id = $1 AND ($2::text IS NULL OR state = $2)
         AND ($3::text[] IS NULL OR older_id = ANY($3::text[]) OR newer_id = ANY($3::text[]))
         AND ($5::text IS NULL OR (${seen('older_id')} AND ${seen('newer_id')}))
       ORDER BY created_at, older_id COLLATE "C", newer_id COLLATE "C" LIMIT $4`,
      [agentId, state, ids, limit, forUser],
    );
    return rows.map(factsRules.conflictLink);
  });
}

/** Settles an open link: supersede one side by the other, or dismiss it (both stay current). */
export function resolveConflict(
  ctx: PgContext,
  agentId: string,
  olderId: string,
  newerId: string,
  resolution: ConflictResolution,
): Promise<ConflictLink> {
  return ctx.op('resolveConflict', async () => {
    const { keepId, who } = factsRules.validateResolveArgs(agentId, olderId, newerId, resolution);
    const now = ctx.now();
    return ctx.tx(async (db) => {
      const links = await ctx.q<factsRules.ConflictRow>(
        db,
        'read',
        `SELECT ${factsRules.CONFLICT_LINK_COLUMNS} FROM memory_links
         WHERE agent_id = $1 AND older_id = $2 AND newer_id = $3 AND kind = 'conflict' FOR UPDATE`,
        [agentId, olderId, newerId],
      );
      const { state, retireId, settled } = factsRules.settleConflict(links[0], keepId, now);
      if (keepId !== null && retireId !== null) {
        const row = await rowForWrite(ctx, db, agentId, retireId, undefined);
        if (row.lifecycle === 'active') {
          await ctx.run(
            db,
            'write',
            `UPDATE memories SET lifecycle = 'superseded', superseded_by = $1, valid_to = coalesce(valid_to, $2),
               revision = revision + 1, updated_at = $2 WHERE rid = $3`,
            [keepId, now, row.rid],
          );
          const retired = { id: retireId, revision: Number(row.revision) + 1, userId: row.user_id };
          await recordHistory(ctx, db, lifecycleRules.supersededEntry(agentId, retired, keepId, now, who));
        }
      }
      await ctx.run(
        db,
        'write',
        `UPDATE memory_links SET state = $1, resolved_at = $2 WHERE agent_id = $3 AND older_id = $4 AND newer_id = $5`,
        [state, now, agentId, olderId, newerId],
      );
      const users = {
        older: (await selectRow(ctx, db, agentId, olderId))?.user_id,
        newer: (await selectRow(ctx, db, agentId, newerId))?.user_id,
      };
      for (const e of factsRules.conflictResolvedEntries(agentId, olderId, newerId, who, state, now, users)) {
        await recordHistory(ctx, db, e);
      }
      return settled;
    });
  });
}
