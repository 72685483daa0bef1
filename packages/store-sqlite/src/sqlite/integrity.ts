/**
 * The integrity slice (maintenance work, off the hot path): repair of rows whose vector or word-index entry is
 * missing, and pruning of vector, FTS and BM25-index rows whose memory is gone.
 */
import { validateAgentId, validateLimit } from '@engram/store/port-kit';
import { CHUNK_KEY_SPAN, CHUNK_VEC_PENDING, CHUNK_VEC_READY, chunkKey, dropVectors } from './chunks.js';
import type { RepairEmbeddingIntegrityOptions } from './config.js';
import type { StoreContext } from './context.js';
import { deleteFts, writeFts } from './mirrors.js';
import { repairVectorChunks } from './vector-chunks.js';
import { deleteQuantVector, pruneQuantOrphans, repairQuantVectors } from './vector-quant.js';

function markPending(ctx: StoreContext, rid: number): void {
  ctx
    .stmt(
      'write',
      "UPDATE memories SET embedding_state = 'pending', embedding_fingerprint = NULL WHERE rid = ? AND embedding_state <> 'pending'",
    )
    .run(rid);
}

/**
 * Cheap integrity repair of one agent: `ready` rows without a vector (or with another fingerprint) and rows
 * missing from the word index are reset to `pending` / re-indexed; float vectors without their quantised copy
 * (a quantised index) are quantised again. Bounded by `limit`.
 */
export function repairEmbeddingIntegrity(
  ctx: StoreContext,
  agentId: string,
  options: RepairEmbeddingIntegrityOptions = {},
): Promise<{ readonly repaired: number }> {
  return ctx.op('repairEmbeddingIntegrity', () => {
    validateAgentId(agentId);
    const limit = validateLimit(options.limit, 'limit', 100_000, 1000);
    const result = ctx.tx(() => {
      // Damaged vector chunks first (`vector-chunks.ts`): every later statement on their vectors would fail.
      let repaired = repairVectorChunks(ctx).vectors;
      // Rows bound to another embedder, and short rows whose vector is missing: every vector goes, `pending`.
      const vecCond =
        ctx.profile === null
          ? ''
          : 'OR (m.chunk_count = 1 AND NOT EXISTS (SELECT 1 FROM memories_vec v WHERE v.rowid = m.rid))';
      const broken = ctx
        .stmt(
          'read',
          `SELECT m.rid AS rid, m.chunk_count AS chunks FROM memories m
           WHERE m.agent_id = @agent AND m.embedding_state = 'ready'
             AND (m.embedding_fingerprint IS NOT @fp ${vecCond})
           ORDER BY m.rid LIMIT @limit`,
        )
        .all<{ rid: number; chunks: number }>({
          agent: agentId,
          fp: ctx.profile === null ? null : ctx.fingerprint,
          limit,
        });
      for (const r of broken) {
        dropVectors(ctx, r.rid, agentId, r.chunks);
        markPending(ctx, r.rid);
        repaired += 1;
      }
      // Chunks marked embedded whose vector is missing: that chunk is pending again, and so is its memory
      // (the drain embeds only the missing chunk).
      if (ctx.profile !== null && repaired < limit) {
        const lost = ctx
          .stmt(
            'read',
            `SELECT c.rid AS rid, c.idx AS idx FROM memory_chunks c
             WHERE c.agent_id = @agent AND c.vec = ${CHUNK_VEC_READY}
               AND NOT EXISTS (SELECT 1 FROM memories_vec v WHERE v.rowid = c.rid + c.idx * ${CHUNK_KEY_SPAN})
             ORDER BY c.rid, c.idx LIMIT @limit`,
          )
          .all<{ rid: number; idx: number }>({ agent: agentId, limit: limit - repaired });
        for (const c of lost) {
          ctx
            .stmt(
              'write',
              `UPDATE memory_chunks SET vec = ${CHUNK_VEC_PENDING} WHERE agent_id = ? AND rid = ? AND idx = ?`,
            )
            .run(agentId, c.rid, c.idx);
          markPending(ctx, c.rid);
          repaired += 1;
        }
      }
      // Float vectors without their quantised copy (a quantised index) get it again.
      repaired += repairQuantVectors(ctx, agentId, limit - repaired);
      // Rows (or chunks) missing from the word index are re-indexed, chunk by chunk.
      if (repaired < limit) {
        const missing = ctx
          .stmt(
            'read',
            `SELECT m.rid AS rid, m.content AS content, m.has_cjk AS has_cjk, m.user_id AS user_id, NULL AS idx,
               NULL AS s, NULL AS e
             FROM memories m
             WHERE m.agent_id = @agent AND m.chunk_count = 1
               AND (NOT EXISTS (SELECT 1 FROM memories_fts_words f WHERE f.rowid = m.rid)
                 OR NOT EXISTS (SELECT 1 FROM lexical_docs d WHERE d.rid = m.rid))
             UNION ALL
             SELECT m.rid, m.content, m.has_cjk, m.user_id, c.idx, c.start_at, c.end_at
             FROM memory_chunks c JOIN memories m ON m.rid = c.rid
             WHERE c.agent_id = @agent
               AND (NOT EXISTS (SELECT 1 FROM memories_fts_words f WHERE f.rowid = c.rid + c.idx * ${CHUNK_KEY_SPAN})
                 OR NOT EXISTS (SELECT 1 FROM lexical_docs d WHERE d.rid = c.rid + c.idx * ${CHUNK_KEY_SPAN}))
             LIMIT @limit`,
          )
          .all<{
            rid: number;
            content: string;
            has_cjk: number;
            user_id: string | null;
            idx: number | null;
            s: number;
            e: number;
          }>({
            agent: agentId,
            limit: limit - repaired,
          });
        for (const r of missing) {
          const key = r.idx === null ? r.rid : chunkKey(r.rid, r.idx);
          deleteFts(ctx, key, r.has_cjk === 1);
          writeFts(ctx, key, agentId, r.user_id, r.idx === null ? r.content : r.content.slice(r.s, r.e));
          repaired += 1;
        }
      }
      return { repaired };
    });
    ctx.noteVectorChunksRepaired();
    return result;
  });
}

/** Deletes vectors (of one agent, or all) whose memory row is gone or not `ready`, and orphaned FTS entries. */
export function pruneOrphanedVectors(
  ctx: StoreContext,
  agentId?: string,
): Promise<{ readonly pruned: number }> {
  return ctx.op('pruneOrphanedVectors', () => {
    if (agentId !== undefined) validateAgentId(agentId);
    return ctx.tx(() => {
      let pruned = 0;
      const params = agentId === undefined ? {} : { agent: agentId };
      if (ctx.profile !== null) {
        // One anti-join: a vector whose memory is gone or filed under another agent; for a short memory, one
        // not keyed by its rid or of a row that is not `ready`; for a chunked memory, one of a chunk that is
        // gone or not marked embedded (a partly embedded memory keeps its finished chunks).
        const orphans = ctx
          .stmt(
            'vector',
            `SELECT v.rowid AS rid FROM memories_vec v
             LEFT JOIN memories m ON m.rid = v.rowid % ${CHUNK_KEY_SPAN}
             LEFT JOIN memory_chunks c
               ON c.agent_id = m.agent_id AND c.rid = m.rid AND c.idx = v.rowid / ${CHUNK_KEY_SPAN}
             WHERE ${agentId === undefined ? '' : 'v.agent_id = @agent AND'}
               (m.rid IS NULL OR m.agent_id <> v.agent_id
                 OR (m.chunk_count = 1 AND (v.rowid <> m.rid OR m.embedding_state <> 'ready'))
                 OR (m.chunk_count > 1 AND (c.idx IS NULL OR c.vec <> ${CHUNK_VEC_READY})))`,
          )
          .all<{ rid: number | bigint }>(params);
        for (const v of orphans) {
          ctx.stmt('vector', 'DELETE FROM memories_vec WHERE rowid = ?').run(v.rid);
          deleteQuantVector(ctx, v.rid);
          pruned += 1;
        }
        // Quantised vectors whose float vector is gone.
        pruned += pruneQuantOrphans(ctx, agentId);
      }
      // FTS rows (either index) whose memory is gone or whose chunk index is past the memory's chunks; scoped
      // to the agent's postings when one is given.
      const scope = (t: string): string => (agentId === undefined ? '' : `${t} MATCH @match AND`);
      const live = (t: string, key = 'rowid'): string =>
        `NOT EXISTS (SELECT 1 FROM memories m WHERE m.rid = ${t}.${key} % ${CHUNK_KEY_SPAN}
           AND ${t}.${key} / ${CHUNK_KEY_SPAN} < m.chunk_count)`;
      const ftsOrphans = ctx
        .stmt(
          'fts',
          `SELECT rowid AS rid FROM memories_fts_words
             WHERE ${scope('memories_fts_words')} ${live('memories_fts_words')}
           UNION
           SELECT rowid AS rid FROM memories_fts_trigram
             WHERE ${scope('memories_fts_trigram')} ${live('memories_fts_trigram')}
           UNION
           SELECT rid FROM lexical_docs
             WHERE ${agentId === undefined ? '' : 'agent_id = @agent AND'} ${live('lexical_docs', 'rid')}
           UNION
           SELECT DISTINCT rid FROM lexical_postings
             WHERE ${agentId === undefined ? '' : 'agent_id = @agent AND'} ${live('lexical_postings', 'rid')}
           UNION
           SELECT DISTINCT rid FROM lexical_postings_fresh
             WHERE ${agentId === undefined ? '' : 'agent_id = @agent AND'} ${live('lexical_postings_fresh', 'rid')}`,
        )
        .all<{ rid: number }>(
          agentId === undefined ? {} : { match: `agent : "${ctx.agentToken(agentId)}"`, agent: agentId },
        );
      for (const f of ftsOrphans) {
        deleteFts(ctx, f.rid, true);
        pruned += 1;
      }
      return { pruned };
    });
  });
}
