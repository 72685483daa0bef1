/**
 * The lifecycle slice: archive, supersede and the general compare-and-set lifecycle move. FTS and vector rows
 * stay in place; search filters on `active`.
 */
import { invalidInput } from '../errors.js';
import type { Lifecycle, MemoryRecord, NewMemory } from '../types.js';
import { validateAgentId, validateId, validateInteger, validateLifecycle } from '../validate.js';
import type { StoreContext } from './context.js';
import { casLifecycle, insertPrepared, newId, prepareInsert, rowForWrite } from './memory-rows.js';

/** Archives a row (compare-and-set when `expectedRevision` is given); FTS and vector rows stay (search filters). */
export function archiveMemory(
  ctx: StoreContext,
  agentId: string,
  id: string,
  expectedRevision?: number,
): Promise<MemoryRecord> {
  return ctx.op('archiveMemory', () => {
    validateAgentId(agentId);
    validateId(id);
    if (expectedRevision !== undefined) validateInteger(expectedRevision, 'expectedRevision', 1);
    const now = ctx.now();
    return ctx.tx(() => {
      const row = rowForWrite(ctx, agentId, id, expectedRevision);
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
): Promise<{ readonly superseded: MemoryRecord; readonly replacement: MemoryRecord }> {
  return ctx.op('supersedeMemory', () => {
    validateAgentId(agentId);
    validateId(oldId, 'oldId');
    validateInteger(expectedRevision, 'expectedRevision', 1);
    const prepared = prepareInsert(ctx, replacement, 'replacement');
    if (prepared.agentId !== agentId) throw invalidInput('replacement.agentId must equal agentId');
    const now = ctx.now();
    return ctx.tx(() => {
      const row = rowForWrite(ctx, agentId, oldId, expectedRevision);
      // The old row leaves `active` first, so a replacement with its very content is not its duplicate.
      const id = prepared.id ?? newId(ctx);
      const superseded = casLifecycle(ctx, row, 'superseded', id, now);
      const inserted = insertPrepared(ctx, { ...prepared, id }, now);
      if (inserted.created) return { superseded, replacement: inserted.record };
      // The replacement was already stored as another active row: that row is the successor.
      ctx
        .stmt('write', 'UPDATE memories SET superseded_by = ? WHERE rid = ?')
        .run(inserted.record.id, row.rid);
      return {
        superseded: { ...superseded, supersededBy: inserted.record.id },
        replacement: inserted.record,
      };
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
): Promise<MemoryRecord> {
  return ctx.op('setLifecycle', () => {
    validateAgentId(agentId);
    validateId(id);
    validateInteger(expectedRevision, 'expectedRevision', 1);
    validateLifecycle(lifecycle);
    const now = ctx.now();
    return ctx.tx(() => {
      const row = rowForWrite(ctx, agentId, id, expectedRevision);
      return casLifecycle(ctx, row, lifecycle, row.superseded_by, now);
    });
  });
}
