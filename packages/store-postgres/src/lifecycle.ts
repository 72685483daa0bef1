/**
 * The lifecycle slice: archive, supersede, merge and the general compare-and-set lifecycle move. Derived rows
 * stay in place; search filters on the lifecycle. Every move records its history as the SQLite store does.
 */

import type {
  Lifecycle,
  MemoryRecord,
  MergeSource,
  NewMemory,
  SupersedeOptions,
  UserScope,
} from '@engram/store';
import { checkWriteScope, invalidInput, lifecycleRules } from '@engram/store/port-kit';
import type { PgContext } from './context.js';
import { recordHistory } from './history.js';
import { casLifecycle, insertPrepared, rowForWrite } from './write.js';

/** Archives a row (compare-and-set when `expectedRevision` is given). */
export function archiveMemory(
  ctx: PgContext,
  agentId: string,
  id: string,
  expectedRevision?: number,
  scope?: UserScope,
): Promise<MemoryRecord> {
  return ctx.op('archiveMemory', async () => {
    const forUser = lifecycleRules.validateArchiveArgs(agentId, id, expectedRevision, scope);
    const now = ctx.now();
    return ctx.tx(async (db) => {
      const row = await rowForWrite(ctx, db, agentId, id, expectedRevision, forUser);
      return casLifecycle(ctx, db, row, 'archived', row.superseded_by, now);
    });
  });
}

/**
 * Marks the old row `superseded` and inserts the replacement, in one transaction; `supersededBy` names the
 * replacement, or the active exact duplicate of it that was already stored (then nothing new is inserted).
 */
export function supersedeMemory(
  ctx: PgContext,
  agentId: string,
  oldId: string,
  expectedRevision: number,
  replacement: NewMemory,
  options?: SupersedeOptions,
): Promise<{ readonly superseded: MemoryRecord; readonly replacement: MemoryRecord }> {
  return ctx.op('supersedeMemory', async () => {
    const prepared = lifecycleRules.validateSupersedeArgs(ctx, agentId, oldId, expectedRevision, replacement);
    const forUser = checkWriteScope(options, prepared.userId, 'replacement');
    const who = lifecycleRules.supersedeRetirer(options);
    const now = ctx.now();
    return ctx.tx(async (db) => {
      const row = await rowForWrite(ctx, db, agentId, oldId, expectedRevision, forUser);
      // The old row leaves `active` first, so a replacement with its very content is not its duplicate.
      const id = prepared.id ?? lifecycleRules.generatedMemoryId(ctx.idFactory);
      let superseded = await casLifecycle(ctx, db, row, 'superseded', id, now);
      const [inserted] = await insertPrepared(ctx, db, [{ ...prepared, id }], now);
      if (inserted === undefined) throw invalidInput('replacement');
      if (!inserted.created) {
        // The replacement was already stored as another active row: that row is the successor.
        await ctx.run(db, 'write', 'UPDATE memories SET superseded_by = $1 WHERE rid = $2', [
          inserted.record.id,
          row.rid,
        ]);
        superseded = { ...superseded, supersededBy: inserted.record.id };
      }
      await recordHistory(
        ctx,
        db,
        lifecycleRules.supersededEntry(agentId, superseded, inserted.record.id, now, who),
      );
      return { superseded, replacement: inserted.record };
    });
  });
}

/** Compare-and-set lifecycle move. */
export function setLifecycle(
  ctx: PgContext,
  agentId: string,
  id: string,
  expectedRevision: number,
  lifecycle: Lifecycle,
  scope?: UserScope,
): Promise<MemoryRecord> {
  return ctx.op('setLifecycle', async () => {
    const forUser = lifecycleRules.validateLifecycleMoveArgs(agentId, id, expectedRevision, lifecycle, scope);
    const now = ctx.now();
    return ctx.tx(async (db) => {
      const row = await rowForWrite(ctx, db, agentId, id, expectedRevision, forUser);
      return casLifecycle(ctx, db, row, lifecycle, row.superseded_by, now);
    });
  });
}

/** Inserts the merged row and supersedes every source by it, compare-and-set on each, in one transaction. */
export function mergeMemories(
  ctx: PgContext,
  agentId: string,
  sources: readonly MergeSource[],
  merged: NewMemory,
  scope?: UserScope,
): Promise<{ readonly superseded: readonly MemoryRecord[]; readonly merged: MemoryRecord }> {
  return ctx.op('mergeMemories', async () => {
    const prepared = lifecycleRules.validateMergeArgs(ctx, agentId, sources, merged);
    const forUser = checkWriteScope(scope, prepared.userId, 'merged');
    const now = ctx.now();
    return ctx.tx(async (db) => {
      const rows = [];
      for (const s of sources) {
        rows.push(await rowForWrite(ctx, db, agentId, s.id, s.expectedRevision, forUser));
      }
      // The sources leave `active` first, so a merged text equal to one of them is not its duplicate.
      const id = prepared.id ?? lifecycleRules.generatedMemoryId(ctx.idFactory);
      let superseded: MemoryRecord[] = [];
      for (const row of rows) superseded.push(await casLifecycle(ctx, db, row, 'superseded', id, now));
      const [inserted] = await insertPrepared(ctx, db, [{ ...prepared, id }], now);
      if (inserted === undefined) throw invalidInput('merged');
      const successor = inserted.record.id;
      if (!inserted.created) {
        // The merged text was already stored as another active row: that row is the successor.
        await ctx.run(db, 'write', 'UPDATE memories SET superseded_by = $1 WHERE rid = ANY($2::bigint[])', [
          successor,
          rows.map((r) => r.rid),
        ]);
        superseded = superseded.map((r) => ({ ...r, supersededBy: successor }));
      }
      for (const done of superseded)
        await recordHistory(ctx, db, lifecycleRules.supersededEntry(agentId, done, successor, now));
      return { superseded, merged: inserted.record };
    });
  });
}
