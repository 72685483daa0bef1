/**
 * The lifecycle slice: archive, supersede and the general compare-and-set lifecycle move. FTS and vector rows
 * stay in place; search filters on `active`.
 */

import type {
  Lifecycle,
  MemoryRecord,
  MergeSource,
  NewMemory,
  SupersedeOptions,
  UserScope,
} from '@engram/store/port-kit';
import { checkWriteScope, lifecycleRules } from '@engram/store/port-kit';
import type { StoreContext } from './context.js';
import { recordHistory } from './history.js';
import { casLifecycle, insertPrepared, newId, rowForWrite } from './memory-rows.js';

/** Archives a row (compare-and-set when `expectedRevision` is given); FTS and vector rows stay (search filters). */
export function archiveMemory(
  ctx: StoreContext,
  agentId: string,
  id: string,
  expectedRevision?: number,
  scope?: UserScope,
): Promise<MemoryRecord> {
  return ctx.op('archiveMemory', () => {
    const forUser = lifecycleRules.validateArchiveArgs(agentId, id, expectedRevision, scope);
    const now = ctx.now();
    return ctx.tx(() => {
      const row = rowForWrite(ctx, agentId, id, expectedRevision, forUser);
      return casLifecycle(ctx, row, 'archived', row.superseded_by, now);
    });
  });
}

/**
 * Marks the old row `superseded` and inserts the replacement, in one transaction; `supersededBy` names the
 * replacement, or the active exact duplicate of it that was already stored (then nothing new is inserted).
 */
export function supersedeMemory(
  ctx: StoreContext,
  agentId: string,
  oldId: string,
  expectedRevision: number,
  replacement: NewMemory,
  options?: SupersedeOptions,
): Promise<{ readonly superseded: MemoryRecord; readonly replacement: MemoryRecord }> {
  return ctx.op('supersedeMemory', () => {
    const prepared = lifecycleRules.validateSupersedeArgs(ctx, agentId, oldId, expectedRevision, replacement);
    const forUser = checkWriteScope(options, prepared.userId, 'replacement');
    const who = lifecycleRules.supersedeRetirer(options);
    const now = ctx.now();
    return ctx.tx(() => {
      const row = rowForWrite(ctx, agentId, oldId, expectedRevision, forUser);
      // The old row leaves `active` first, so a replacement with its very content is not its duplicate.
      const id = prepared.id ?? newId(ctx);
      let superseded = casLifecycle(ctx, row, 'superseded', id, now);
      const inserted = insertPrepared(ctx, { ...prepared, id }, now);
      if (!inserted.created) {
        // The replacement was already stored as another active row: that row is the successor.
        ctx
          .stmt('write', 'UPDATE memories SET superseded_by = ? WHERE rid = ?')
          .run(inserted.record.id, row.rid);
        superseded = { ...superseded, supersededBy: inserted.record.id };
      }
      recordHistory(ctx, lifecycleRules.supersededEntry(agentId, superseded, inserted.record.id, now, who));
      return { superseded, replacement: inserted.record };
    });
  });
}

/** Compare-and-set lifecycle move. */
export function setLifecycle(
  ctx: StoreContext,
  agentId: string,
  id: string,
  expectedRevision: number,
  lifecycle: Lifecycle,
  scope?: UserScope,
): Promise<MemoryRecord> {
  return ctx.op('setLifecycle', () => {
    const forUser = lifecycleRules.validateLifecycleMoveArgs(agentId, id, expectedRevision, lifecycle, scope);
    const now = ctx.now();
    return ctx.tx(() => {
      const row = rowForWrite(ctx, agentId, id, expectedRevision, forUser);
      return casLifecycle(ctx, row, lifecycle, row.superseded_by, now);
    });
  });
}

/** Inserts the merged row and supersedes every source by it, compare-and-set on each, in one transaction. */
export function mergeMemories(
  ctx: StoreContext,
  agentId: string,
  sources: readonly MergeSource[],
  merged: NewMemory,
  scope?: UserScope,
): Promise<{ readonly superseded: readonly MemoryRecord[]; readonly merged: MemoryRecord }> {
  return ctx.op('mergeMemories', () => {
    const prepared = lifecycleRules.validateMergeArgs(ctx, agentId, sources, merged);
    const forUser = checkWriteScope(scope, prepared.userId, 'merged');
    const now = ctx.now();
    return ctx.tx(() => {
      const rows = sources.map((s) => rowForWrite(ctx, agentId, s.id, s.expectedRevision, forUser));
      // The sources leave `active` first, so a merged text equal to one of them is not its duplicate.
      const id = prepared.id ?? newId(ctx);
      let superseded = rows.map((row) => casLifecycle(ctx, row, 'superseded', id, now));
      const inserted = insertPrepared(ctx, { ...prepared, id }, now);
      const successor = inserted.record.id;
      if (!inserted.created) {
        // The merged text was already stored as another active row: that row is the successor.
        const relink = ctx.stmt('write', 'UPDATE memories SET superseded_by = ? WHERE rid = ?');
        for (const row of rows) relink.run(successor, row.rid);
        superseded = superseded.map((r) => ({ ...r, supersededBy: successor }));
      }
      for (const done of superseded)
        recordHistory(ctx, lifecycleRules.supersededEntry(agentId, done, successor, now));
      return { superseded, merged: inserted.record };
    });
  });
}
