/**
 * The health and integrity slices on PostgreSQL. Health: zero-filled counts (never rejects). Integrity: rows
 * marked `ready` without their vector (or with another fingerprint) go back to `pending`, and units missing from
 * the BM25 index are re-indexed. Orphans cannot arise here (every derived row references its memory with
 * `ON DELETE CASCADE`), so pruning removes only vectors of rows that are no longer `ready`.
 */
import {
  EMBEDDING_STATES,
  type EmbeddingState,
  LIFECYCLES,
  type Lifecycle,
  MEMORY_KINDS,
  type MemoryKind,
} from '@engram/contracts';
import type { EngramStoreErrorCode, IntegrityResult, StoreHealth } from '@engram/store';
import { validateAgentId, validateLimit } from '@engram/store/port-kit';
import type { PgContext } from './context.js';
import { CHUNK_KEY_SPAN, CHUNK_VEC_PENDING, CHUNK_VEC_READY, indexContents } from './derived.js';
import { classifyPgError } from './errors.js';

/** The health result: counts, or the store error code that prevented them. */
export type HealthResult =
  | { readonly ok: true; readonly health: StoreHealth }
  | { readonly ok: false; readonly code: EngramStoreErrorCode; readonly integrity?: IntegrityResult };

function zeroes<K extends string>(keys: readonly K[]): Record<K, number> {
  return Object.fromEntries(keys.map((k) => [k, 0])) as Record<K, number>;
}

/** Zero-filled counts by kind, lifecycle and embedding state; never rejects. */
export async function health(ctx: PgContext, agentId?: string): Promise<HealthResult> {
  try {
    if (ctx.closed) return { ok: false, code: 'ENGRAM_STORE_CLOSED' };
    if (agentId !== undefined) validateAgentId(agentId);
    const byKind = zeroes<MemoryKind>(MEMORY_KINDS);
    const byLifecycle = zeroes<Lifecycle>(LIFECYCLES);
    const byEmbeddingState = zeroes<EmbeddingState>(EMBEDDING_STATES);
    const agent = agentId ?? null;
    const rows = await ctx.q<{ kind: string; lifecycle: string; state: string; n: string }>(
      ctx.pool,
      'read',
      `SELECT kind, lifecycle, embedding_state AS state, count(*) AS n FROM memories
       WHERE ($1::text IS NULL OR agent_id = $1) GROUP BY kind, lifecycle, embedding_state`,
      [agent],
    );
    let memories = 0;
    let facts = 0;
    for (const r of rows) {
      const n = Number(r.n);
      memories += n;
      if (r.kind in byKind) byKind[r.kind as MemoryKind] += n;
      if (r.lifecycle in byLifecycle) byLifecycle[r.lifecycle as Lifecycle] += n;
      if (r.state in byEmbeddingState) byEmbeddingState[r.state as EmbeddingState] += n;
      if (r.kind === 'fact' && r.lifecycle === 'active') facts += n;
    }
    const counts = await ctx.q<{ events: string; skills: string }>(
      ctx.pool,
      'read',
      `SELECT (SELECT count(*) FROM events WHERE $1::text IS NULL OR agent_id = $1) AS events,
              (SELECT count(*) FROM skills WHERE $1::text IS NULL OR agent_id = $1) AS skills`,
      [agent],
    );
    return {
      ok: true,
      health: {
        totals: {
          memories,
          events: Number(counts[0]?.events ?? 0),
          facts,
          skills: Number(counts[0]?.skills ?? 0),
        },
        byKind,
        byLifecycle,
        byEmbeddingState,
        integrity: { ...ctx.integrity },
      },
    };
  } catch (err) {
    const code = classifyPgError(err, 'health').code;
    const { state, checkedAt } = ctx.integrity;
    return state === 'failed' ? { ok: false, code, integrity: { state, checkedAt } } : { ok: false, code };
  }
}

/** Distinct agents with at least one memory or event, sorted. */
export function listAgents(ctx: PgContext): Promise<readonly string[]> {
  return ctx.op('listAgents', async () => {
    const rows = await ctx.q<{ agent_id: string }>(
      ctx.pool,
      'read',
      'SELECT agent_id FROM (SELECT agent_id FROM memories UNION SELECT agent_id FROM events) a ORDER BY agent_id COLLATE "C"',
    );
    return rows.map((r) => r.agent_id);
  });
}

/** Cheap integrity repair of one agent, bounded by `limit` (default 1000, at most 100,000). */
export function repairEmbeddingIntegrity(
  ctx: PgContext,
  agentId: string,
  options: { readonly limit?: number } = {},
): Promise<{ readonly repaired: number }> {
  return ctx.op('repairEmbeddingIntegrity', async () => {
    validateAgentId(agentId);
    const limit = validateLimit(options.limit, 'limit', 100_000, 1000);
    return ctx.tx(async (db) => {
      let repaired = 0;
      const vecCond =
        ctx.profile === null
          ? ''
          : 'OR (m.chunk_count = 1 AND NOT EXISTS (SELECT 1 FROM memory_vectors v WHERE v.key = m.rid))';
      const broken = await ctx.q<{ rid: string }>(
        db,
        'read',
        `SELECT m.rid FROM memories m WHERE m.agent_id = $1 AND m.embedding_state = 'ready'
           AND (m.embedding_fingerprint IS DISTINCT FROM $2 ${vecCond}) ORDER BY m.rid LIMIT $3 FOR UPDATE`,
        [agentId, ctx.profile === null ? null : ctx.fingerprint, limit],
      );
      if (broken.length > 0) {
        const rids = broken.map((r) => r.rid);
        if (ctx.profile !== null)
          await ctx.run(db, 'vector', 'DELETE FROM memory_vectors WHERE rid = ANY($1::bigint[])', [rids]);
        await ctx.run(
          db,
          'write',
          `UPDATE memory_chunks SET vec = ${CHUNK_VEC_PENDING} WHERE rid = ANY($1::bigint[]) AND vec <> 0`,
          [rids],
        );
        await ctx.run(
          db,
          'write',
          "UPDATE memories SET embedding_state = 'pending', embedding_fingerprint = NULL WHERE rid = ANY($1::bigint[])",
          [rids],
        );
        repaired += broken.length;
      }
      if (ctx.profile !== null && repaired < limit) {
        const lost = await ctx.q<{ rid: string; idx: number }>(
          db,
          'write',
          `UPDATE memory_chunks c SET vec = ${CHUNK_VEC_PENDING} WHERE (c.rid, c.idx) IN (
             SELECT c2.rid, c2.idx FROM memory_chunks c2 WHERE c2.agent_id = $1 AND c2.vec = ${CHUNK_VEC_READY}
               AND NOT EXISTS (SELECT 1 FROM memory_vectors v WHERE v.key = c2.rid + c2.idx * ${CHUNK_KEY_SPAN})
             ORDER BY c2.rid, c2.idx LIMIT $2) RETURNING c.rid, c.idx`,
          [agentId, limit - repaired],
        );
        if (lost.length > 0) {
          await ctx.run(
            db,
            'write',
            "UPDATE memories SET embedding_state = 'pending', embedding_fingerprint = NULL WHERE rid = ANY($1::bigint[]) AND embedding_state <> 'pending'",
            [lost.map((l) => l.rid)],
          );
        }
        repaired += lost.length;
      }
      if (repaired < limit) {
        // Memories with no BM25 unit at all are indexed again from their content.
        const missing = await ctx.q<{ rid: string; content: string }>(
          db,
          'read',
          `SELECT m.rid, m.content FROM memories m WHERE m.agent_id = $1
             AND NOT EXISTS (SELECT 1 FROM lexical_docs d WHERE d.rid = m.rid) ORDER BY m.rid LIMIT $2`,
          [agentId, limit - repaired],
        );
        if (missing.length > 0) {
          const rids = missing.map((r) => r.rid);
          await ctx.run(db, 'write', 'DELETE FROM memory_chunks WHERE rid = ANY($1::bigint[])', [rids]);
          await indexContents(
            ctx,
            db,
            missing.map((r) => ({ rid: Number(r.rid), agentId, content: r.content })),
          );
          repaired += missing.length;
        }
      }
      return { repaired };
    });
  });
}

/** Deletes vectors (of one agent, or all) whose row is not `ready` or whose chunk is not marked embedded. */
export function pruneOrphanedVectors(ctx: PgContext, agentId?: string): Promise<{ readonly pruned: number }> {
  return ctx.op('pruneOrphanedVectors', async () => {
    if (agentId !== undefined) validateAgentId(agentId);
    if (ctx.profile === null) return { pruned: 0 };
    const pruned = await ctx.run(
      ctx.pool,
      'vector',
      `DELETE FROM memory_vectors v USING memories m
       WHERE m.rid = v.rid AND ($1::text IS NULL OR v.agent_id = $1)
         AND (m.agent_id <> v.agent_id
           OR (m.chunk_count = 1 AND (v.key <> m.rid OR m.embedding_state <> 'ready'))
           OR (m.chunk_count > 1 AND NOT EXISTS (SELECT 1 FROM memory_chunks c
                WHERE c.rid = m.rid AND c.idx = v.key / ${CHUNK_KEY_SPAN} AND c.vec = ${CHUNK_VEC_READY})))`,
      [agentId ?? null],
    );
    return { pruned };
  });
}
