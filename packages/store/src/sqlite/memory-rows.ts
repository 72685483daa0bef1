/**
 * Row primitives the write, lifecycle and event slices share: validating and inserting a new memory with its
 * derived rows (or finding the active exact duplicate that makes the insert a no-op), reading a row for a
 * compare-and-set write, and the compare-and-set lifecycle move. The insert and CAS helpers must run inside
 * a transaction.
 */

import { contentHash, hasCjk } from '@engram/contracts';
import { chunkSpans } from '../chunking.js';
import { EngramStoreError } from '../errors.js';
import { ACTIVE_CONTENT_WHERE } from '../schema.js';
import type { EmbeddingState, InsertedMemory, Lifecycle, MemoryRecord, NewMemory } from '../types.js';
import { type PreparedMemory, prepareNewMemory, validateId, validateVector } from '../validate.js';
import { indexContent } from './chunks.js';
import type { StoreContext } from './context.js';
import { writeFts, writeTags, writeVector } from './mirrors.js';
import { type MemoryRow, toRecord } from './rows.js';

/** Validates a new memory (and its vector against the bound profile); `field` names it in errors. */
export function prepareInsert(ctx: StoreContext, input: NewMemory, field: string): PreparedMemory {
  const prepared = prepareNewMemory(input, ctx.limits, field);
  if (prepared.vector !== undefined) {
    if (ctx.profile === null) {
      throw new EngramStoreError(
        'ENGRAM_STORE_VECTOR_UNAVAILABLE',
        'the store has no embedder profile, so it cannot store vectors',
      );
    }
    validateVector(prepared.vector, ctx.profile.dimensions, `${field}.vector`);
  }
  return prepared;
}

/** A generated memory id (checked like a caller's). */
export function newId(ctx: StoreContext): string {
  const id = ctx.idFactory();
  return validateId(id, 'generated id');
}

/** The active row of this agent and kind with this content hash (the one the uniqueness rule allows), if any. */
export function activeDuplicate(
  ctx: StoreContext,
  agentId: string,
  kind: string,
  hash: string,
): MemoryRow | undefined {
  return ctx
    .stmt(
      'read',
      `SELECT * FROM memories WHERE agent_id = ? AND kind = ? AND content_hash = ? AND ${ACTIVE_CONTENT_WHERE}`,
    )
    .get<MemoryRow>(agentId, kind, hash);
}

/**
 * Refuses (`ENGRAM_STORE_CONFLICT`) a write that would leave two active rows of one agent and kind with the
 * same content hash; `rid` is the row being written. Events are outside the rule.
 */
export function assertNoActiveDuplicate(
  ctx: StoreContext,
  agentId: string,
  kind: string,
  hash: string,
  rid: number,
): void {
  const other = activeDuplicate(ctx, agentId, kind, hash);
  if (other !== undefined && other.rid !== rid) {
    throw new EngramStoreError(
      'ENGRAM_STORE_CONFLICT',
      'an active memory of this agent and kind already has this content',
    );
  }
}

/**
 * Inserts one validated memory with its tag, FTS (per chunk when long) and vector rows; must run inside a
 * transaction. A vector given with content longer than the chunk budget describes the whole text, not a
 * chunk: it is not stored, and the memory stays `pending` until the drain embeds its chunks.
 *
 * An exact duplicate (an active row of the same agent and kind with the same content hash; events excepted)
 * is never stored twice: the insert is `ON CONFLICT … DO NOTHING` on the schema's partial unique index, so it
 * holds for concurrent writers too, and the existing row is returned with `created: false`.
 */
export function insertPrepared(ctx: StoreContext, p: PreparedMemory, now: number): InsertedMemory {
  const id = p.id ?? newId(ctx);
  const createdAt = p.createdAt ?? now;
  // `updatedAt` is when the row was written: a backdated insert (imported history) records its import time
  // here, so decay can age it from the import rather than from its original timestamp.
  const updatedAt = Math.max(createdAt, now);
  const validFrom = p.validFrom ?? createdAt;
  const hash = contentHash(p.content);
  const spans = chunkSpans(p.content);
  const withVector = p.vector !== undefined && ctx.profile !== null && spans.length === 1;
  const state: EmbeddingState = withVector ? 'ready' : 'pending';
  const fingerprint = withVector ? ctx.fingerprint : null;
  const tagsJson = p.tags.length === 0 ? '[]' : JSON.stringify(p.tags);
  // One NFKC pass serves the CJK flag, the LIKE-path text (as `likeText` computes it) and the FTS rows.
  const nfkc = p.content.normalize('NFKC');
  const cjk = hasCjk(nfkc);
  // Positional parameters: binding 21 named ones from an object costs a property lookup each, per row.
  const info = ctx
    .stmt(
      'write',
      `INSERT INTO memories(id, agent_id, kind, content, content_hash, importance, confidence, tags, session_id,
        seq_from, seq_to, created_at, updated_at, embedding_state, embedding_fingerprint, has_cjk, like_text, chunk_count,
        user_id, metadata, valid_from)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT(agent_id, kind, content_hash) WHERE ${ACTIVE_CONTENT_WHERE} DO NOTHING`,
    )
    .run(
      id,
      p.agentId,
      p.kind,
      p.content,
      hash,
      p.importance,
      p.confidence,
      tagsJson,
      p.sessionId,
      p.seqFrom,
      p.seqTo,
      createdAt,
      updatedAt,
      state,
      fingerprint,
      cjk ? 1 : 0,
      nfkc !== p.content && cjk ? nfkc : null,
      spans.length,
      p.userId,
      p.metadataJson,
      validFrom,
    );
  if (info.changes === 0) {
    // A caller-chosen id that is taken stays a conflict, as without the duplicate.
    if (p.id !== undefined && ctx.stmt('read', 'SELECT 1 AS x FROM memories WHERE id = ?').get(p.id)) {
      throw new EngramStoreError('ENGRAM_STORE_CONFLICT', 'a memory with this id already exists');
    }
    const existing = activeDuplicate(ctx, p.agentId, p.kind, hash);
    if (existing === undefined) {
      throw new EngramStoreError('ENGRAM_STORE_UNKNOWN', 'an insert was skipped without a duplicate row');
    }
    return { record: toRecord(existing), created: false };
  }
  const rid = Number(info.lastInsertRowid);
  writeTags(ctx, rid, p.agentId, p.tags);
  if (spans.length === 1) writeFts(ctx, rid, p.agentId, p.content, nfkc);
  else indexContent(ctx, rid, p.agentId, p.content, spans);
  if (withVector && p.vector !== undefined) writeVector(ctx, rid, p.agentId, p.vector);
  const record: MemoryRecord = {
    id,
    agentId: p.agentId,
    kind: p.kind,
    content: p.content,
    contentHash: hash,
    importance: p.importance,
    confidence: p.confidence,
    tags: [...p.tags],
    sessionId: p.sessionId,
    seqFrom: p.seqFrom,
    seqTo: p.seqTo,
    createdAt,
    updatedAt,
    lastAccessedAt: null,
    accessCount: 0,
    revision: 1,
    lifecycle: 'active',
    supersededBy: null,
    embeddingState: state,
    embeddingFingerprint: fingerprint,
    embeddingAttempts: 0,
    userId: p.userId,
    metadata: JSON.parse(p.metadataJson) as Record<string, unknown>,
    validFrom,
    validTo: null,
    forgottenAt: null,
  };
  return { record, created: true };
}

/** One row of an agent by id (any lifecycle). */
export function selectRow(ctx: StoreContext, agentId: string, id: string): MemoryRow | undefined {
  return ctx.stmt('read', 'SELECT * FROM memories WHERE id = ? AND agent_id = ?').get<MemoryRow>(id, agentId);
}

/** Reads a row for a compare-and-set write; NOT_FOUND / REVISION_CONFLICT otherwise. */
export function rowForWrite(
  ctx: StoreContext,
  agentId: string,
  id: string,
  expectedRevision: number | undefined,
): MemoryRow {
  const row = selectRow(ctx, agentId, id);
  if (row === undefined) {
    throw new EngramStoreError('ENGRAM_STORE_NOT_FOUND', 'no memory with this id for this agent');
  }
  if (expectedRevision !== undefined && row.revision !== expectedRevision) {
    throw new EngramStoreError(
      'ENGRAM_STORE_REVISION_CONFLICT',
      `the memory changed meanwhile (expected revision ${expectedRevision}, stored ${row.revision})`,
    );
  }
  return row;
}

/**
 * Moves a row's lifecycle, compare-and-set on the revision it was read with; back to `active` only when no other
 * active row of its agent and kind has its content (`ENGRAM_STORE_CONFLICT`).
 */
export function casLifecycle(
  ctx: StoreContext,
  row: MemoryRow,
  lifecycle: Lifecycle,
  supersededBy: string | null,
  now: number,
): MemoryRecord {
  if (lifecycle === 'active') assertNoActiveDuplicate(ctx, row.agent_id, row.kind, row.content_hash, row.rid);
  // Superseding closes the fact's validity at the supersede time; reactivating it opens it again.
  const validTo =
    lifecycle === 'superseded' ? (row.valid_to ?? now) : lifecycle === 'active' ? null : row.valid_to;
  const info = ctx
    .stmt(
      'write',
      `UPDATE memories SET lifecycle = ?, superseded_by = ?, revision = revision + 1, updated_at = ?,
         valid_to = ? WHERE rid = ? AND revision = ?`,
    )
    .run(lifecycle, supersededBy, now, validTo, row.rid, row.revision);
  if (info.changes !== 1) {
    throw new EngramStoreError('ENGRAM_STORE_REVISION_CONFLICT', 'the memory changed meanwhile');
  }
  return toRecord({
    ...row,
    lifecycle,
    superseded_by: supersededBy,
    revision: row.revision + 1,
    updated_at: now,
    valid_to: validTo,
  });
}
