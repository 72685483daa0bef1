/**
 * Row primitives the write, lifecycle and event slices share: validating and inserting a new memory with its
 * derived rows (or finding the active exact duplicate that makes the insert a no-op), reading a row for a
 * compare-and-set write, and the compare-and-set lifecycle move. The insert and CAS helpers must run inside
 * a transaction.
 */

import { contentHashOfNfkc, hasCjk } from '@engram/contracts';
import type {
  EmbeddingState,
  InsertedMemory,
  Lifecycle,
  MemoryRecord,
  NewMemory,
} from '@engram/store/port-kit';
import {
  type ChunkSpan,
  chunkSpans,
  EngramStoreError,
  isAscii,
  lifecycleRules,
  type PreparedMemory,
  storedRows,
  visibleToUser,
  writableByUser,
} from '@engram/store/port-kit';
import { ACTIVE_CONTENT_WHERE, USER_KEY } from '../schema.js';
import { indexContent } from './chunks.js';
import type { StoreContext } from './context.js';
import { writeFts, writeTags, writeVector } from './mirrors.js';
import { type MemoryRow, toRecord } from './rows.js';

/** Validates a new memory (and its vector against the bound profile); `field` names it in errors. */
export const prepareInsert: (ctx: StoreContext, input: NewMemory, field: string) => PreparedMemory =
  lifecycleRules.prepareMemoryInsert;

/** A generated memory id (checked like a caller's). */
export function newId(ctx: StoreContext): string {
  return lifecycleRules.generatedMemoryId(ctx.idFactory);
}

/**
 * The active row of this agent, user (null: the agent's own) and kind with this content hash (the one the
 * uniqueness rule allows), if any.
 */
export function activeDuplicate(
  ctx: StoreContext,
  agentId: string,
  kind: string,
  hash: string,
  userId: string | null,
): MemoryRow | undefined {
  return ctx
    .stmt(
      'read',
      `SELECT * FROM memories WHERE agent_id = ? AND content_hash = ? AND kind = ? AND ${USER_KEY} = ?
         AND ${ACTIVE_CONTENT_WHERE}`,
    )
    .get<MemoryRow>(agentId, hash, kind, userId ?? '');
}

/**
 * Refuses (`ENGRAM_STORE_CONFLICT`) a write that would leave two active rows of one agent, user and kind with
 * the same content hash; `rid` is the row being written. Events are outside the rule.
 */
export function assertNoActiveDuplicate(
  ctx: StoreContext,
  agentId: string,
  kind: string,
  hash: string,
  rid: number,
  userId: string | null,
): void {
  const other = activeDuplicate(ctx, agentId, kind, hash, userId);
  if (other !== undefined && other.rid !== rid) {
    throw new EngramStoreError(
      'ENGRAM_STORE_CONFLICT',
      'an active memory of this agent and kind already has this content',
    );
  }
}

/** The columns of a memory insert, in the order of {@link INSERT_COLUMNS}. */
const INSERT_COLUMNS = `id, agent_id, kind, content, content_hash, importance, confidence, tags, session_id,
        seq_from, seq_to, created_at, updated_at, embedding_state, embedding_fingerprint, has_cjk, like_text, chunk_count,
        user_id, metadata, valid_from`;
const INSERT_PLACEHOLDERS = '(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)';
// The target is the unique index `memories_active_hash` (see `USER_HASH_INDEX_SQL`).
const ON_DUPLICATE = `ON CONFLICT(agent_id, content_hash, kind, ${USER_KEY}) WHERE ${ACTIVE_CONTENT_WHERE} DO NOTHING`;
/** Rows of the largest multi-row insert (21 values each; well under SQLite's parameter limit). */
const INSERT_CHUNK = 64;

/** A memory's row values, computed once before its insert. */
interface RowPlan {
  readonly p: PreparedMemory;
  readonly id: string;
  readonly hash: string;
  readonly spans: readonly ChunkSpan[];
  readonly withVector: boolean;
  readonly state: EmbeddingState;
  readonly fingerprint: string | null;
  readonly nfkc: string;
  readonly cjk: boolean;
  readonly createdAt: number;
  readonly updatedAt: number;
  readonly validFrom: number;
}

function planRow(ctx: StoreContext, p: PreparedMemory, now: number): RowPlan {
  const id = p.id ?? newId(ctx);
  const createdAt = p.createdAt ?? now;
  const spans = chunkSpans(p.content);
  const withVector = p.vector !== undefined && ctx.profile !== null && spans.length === 1;
  // One NFKC pass (none for ASCII text, which it leaves as it is) serves the hash, the CJK flag, the LIKE-path
  // text (as `likeText` computes it), the FTS rows and the BM25 terms.
  const ascii = isAscii(p.content);
  const nfkc = ascii ? p.content : p.content.normalize('NFKC');
  return {
    p,
    id,
    hash: contentHashOfNfkc(nfkc),
    spans,
    withVector,
    state: withVector ? 'ready' : 'pending',
    fingerprint: withVector ? ctx.fingerprint : null,
    nfkc,
    cjk: !ascii && hasCjk(nfkc),
    createdAt,
    // `updatedAt` is when the row was written: a backdated insert (imported history) records its import time
    // here, so decay can age it from the import rather than from its original timestamp.
    updatedAt: Math.max(createdAt, now),
    validFrom: p.validFrom ?? createdAt,
  };
}

/** Appends a planned row's 21 insert values to `out` (positional: no property lookup per named parameter). */
function pushRowValues(out: unknown[], r: RowPlan): void {
  const { p } = r;
  const cjk = r.cjk;
  out.push(
    r.id,
    p.agentId,
    p.kind,
    p.content,
    r.hash,
    p.importance,
    p.confidence,
    p.tags.length === 0 ? '[]' : JSON.stringify(p.tags),
    p.sessionId,
    p.seqFrom,
    p.seqTo,
    r.createdAt,
    r.updatedAt,
    r.state,
    r.fingerprint,
    cjk ? 1 : 0,
    r.nfkc !== p.content && cjk ? r.nfkc : null,
    r.spans.length,
    p.userId,
    p.metadataJson,
    r.validFrom,
  );
}

/** Writes an inserted row's tag, FTS (per chunk when long) and vector rows, and returns its record. */
function finishInsert(ctx: StoreContext, r: RowPlan, rid: number): InsertedMemory {
  const { p } = r;
  writeTags(ctx, rid, p.agentId, p.tags);
  if (r.spans.length === 1) writeFts(ctx, rid, p.agentId, p.userId, p.content, r.nfkc, r.cjk);
  else indexContent(ctx, rid, p.agentId, p.userId, p.content, r.spans);
  if (r.withVector && p.vector !== undefined) writeVector(ctx, rid, p.agentId, p.userId, p.vector);
  const record = storedRows.newMemoryRecord(p, {
    id: r.id,
    contentHash: r.hash,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
    validFrom: r.validFrom,
    embeddingState: r.state,
    embeddingFingerprint: r.fingerprint,
  });
  return { record, created: true };
}

/** The active exact duplicate that made a row's insert a no-op; `idTaken` when its caller-chosen id is in use. */
function duplicateOf(ctx: StoreContext, r: RowPlan, idTaken: boolean): InsertedMemory {
  // A caller-chosen id that is taken stays a conflict, as without the duplicate.
  if (idTaken) throw new EngramStoreError('ENGRAM_STORE_CONFLICT', 'a memory with this id already exists');
  const existing = activeDuplicate(ctx, r.p.agentId, r.p.kind, r.hash, r.p.userId);
  if (existing === undefined) {
    throw new EngramStoreError('ENGRAM_STORE_UNKNOWN', 'an insert was skipped without a duplicate row');
  }
  return { record: toRecord(existing), created: false };
}

function idInUse(ctx: StoreContext, id: string): boolean {
  return ctx.stmt('read', 'SELECT 1 AS x FROM memories WHERE id = ?').get(id) !== undefined;
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
  const r = planRow(ctx, p, now);
  const values: unknown[] = [];
  pushRowValues(values, r);
  const info = ctx
    .stmt('write', `INSERT INTO memories(${INSERT_COLUMNS}) VALUES ${INSERT_PLACEHOLDERS} ${ON_DUPLICATE}`)
    .run(...values);
  if (info.changes === 0) return duplicateOf(ctx, r, p.id !== undefined && idInUse(ctx, p.id));
  return finishInsert(ctx, r, Number(info.lastInsertRowid));
}

/**
 * Inserts validated memories in order, as {@link insertPrepared} one after the other would, byte for byte (the
 * same row ids, rows and derived rows, and the same duplicates found): the memory rows go in with multi-row
 * inserts of up to {@link INSERT_CHUNK} rows (one statement, and one update of the row-id sequence, per chunk
 * instead of per row), then each new row's derived rows are written in order. Must run inside a transaction.
 */
export function insertPreparedBatch(
  ctx: StoreContext,
  prepared: readonly PreparedMemory[],
  now: number,
): InsertedMemory[] {
  const plans = prepared.map((p) => planRow(ctx, p, now));
  // The row id of each plan the inserts kept (0: skipped as a duplicate, as one by one it would have been).
  const rids = new Array<number>(plans.length).fill(0);
  // Where each kept caller-chosen id was inserted.
  const keptAt = new Map<string, number>();
  for (let start = 0; start < plans.length; ) {
    const left = plans.length - start;
    // Whole chunks, then the rest in halving sizes: at most seven statement shapes in all.
    let n = INSERT_CHUNK;
    while (n > left) n >>= 1;
    const values: unknown[] = [];
    for (let i = start; i < start + n; i += 1) pushRowValues(values, plans[i] as RowPlan);
    const kept = ctx
      .variant('write', `insert-memories-${n}`, () => {
        const tuples = new Array<string>(n).fill(INSERT_PLACEHOLDERS).join(', ');
        return `INSERT INTO memories(${INSERT_COLUMNS}) VALUES ${tuples} ${ON_DUPLICATE}
          RETURNING rid, id, agent_id, kind, content_hash, user_id`;
      })
      .values<[number, string, string, string, string, string | null]>(...values);
    // Row ids grow in insertion order, so the kept rows by row id are the kept plans in order. A plan matches
    // the next kept row by id, agent, kind, hash and user: a skipped plan cannot match it on all five (a later
    // row with the skipped one's agent, kind, hash and user is skipped too).
    kept.sort((x, y) => x[0] - y[0]);
    let k = 0;
    for (let i = start; i < start + n; i += 1) {
      const r = plans[i] as RowPlan;
      const row = kept[k];
      if (
        row !== undefined &&
        row[1] === r.id &&
        row[2] === r.p.agentId &&
        row[3] === r.p.kind &&
        row[4] === r.hash &&
        row[5] === r.p.userId
      ) {
        rids[i] = row[0];
        if (r.p.id !== undefined) keptAt.set(r.id, i);
        k += 1;
      }
    }
    start += n;
  }
  const out: InsertedMemory[] = [];
  for (let i = 0; i < plans.length; i += 1) {
    const r = plans[i] as RowPlan;
    const rid = rids[i] as number;
    if (rid !== 0) {
      out.push(finishInsert(ctx, r, rid));
      continue;
    }
    // One by one, a skipped row's caller-chosen id would be taken by a row stored before it only: a row of
    // this batch that took the id later does not count (and a row stored before the batch would have made
    // that later insert fail).
    const at = r.p.id === undefined ? undefined : keptAt.get(r.p.id);
    const idTaken = r.p.id !== undefined && (at === undefined ? idInUse(ctx, r.p.id) : at < i);
    out.push(duplicateOf(ctx, r, idTaken));
  }
  return out;
}

/**
 * One row of an agent by id (any lifecycle); with `forUser` (a checked user scope), a row of another user is
 * not found.
 */
export function selectRow(
  ctx: StoreContext,
  agentId: string,
  id: string,
  forUser: string | null = null,
): MemoryRow | undefined {
  const row = ctx
    .stmt('read', 'SELECT * FROM memories WHERE id = ? AND agent_id = ?')
    .get<MemoryRow>(id, agentId);
  return row === undefined || visibleToUser(row.user_id, forUser) ? row : undefined;
}

/** Reads a row for a compare-and-set write (`forUser`'s own); NOT_FOUND / REVISION_CONFLICT otherwise. */
export function rowForWrite(
  ctx: StoreContext,
  agentId: string,
  id: string,
  expectedRevision: number | undefined,
  forUser: string | null = null,
): MemoryRow {
  const row = selectRow(ctx, agentId, id);
  if (row === undefined || !writableByUser(row.user_id, forUser)) {
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
  if (lifecycle === 'active') {
    assertNoActiveDuplicate(ctx, row.agent_id, row.kind, row.content_hash, row.rid, row.user_id);
  }
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
