/**
 * The embedding slice (the drain's view): pending rows, revision-checked commits of outcomes, the backlog, and
 * the explicit re-index to another embedder profile.
 */

import type {
  EmbeddingBacklog,
  EmbeddingCommitResult,
  EmbeddingOutcome,
  EmbeddingProfile,
  ListPendingOptions,
  PendingEmbedding,
} from '@engram/store/port-kit';
import { callRules, checkEmbeddingOutcomes } from '@engram/store/port-kit';
import { vectorTableSql } from '../schema.js';
import { CHUNK_VEC_NONE, CHUNK_VEC_PENDING, CHUNK_VEC_READY, chunkKey } from './chunks.js';
import { claimRows, dropAllClaims, holdsRow, releaseRows, UNCLAIMED_BY_OTHERS } from './claims.js';
import { checkProfile, checkVectorIndex } from './config.js';
import type { StoreContext } from './context.js';
import { embeddingFingerprint, setMeta } from './migrate.js';
import { deleteVector, writeVector } from './mirrors.js';
import {
  followVectorIndex,
  parseRecordedQuantization,
  VECTOR_INDEX_META,
  type VectorIndexOptions,
  type VectorIndexSetting,
  vectorIndexSetting,
} from './vector-quant.js';
import { finishQuantIndex, prepareQuantIndex } from './vector-quant-build.js';

/**
 * Active rows waiting for an embedding, in insertion order: `pending` rows, plus `error` rows with fewer than
 * `retryErrorsBelowAttempts` attempts when asked. With `claimLeaseMs`, the rows are chosen among those free of
 * another claimant's live claim (this store's own first, as they come in insertion order) and claimed, in one
 * write transaction (see `claims.ts`).
 */
export function listPendingEmbeddings(
  ctx: StoreContext,
  options: ListPendingOptions,
): Promise<readonly PendingEmbedding[]> {
  return ctx.op('listPendingEmbeddings', () => {
    const leaseMs = ctx.claimLeaseMs;
    // While an import or export of this store holds its connection in a transaction, the listing reads inside
    // it and claims nothing (as a store without claims does).
    if (leaseMs === null || ctx.held !== null) return pendingItems(ctx, options, null).map((i) => i.item);
    return ctx.tx(() => {
      const now = ctx.now();
      const items = pendingItems(ctx, options, { owner: ctx.claimOwner, now });
      claimRows(ctx, ctx.claimOwner, leaseMs, now, [...new Set(items.map((i) => i.rid))]);
      return items.map((i) => i.item);
    });
  });
}

/** The items of a listing, each with its memory's rid; `claims`: skip rows under another claimant's live claim. */
function pendingItems(
  ctx: StoreContext,
  options: ListPendingOptions,
  claims: { readonly owner: string; readonly now: number } | null,
): readonly { readonly rid: number; readonly item: PendingEmbedding }[] {
  const { agentId, limit, below, ids: only } = callRules.validatePendingOptions(options);
  const claimCond = claims === null ? '' : `AND ${UNCLAIMED_BY_OTHERS}`;
  const agentCond = agentId === null ? '' : 'AND m.agent_id = @agent';
  const ids = only === null ? null : JSON.stringify(only);
  const idCond = ids === null ? '' : 'AND m.id IN (SELECT value FROM json_each(@ids))';
  const stateCond =
    below > 0
      ? "(m.embedding_state = 'pending' OR (m.embedding_state = 'error' AND m.embedding_attempts < @below))"
      : "m.embedding_state = 'pending'";
  type Key = { rid: number; idx: number | null; start_at: number | null; end_at: number | null };
  type Row = {
    id: string;
    agent_id: string;
    content: string;
    revision: number;
    embedding_attempts: number;
  };
  // A short memory is one item; a chunked memory gives one item per chunk still without a vector. The
  // items are chosen first (keys only, so the ordering never copies content), then their rows are read.
  const keys = ctx
    .stmt(
      'read',
      `SELECT m.rid, c.idx, c.start_at, c.end_at
         FROM memories m LEFT JOIN memory_chunks c
           ON m.chunk_count > 1 AND c.agent_id = m.agent_id AND c.rid = m.rid AND c.vec = ${CHUNK_VEC_PENDING}
         WHERE ${stateCond} AND m.lifecycle = 'active' ${agentCond} ${idCond} ${claimCond} AND (m.chunk_count = 1 OR c.idx IS NOT NULL)
         ORDER BY m.rid, c.idx LIMIT @limit`,
    )
    .all<Key>({
      limit,
      ...(claims === null ? {} : { owner: claims.owner, now: claims.now }),
      ...(agentId === null ? {} : { agent: agentId }),
      ...(below > 0 ? { below } : {}),
      ...(ids === null ? {} : { ids }),
    });
  // Their rows in one read (never one statement per item), each row once however many chunks it gives.
  const rows = new Map<number, Row>();
  if (keys.length > 0) {
    const distinct = [...new Set(keys.map((k) => k.rid))];
    const read = ctx
      .stmt(
        'read',
        `SELECT rid, id, agent_id, content, revision, embedding_attempts FROM memories
           WHERE rid IN (SELECT value FROM json_each(?))`,
      )
      .all<Row & { rid: number }>(JSON.stringify(distinct));
    for (const r of read) rows.set(r.rid, r);
  }
  const out: { rid: number; item: PendingEmbedding }[] = [];
  for (const k of keys) {
    const r = rows.get(k.rid);
    if (r === undefined) continue;
    const item: PendingEmbedding = {
      id: r.id,
      agentId: r.agent_id,
      content: k.idx === null ? r.content : r.content.slice(k.start_at ?? 0, k.end_at ?? r.content.length),
      revision: r.revision,
      embeddingAttempts: r.embedding_attempts,
      ...(k.idx === null ? {} : { chunk: k.idx }),
    };
    out.push({ rid: k.rid, item });
  }
  return out;
}

type CommitRow = {
  rid: number;
  agent_id: string;
  user_id: string | null;
  revision: number;
  chunk_count: number;
};

/** The states a commit may move a row out of: a row another drain already settled is left alone. */
const AWAITING = "embedding_state IN ('pending', 'error')";

/**
 * Moves a row to `state`; `awaiting` requires it to be `pending` or `error` still. Returns whether the row
 * changed (the statement's own count, so two concurrent commits of one row count it once).
 */
function setState(
  ctx: StoreContext,
  rid: number,
  state: 'ready' | 'error' | 'ftsOnly',
  awaiting: boolean,
  code?: string,
): boolean {
  const guard = awaiting ? ` AND ${AWAITING}` : '';
  if (state === 'ready') {
    return (
      ctx
        .stmt(
          'write',
          `UPDATE memories SET embedding_state = 'ready', embedding_fingerprint = ? WHERE rid = ?${guard}`,
        )
        .run(ctx.fingerprint, rid).changes === 1
    );
  }
  if (state === 'error') {
    return (
      ctx
        .stmt(
          'write',
          `UPDATE memories SET embedding_state = 'error', embedding_fingerprint = NULL,
           embedding_attempts = embedding_attempts + 1, embedding_error = ?, embedding_failed_at = ?
           WHERE rid = ?${guard}`,
        )
        .run(code ?? null, ctx.now(), rid).changes === 1
    );
  }
  return (
    ctx
      .stmt(
        'write',
        `UPDATE memories SET embedding_state = 'ftsOnly', embedding_fingerprint = NULL WHERE rid = ?${guard}`,
      )
      .run(rid).changes === 1
  );
}

/**
 * One chunk's outcome: its vector (or none) and its chunk state; the memory's state is settled after. False
 * (nothing written) when the chunk is no longer pending: another commit settled it.
 */
function commitChunk(ctx: StoreContext, row: CommitRow, o: EmbeddingOutcome & { chunk: number }): boolean {
  if (o.state === 'error') {
    const chunk = ctx
      .stmt('read', 'SELECT vec FROM memory_chunks WHERE agent_id = ? AND rid = ? AND idx = ?')
      .get<{ vec: number }>(row.agent_id, row.rid, o.chunk);
    if (chunk?.vec !== CHUNK_VEC_PENDING) return false;
    deleteVector(ctx, chunkKey(row.rid, o.chunk));
    return true;
  }
  const moved = ctx
    .stmt(
      'write',
      `UPDATE memory_chunks SET vec = ? WHERE agent_id = ? AND rid = ? AND idx = ? AND vec = ${CHUNK_VEC_PENDING}`,
    )
    .run(o.state === 'ready' ? CHUNK_VEC_READY : CHUNK_VEC_NONE, row.agent_id, row.rid, o.chunk);
  if (moved.changes !== 1) return false;
  const key = chunkKey(row.rid, o.chunk);
  deleteVector(ctx, key);
  if (o.state === 'ready') writeVector(ctx, key, row.agent_id, row.user_id, o.vector);
  return true;
}

/**
 * A chunked memory's state after its chunks' outcomes: `error` when a chunk failed in this commit; else, once
 * no chunk is pending, `ready` when some chunk has a vector and `ftsOnly` when none has; else unchanged.
 */
function settleChunked(ctx: StoreContext, row: CommitRow, failed: boolean, code?: string): void {
  if (failed) {
    setState(ctx, row.rid, 'error', false, code);
    return;
  }
  const counts = ctx
    .stmt(
      'read',
      `SELECT sum(vec = ${CHUNK_VEC_PENDING}) AS pending, sum(vec = ${CHUNK_VEC_READY}) AS ready
       FROM memory_chunks WHERE agent_id = ? AND rid = ?`,
    )
    .get<{ pending: number | null; ready: number | null }>(row.agent_id, row.rid);
  if ((counts?.pending ?? 0) > 0) return;
  setState(ctx, row.rid, (counts?.ready ?? 0) > 0 ? 'ready' : 'ftsOnly', false);
}

/**
 * Commits embedding outcomes in one transaction; rows whose revision changed (or that are gone), and rows or
 * chunks no longer waiting for an embedding (settled by a concurrent commit), are `stale` and left untouched:
 * the counts are the transitions this commit made.
 * A chunk outcome (`chunk` given) stores that chunk's vector; the memory becomes `ready` when none of its
 * chunks is pending. An outcome without `chunk` for a chunked memory, or naming a chunk the memory does not
 * have, is `stale` (it cannot describe the stored chunks).
 */
export function commitEmbeddings(
  ctx: StoreContext,
  outcomes: readonly EmbeddingOutcome[],
): Promise<EmbeddingCommitResult> {
  return ctx.op('commitEmbeddings', () => {
    checkEmbeddingOutcomes(ctx.profile, outcomes);
    if (outcomes.length === 0) return { ready: 0, error: 0, ftsOnly: 0, stale: 0 };
    return ctx.tx(() => {
      // Inside the transaction: `tx` may run it again after repairing a damaged vector chunk.
      const result = { ready: 0, error: 0, ftsOnly: 0, stale: 0 };
      const now = ctx.now();
      const owner = ctx.claimOwner;
      const chunked = new Map<number, { row: CommitRow; failed: boolean; code?: string }>();
      // The rows this commit had the right to settle: this store's claims on them are given up at the end.
      const claimed = new Set<number>();
      for (const o of outcomes) {
        const row = ctx
          .stmt('read', 'SELECT rid, agent_id, user_id, revision, chunk_count FROM memories WHERE id = ?')
          .get<CommitRow>(o.id);
        // Another claimant's live claim: that claimant took the row over (this store's lease ran out).
        const mine = row !== undefined && holdsRow(ctx, owner, now, row.rid);
        if (mine) claimed.add(row.rid);
        const isChunked = row !== undefined && row.chunk_count > 1;
        if (
          row === undefined ||
          !mine ||
          row.revision !== o.revision ||
          isChunked !== (o.chunk !== undefined) ||
          (o.chunk !== undefined && o.chunk >= row.chunk_count)
        ) {
          result.stale += 1;
          continue;
        }
        if (o.chunk !== undefined) {
          if (!commitChunk(ctx, row, { ...o, chunk: o.chunk })) {
            result.stale += 1;
            continue;
          }
          result[o.state] += 1;
          const entry = chunked.get(row.rid) ?? { row, failed: false };
          if (o.state === 'error') {
            entry.failed = true;
            // The first failed chunk's code is the memory's.
            if (o.code !== undefined) entry.code ??= o.code;
          }
          chunked.set(row.rid, entry);
          continue;
        }
        // Only a row still waiting moves (another drain may have settled it since this one read it).
        if (!setState(ctx, row.rid, o.state, true, o.state === 'error' ? o.code : undefined)) {
          result.stale += 1;
          continue;
        }
        result[o.state] += 1;
        deleteVector(ctx, row.rid);
        if (o.state === 'ready') writeVector(ctx, row.rid, row.agent_id, row.user_id, o.vector);
      }
      for (const { row, failed, code } of chunked.values()) settleChunked(ctx, row, failed, code);
      releaseRows(ctx, owner, [...claimed]);
      return result;
    });
  });
}

/** Active `pending` rows, in total and per agent. */
export function countEmbeddingBacklog(ctx: StoreContext): Promise<EmbeddingBacklog> {
  return ctx.op('countEmbeddingBacklog', () => {
    const rows = ctx
      .stmt(
        'read',
        `SELECT agent_id, count(*) AS n FROM memories WHERE embedding_state = 'pending' AND lifecycle = 'active'
         GROUP BY agent_id ORDER BY agent_id`,
      )
      .all<{ agent_id: string; n: number }>();
    const byAgent: Record<string, number> = {};
    let total = 0;
    for (const r of rows) {
      byAgent[r.agent_id] = r.n;
      total += r.n;
    }
    return { total, byAgent };
  });
}

/**
 * The explicit re-index: drops every vector, recreates the vector table for `profile` (or none), resets every
 * row to `pending` and records the new fingerprint.
 */
export function resetEmbeddings(ctx: StoreContext, profile: EmbeddingProfile | null): Promise<void> {
  return ctx.op('resetEmbeddings', () => {
    checkProfile(profile);
    const next = profile === null ? null : { id: profile.id, dimensions: profile.dimensions };
    const fingerprint = embeddingFingerprint(next);
    ctx.tx(() => {
      // The quantised table is recreated below with this store's kind: it must be the file's.
      followVectorIndex(ctx);
      ctx.db.exec('DROP TABLE IF EXISTS memories_vec');
      ctx.count('meta');
      if (next !== null) {
        ctx.db.exec(vectorTableSql(next.dimensions));
        ctx.count('meta');
      }
      // The quantised table follows the float one (empty, of the new width; none without a profile).
      prepareQuantIndex(ctx, ctx.vectorIndex.quantization, next, true);
      ctx
        .stmt(
          'write',
          `UPDATE memories SET embedding_state = 'pending', embedding_fingerprint = NULL, embedding_attempts = 0`,
        )
        .run();
      ctx.stmt('write', `UPDATE memory_chunks SET vec = ${CHUNK_VEC_PENDING} WHERE vec <> 0`).run();
      dropAllClaims(ctx);
      setMeta(ctx, 'embedding_fingerprint', fingerprint);
    });
    // Statements on the old vector table are stale now.
    for (const sql of [...ctx.statements.keys()]) {
      if (sql.includes('memories_vec')) ctx.statements.delete(sql);
    }
    ctx.bindProfile(next, fingerprint);
  });
}

/**
 * The explicit change of the vector index setting: drops the quantised table, builds the one `options` asks
 * for from the stored float vectors (nothing is re-embedded) and records the setting. Returns how many vectors
 * were quantised.
 */
export function resetVectorIndex(
  ctx: StoreContext,
  options: VectorIndexOptions,
): Promise<{ readonly indexed: number }> {
  return ctx.op('resetVectorIndex', () => {
    checkVectorIndex(options);
    // The explicit change: it never follows nor refuses another connection's earlier change (it is how a store
    // refused for one recovers); an omitted quantization keeps the file's, read under the write lock.
    const { setting, version } = ctx.tx(() => {
      const version = ctx.dataVersion();
      const recorded =
        parseRecordedQuantization(
          ctx.stmt('meta', 'SELECT value FROM meta WHERE key = ?').get<{ value: string }>(VECTOR_INDEX_META)
            ?.value,
        ) ?? 'none';
      const setting = vectorIndexSetting(recorded, options);
      prepareQuantIndex(ctx, setting.quantization, ctx.profile, true);
      setMeta(ctx, VECTOR_INDEX_META, setting.quantization);
      return { setting, version };
    });
    for (const sql of [...ctx.statements.keys()]) {
      if (sql.includes('memories_vec')) ctx.statements.delete(sql);
    }
    // Writes keep the new table's copies from now on; searches use it once it is complete. A build that fails
    // part-way is finished by the next writable open (or by calling this again). A store that named its kind
    // holds to the new one from now on; one that did not keeps following the file.
    ctx.vectorIndex = setting;
    // A `:memory:` store (null) is never checked: nothing else can change its file.
    if (ctx.vectorIndexVersion !== null) ctx.vectorIndexVersion = version;
    if (ctx.vectorIndexOption?.quantization !== undefined) {
      ctx.vectorIndexOption = { ...ctx.vectorIndexOption, quantization: setting.quantization };
    }
    ctx.quantReady = false;
    const indexed =
      ctx.profile === null ? 0 : finishQuantIndex(ctx, setting.quantization, ctx.profile.dimensions);
    ctx.quantReady = true;
    return { indexed };
  });
}

/**
 * The file's vector index setting, read now as the next vector write or search would (`followVectorIndex`): the
 * setting in use (the file's, adopted, for a store opened without one), or `ENGRAM_STORE_VECTOR_INDEX_MISMATCH`
 * when another connection's `resetVectorIndex` left another kind than this store was opened with.
 */
export function refreshVectorIndex(ctx: StoreContext): Promise<VectorIndexSetting> {
  return ctx.op('refreshVectorIndex', () => {
    followVectorIndex(ctx);
    const { quantization, rescore } = ctx.vectorIndex;
    return { quantization, rescore };
  });
}
