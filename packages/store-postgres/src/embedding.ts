/**
 * The embedding slice on PostgreSQL: pending rows, revision-checked commits, the backlog, the explicit
 * re-index, and work claimed by many workers.
 *
 * With `claimLeaseMs` set, listing pending rows claims them: one statement picks unclaimed (or expired, or own)
 * rows `FOR UPDATE SKIP LOCKED` and stamps them with this store's worker id and a lease deadline on the server
 * clock. Other workers skip claimed rows, so N processes drain one backlog without embedding a row twice; a
 * worker that dies loses its claims when the lease runs out and another worker takes them. A commit is applied
 * only by the lease holder (or to an unclaimed row); a late commit of an expired claim that another worker took
 * over is `stale`. Without `claimLeaseMs`, listing claims nothing (one drain at a time, as in the SQLite store).
 */

import {
  callRules,
  checkEmbeddingOutcomes,
  type EmbeddingBacklog,
  type EmbeddingCommitResult,
  type EmbeddingOutcome,
  type EmbeddingProfile,
  embeddingFingerprint,
  invalidInput,
  type ListPendingOptions,
  type PendingEmbedding,
} from '@engram/store/port-kit';
import type pg from 'pg';
import type { PgContext } from './context.js';
import { CHUNK_VEC_NONE, CHUNK_VEC_PENDING, CHUNK_VEC_READY, chunkKey, writeVector } from './derived.js';
import { ensurePgvector, setMeta, vectorTableSql } from './schema.js';

/** The server clock in epoch milliseconds (leases never depend on the workers' clocks). */
const SERVER_NOW = '(extract(epoch from clock_timestamp()) * 1000)::bigint';

/** `pending` rows, and `error` rows below the retry bound (`$2`; 0 retries none). */
const STATE_COND =
  "(m.embedding_state = 'pending' OR (m.embedding_state = 'error' AND m.embedding_attempts < $2::int))";

/** Active rows waiting for an embedding, in insertion order (claimed first when `claimLeaseMs` is set). */
export function listPendingEmbeddings(
  ctx: PgContext,
  options: ListPendingOptions,
): Promise<readonly PendingEmbedding[]> {
  return ctx.op('listPendingEmbeddings', async () => {
    const { agentId, limit, below, ids: only } = callRules.validatePendingOptions(options);
    const ids = only;
    // Only the rows named, when `ids` is given (e.g. the rows a maintenance pass just wrote).
    const base = `${STATE_COND} AND m.lifecycle = 'active' AND ($3::text IS NULL OR m.agent_id = $3)
      AND ($4::text[] IS NULL OR m.id = ANY($4::text[]))`;
    let ridFilter = '';
    const params: unknown[] = [limit, below, agentId, ids];
    if (ctx.claimLeaseMs !== null) {
      const claimed = await ctx.q<{ rid: string }>(
        ctx.pool,
        'write',
        `WITH picked AS (
           SELECT m.rid FROM memories m
           WHERE ${base} AND (m.lease_owner IS NULL OR m.lease_owner = $5 OR m.lease_until < ${SERVER_NOW})
           ORDER BY m.rid LIMIT $1 FOR UPDATE SKIP LOCKED)
         UPDATE memories m SET lease_owner = $5, lease_until = ${SERVER_NOW} + $6
         FROM picked WHERE m.rid = picked.rid RETURNING m.rid`,
        [...params, ctx.workerId, ctx.claimLeaseMs],
      );
      if (claimed.length === 0) return [];
      params.push(claimed.map((r) => r.rid));
      ridFilter = 'AND m.rid = ANY($5::bigint[])';
    }
    type Row = {
      rid: string;
      idx: number | null;
      start_at: number | null;
      end_at: number | null;
      id: string;
      agent_id: string;
      content: string;
      revision: string;
      embedding_attempts: number;
    };
    // One item per short memory, one per chunk still without a vector for a chunked memory.
    const rows = await ctx.q<Row>(
      ctx.pool,
      'read',
      `SELECT m.rid, c.idx, c.start_at, c.end_at, m.id, m.agent_id, m.content, m.revision, m.embedding_attempts
       FROM memories m LEFT JOIN memory_chunks c
         ON m.chunk_count > 1 AND c.rid = m.rid AND c.vec = ${CHUNK_VEC_PENDING}
       WHERE ${base} ${ridFilter} AND (m.chunk_count = 1 OR c.idx IS NOT NULL)
       ORDER BY m.rid, c.idx LIMIT $1`,
      params,
    );
    return rows.map((r) => ({
      id: r.id,
      agentId: r.agent_id,
      content: r.idx === null ? r.content : r.content.slice(r.start_at ?? 0, r.end_at ?? r.content.length),
      revision: Number(r.revision),
      embeddingAttempts: Number(r.embedding_attempts),
      ...(r.idx === null ? {} : { chunk: r.idx }),
    }));
  });
}

type CommitRow = { rid: string; agent_id: string; revision: string; chunk_count: number; held: boolean };

/** Rows still waiting for an embedding: a commit moves only these (another worker may have settled one). */
const AWAITING = "embedding_state IN ('pending', 'error')";

/**
 * Moves a row to `state` and releases its claim; `awaiting` requires it to be `pending` or `error` still.
 * Returns whether the row changed (the statement's own count, so two commits of one row count it once).
 */
async function setState(
  ctx: PgContext,
  db: pg.PoolClient,
  rid: number,
  state: 'ready' | 'error' | 'ftsOnly',
  awaiting: boolean,
  code?: string,
): Promise<boolean> {
  const set =
    state === 'ready'
      ? "embedding_state = 'ready', embedding_fingerprint = $2"
      : state === 'error'
        ? `embedding_state = 'error', embedding_fingerprint = NULL, embedding_attempts = embedding_attempts + 1,
           embedding_error = $2::text, embedding_failed_at = ${SERVER_NOW}`
        : "embedding_state = 'ftsOnly', embedding_fingerprint = NULL";
  const changed = await ctx.run(
    db,
    'write',
    `UPDATE memories SET ${set}, lease_owner = NULL, lease_until = NULL WHERE rid = $1${awaiting ? ` AND ${AWAITING}` : ''}`,
    state === 'ready' ? [rid, ctx.fingerprint] : state === 'error' ? [rid, code ?? null] : [rid],
  );
  return changed === 1;
}

/**
 * One chunk's outcome: its vector (or none) and its chunk state; the memory's state is settled after. False
 * (nothing written) when the chunk is no longer pending: another commit settled it.
 */
async function commitChunk(
  ctx: PgContext,
  db: pg.PoolClient,
  row: CommitRow,
  o: EmbeddingOutcome & { chunk: number },
): Promise<boolean> {
  const rid = Number(row.rid);
  const key = chunkKey(rid, o.chunk);
  if (o.state === 'error') {
    const chunk = (
      await ctx.q<{ vec: number }>(db, 'read', 'SELECT vec FROM memory_chunks WHERE rid = $1 AND idx = $2', [
        rid,
        o.chunk,
      ])
    )[0];
    if (chunk?.vec !== CHUNK_VEC_PENDING) return false;
    await ctx.run(db, 'vector', 'DELETE FROM memory_vectors WHERE key = $1', [key]);
    return true;
  }
  const moved = await ctx.run(
    db,
    'write',
    `UPDATE memory_chunks SET vec = $1 WHERE rid = $2 AND idx = $3 AND vec = ${CHUNK_VEC_PENDING}`,
    [o.state === 'ready' ? CHUNK_VEC_READY : CHUNK_VEC_NONE, rid, o.chunk],
  );
  if (moved !== 1) return false;
  await ctx.run(db, 'vector', 'DELETE FROM memory_vectors WHERE key = $1', [key]);
  if (o.state === 'ready') await writeVector(ctx, db, key, rid, row.agent_id, o.vector);
  return true;
}

/**
 * Commits outcomes in one transaction; rows changed meanwhile, gone, claimed by another worker, or no longer
 * waiting (a row or chunk another commit settled) are `stale` and left untouched: the counts are the
 * transitions this commit made, as in the SQLite store.
 */
export function commitEmbeddings(
  ctx: PgContext,
  outcomes: readonly EmbeddingOutcome[],
): Promise<EmbeddingCommitResult> {
  return ctx.op('commitEmbeddings', async () => {
    checkEmbeddingOutcomes(ctx.profile, outcomes);
    const result = { ready: 0, error: 0, ftsOnly: 0, stale: 0 };
    if (outcomes.length === 0) return result;
    return ctx.tx(async (db) => {
      const chunked = new Map<number, { agentId: string; failed: boolean; code?: string }>();
      for (const o of outcomes) {
        const row = (
          await ctx.q<CommitRow>(
            db,
            'read',
            `SELECT rid, agent_id, revision, chunk_count,
               (lease_owner IS NULL OR lease_owner = $2 OR lease_until < ${SERVER_NOW}) AS held
             FROM memories WHERE id = $1 FOR UPDATE`,
            [o.id, ctx.workerId],
          )
        )[0];
        const isChunked = row !== undefined && row.chunk_count > 1;
        if (
          row === undefined ||
          !row.held ||
          Number(row.revision) !== o.revision ||
          isChunked !== (o.chunk !== undefined) ||
          (o.chunk !== undefined && o.chunk >= row.chunk_count)
        ) {
          result.stale += 1;
          continue;
        }
        const rid = Number(row.rid);
        if (o.chunk !== undefined) {
          if (!(await commitChunk(ctx, db, row, { ...o, chunk: o.chunk }))) {
            result.stale += 1;
            continue;
          }
          result[o.state] += 1;
          const entry = chunked.get(rid) ?? { agentId: row.agent_id, failed: false };
          if (o.state === 'error') {
            entry.failed = true;
            // The first failed chunk's code is the memory's.
            if (o.code !== undefined) entry.code ??= o.code;
          }
          chunked.set(rid, entry);
          continue;
        }
        // Only a row still waiting moves (another worker may have settled it since this one read it).
        if (!(await setState(ctx, db, rid, o.state, true, o.state === 'error' ? o.code : undefined))) {
          result.stale += 1;
          continue;
        }
        result[o.state] += 1;
        if (ctx.profile !== null)
          await ctx.run(db, 'vector', 'DELETE FROM memory_vectors WHERE key = $1', [rid]);
        if (o.state === 'ready') await writeVector(ctx, db, rid, rid, row.agent_id, o.vector);
      }
      for (const [rid, { failed, code }] of chunked) {
        if (failed) {
          await setState(ctx, db, rid, 'error', false, code);
          continue;
        }
        const counts = (
          await ctx.q<{ pending: string; ready: string }>(
            db,
            'read',
            `SELECT count(*) FILTER (WHERE vec = ${CHUNK_VEC_PENDING}) AS pending,
               count(*) FILTER (WHERE vec = ${CHUNK_VEC_READY}) AS ready FROM memory_chunks WHERE rid = $1`,
            [rid],
          )
        )[0];
        if (Number(counts?.pending ?? 0) > 0) continue;
        await setState(ctx, db, rid, Number(counts?.ready ?? 0) > 0 ? 'ready' : 'ftsOnly', false);
      }
      return result;
    });
  });
}

/** Active `pending` rows, in total and per agent. */
export function countEmbeddingBacklog(ctx: PgContext): Promise<EmbeddingBacklog> {
  return ctx.op('countEmbeddingBacklog', async () => {
    const rows = await ctx.q<{ agent_id: string; n: string }>(
      ctx.pool,
      'read',
      `SELECT agent_id, count(*) AS n FROM memories WHERE embedding_state = 'pending' AND lifecycle = 'active'
       GROUP BY agent_id ORDER BY agent_id COLLATE "C"`,
    );
    const byAgent: Record<string, number> = {};
    let total = 0;
    for (const r of rows) {
      byAgent[r.agent_id] = Number(r.n);
      total += Number(r.n);
    }
    return { total, byAgent };
  });
}

/** The explicit re-index: drops every vector, rebinds the vector table to `profile` (or none), resets rows. */
export function resetEmbeddings(ctx: PgContext, profile: EmbeddingProfile | null): Promise<void> {
  return ctx.op('resetEmbeddings', async () => {
    if (profile !== null) {
      const ok =
        typeof profile === 'object' &&
        typeof profile.id === 'string' &&
        profile.id.length > 0 &&
        profile.id.length <= 128 &&
        !/[\u0000-\u001f]/.test(profile.id) &&
        Number.isSafeInteger(profile.dimensions) &&
        profile.dimensions >= 1 &&
        profile.dimensions <= 8192;
      if (!ok) throw invalidInput('embedding profile');
    }
    const next = profile === null ? null : { id: profile.id, dimensions: profile.dimensions };
    const fingerprint = embeddingFingerprint(next);
    await ctx.tx(async (db) => {
      await ctx.run(db, 'meta', 'DROP TABLE IF EXISTS memory_vectors');
      if (next !== null) {
        await ensurePgvector(ctx, db);
        await ctx.run(db, 'meta', vectorTableSql(next.dimensions));
      }
      await ctx.run(
        db,
        'write',
        "UPDATE memories SET embedding_state = 'pending', embedding_fingerprint = NULL, embedding_attempts = 0, lease_owner = NULL, lease_until = NULL",
      );
      await ctx.run(db, 'write', `UPDATE memory_chunks SET vec = ${CHUNK_VEC_PENDING} WHERE vec <> 0`);
      await setMeta(ctx, db, 'embedding_fingerprint', fingerprint);
    });
    ctx.bindProfile(next, fingerprint);
  });
}
