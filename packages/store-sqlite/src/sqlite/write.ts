/**
 * The write slice: inserts, the compare-and-set update, access counts and deletes. Every write validates first,
 * runs in one transaction, and keeps the derived rows (FTS, vector, tags) in step. An insert whose exact
 * duplicate is already active stores nothing and gives the existing row back (see `insertPrepared`).
 */

import { contentHash, hasCjk } from '@engram/contracts';
import type { InsertedMemory, MemoryPatch, MemoryRecord, NewMemory, UserScope } from '@engram/store/port-kit';
import {
  callRules,
  checkUserScope,
  chunkSpans,
  EngramStoreError,
  likeText,
  validateAgentId,
  validateId,
  writableByUser,
} from '@engram/store/port-kit';
import { indexContent, unindexContent } from './chunks.js';
import type { StoreContext } from './context.js';
import { recordHistory } from './history.js';
import {
  assertNoActiveDuplicate,
  insertPrepared,
  insertPreparedBatch,
  prepareInsert,
  rowForWrite,
  selectRow,
} from './memory-rows.js';
import { deleteTags, writeTags } from './mirrors.js';
import { type MemoryRow, toRecord } from './rows.js';

/** Inserts one memory (row, tags, FTS mirror and optional vector in one transaction), or finds its duplicate. */
export function insertUniqueMemory(ctx: StoreContext, input: NewMemory): Promise<InsertedMemory> {
  return ctx.op('insertMemory', () => {
    const prepared = prepareInsert(ctx, input, 'memory');
    const now = ctx.now();
    return ctx.tx(() => insertPrepared(ctx, prepared, now));
  });
}

/** Inserts several memories, all or nothing. */
export function insertMemories(
  ctx: StoreContext,
  inputs: readonly NewMemory[],
): Promise<readonly MemoryRecord[]> {
  return ctx.op('insertMemories', () => {
    const prepared = callRules.prepareInsertBatch(ctx, inputs);
    if (prepared.length === 0) return [];
    const now = ctx.now();
    return ctx.tx(() => insertPreparedBatch(ctx, prepared, now).map((r) => r.record));
  });
}

/**
 * Compare-and-set update. A content change bumps the hash, replaces the FTS rows, drops the vector and
 * resets the row to `pending`. `event` rows only take tag, importance, confidence and lifecycle changes.
 */
export function updateMemory(
  ctx: StoreContext,
  agentId: string,
  id: string,
  expectedRevision: number,
  patch: MemoryPatch,
  scope?: UserScope,
): Promise<MemoryRecord> {
  return ctx.op('updateMemory', () => {
    const p = callRules.validateUpdateArgs(ctx, agentId, id, expectedRevision, patch);
    const forUser = checkUserScope(scope);
    const now = ctx.now();
    return ctx.tx(() => {
      const row = rowForWrite(ctx, agentId, id, expectedRevision, forUser);
      const contentChanged = callRules.checkEventEdit(row, p);
      const oldTags = toRecord(row).tags;
      const next: MemoryRow = {
        ...row,
        kind: p.kind ?? row.kind,
        importance: p.importance ?? row.importance,
        confidence: p.confidence ?? row.confidence,
        lifecycle: p.lifecycle ?? row.lifecycle,
        tags: p.tags === undefined ? row.tags : JSON.stringify(p.tags),
        metadata: p.metadataJson ?? row.metadata,
        // A lifecycle move closes (superseded) or reopens (active) the fact's validity, as `setLifecycle` does.
        valid_to:
          p.lifecycle === 'superseded'
            ? (row.valid_to ?? now)
            : p.lifecycle === 'active'
              ? null
              : row.valid_to,
        revision: row.revision + 1,
        updated_at: now,
      };
      if (contentChanged && p.content !== undefined) {
        next.content = p.content;
        next.content_hash = contentHash(p.content);
        next.has_cjk = hasCjk(p.content.normalize('NFKC')) ? 1 : 0;
        next.like_text = likeText(p.content);
        next.embedding_state = 'pending';
        next.embedding_fingerprint = null;
        next.embedding_attempts = 0;
        next.chunk_count = chunkSpans(p.content).length;
      }
      const becomesAnother = contentChanged || next.kind !== row.kind || row.lifecycle !== 'active';
      if (next.lifecycle === 'active' && becomesAnother) {
        assertNoActiveDuplicate(ctx, agentId, next.kind, next.content_hash, row.rid, row.user_id);
      }
      const info = ctx
        .stmt(
          'write',
          `UPDATE memories SET kind = @kind, content = @content, content_hash = @hash, importance = @importance,
             confidence = @confidence, tags = @tags, lifecycle = @lifecycle, revision = @revision,
             updated_at = @updatedAt, embedding_state = @state, embedding_fingerprint = @fp,
             embedding_attempts = @attempts, has_cjk = @cjk, like_text = @likeText, chunk_count = @chunks,
             metadata = @metadata, valid_to = @validTo
           WHERE rid = @rid AND revision = @expected`,
        )
        .run({
          kind: next.kind,
          content: next.content,
          hash: next.content_hash,
          importance: next.importance,
          confidence: next.confidence,
          tags: next.tags,
          lifecycle: next.lifecycle,
          revision: next.revision,
          updatedAt: now,
          state: next.embedding_state,
          fp: next.embedding_fingerprint,
          attempts: next.embedding_attempts,
          cjk: next.has_cjk,
          likeText: next.like_text,
          chunks: next.chunk_count,
          metadata: next.metadata,
          validTo: next.valid_to,
          rid: row.rid,
          expected: expectedRevision,
        });
      if (info.changes !== 1) {
        throw new EngramStoreError('ENGRAM_STORE_REVISION_CONFLICT', 'the memory changed meanwhile');
      }
      if (contentChanged) {
        unindexContent(ctx, row.rid, agentId, row.chunk_count, row.has_cjk === 1);
        indexContent(ctx, row.rid, agentId, row.user_id, next.content);
        // The lineage keeps the text this update replaced (erased again if the memory is forgotten).
        recordHistory(ctx, {
          agentId,
          memoryId: id,
          action: 'updated',
          at: now,
          revision: next.revision,
          content: row.content,
          userId: row.user_id,
        });
      }
      if (p.tags !== undefined) {
        const newTags = p.tags;
        const removed = oldTags.filter((t) => !newTags.includes(t));
        const added = newTags.filter((t) => !oldTags.includes(t));
        deleteTags(ctx, row.rid, agentId, removed);
        writeTags(ctx, row.rid, agentId, added);
      }
      return toRecord(next);
    });
  });
}

/** Bumps `lastAccessedAt` and `accessCount` of the agent's rows; the revision is unchanged. */
export function recordAccess(
  ctx: StoreContext,
  agentId: string,
  ids: readonly string[],
  at?: number,
): Promise<void> {
  return ctx.op('recordAccess', () => {
    ctx.assertWritable('recordAccess');
    const when = callRules.validateAccessArgs(agentId, ids, at, ctx.now);
    if (ids.length === 0) return;
    // Access times are advisory: behind another writer the update is refused at once (`ENGRAM_STORE_BUSY`)
    // instead of holding the process for the busy timeout.
    ctx.db.exec('PRAGMA busy_timeout = 0');
    try {
      ctx
        .stmt(
          'write',
          `UPDATE memories SET last_accessed_at = ?, access_count = access_count + 1
         WHERE agent_id = ? AND id IN (SELECT DISTINCT value FROM json_each(?))`,
        )
        .run(when, agentId, JSON.stringify(ids));
    } finally {
      ctx.db.exec(`PRAGMA busy_timeout = ${ctx.busyTimeoutMs}`);
    }
  });
}

/**
 * Deletes the row, its tags, chunk rows, FTS entries and vectors in one transaction; false when it did not exist
 * (or is another user's than `scope.forUser`).
 */
export function deleteMemory(
  ctx: StoreContext,
  agentId: string,
  id: string,
  scope?: UserScope,
): Promise<boolean> {
  return ctx.op('deleteMemory', () => {
    validateAgentId(agentId);
    validateId(id);
    const forUser = checkUserScope(scope);
    return ctx.tx(() => {
      const row = selectRow(ctx, agentId, id);
      if (row === undefined || !writableByUser(row.user_id, forUser)) return false;
      ctx.stmt('write', 'DELETE FROM memories WHERE rid = ?').run(row.rid);
      deleteTags(ctx, row.rid, agentId, toRecord(row).tags);
      unindexContent(ctx, row.rid, agentId, row.chunk_count, row.has_cjk === 1);
      return true;
    });
  });
}
