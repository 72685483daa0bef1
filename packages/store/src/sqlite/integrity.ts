/**
 * The integrity slice (maintenance work, off the hot path): repair of rows whose vector or word-index entry is
 * missing, and pruning of vector and FTS rows whose memory is gone.
 */
import { validateAgentId, validateLimit } from '../validate.js';
import type { RepairEmbeddingIntegrityOptions } from './config.js';
import type { StoreContext } from './context.js';
import { deleteFts, deleteVector, writeFts } from './mirrors.js';

/**
 * Cheap integrity repair of one agent: `ready` rows without a vector (or with another fingerprint) and rows
 * missing from the word index are reset to `pending` / re-indexed. Bounded by `limit`.
 */
export function repairEmbeddingIntegrity(
  ctx: StoreContext,
  agentId: string,
  options: RepairEmbeddingIntegrityOptions = {},
): Promise<{ readonly repaired: number }> {
  return ctx.op('repairEmbeddingIntegrity', () => {
    validateAgentId(agentId);
    const limit = validateLimit(options.limit, 'limit', 100_000, 1000);
    return ctx.tx(() => {
      let repaired = 0;
      const vecCond =
        ctx.profile === null ? '' : 'OR NOT EXISTS (SELECT 1 FROM memories_vec v WHERE v.rowid = m.rid)';
      const broken = ctx
        .stmt(
          'read',
          `SELECT m.rid AS rid FROM memories m
           WHERE m.agent_id = @agent AND m.embedding_state = 'ready'
             AND (m.embedding_fingerprint IS NOT @fp ${vecCond})
           ORDER BY m.rid LIMIT @limit`,
        )
        .all<{ rid: number }>({ agent: agentId, fp: ctx.profile === null ? null : ctx.fingerprint, limit });
      for (const r of broken) {
        deleteVector(ctx, r.rid);
        ctx
          .stmt(
            'write',
            "UPDATE memories SET embedding_state = 'pending', embedding_fingerprint = NULL WHERE rid = ?",
          )
          .run(r.rid);
        repaired += 1;
      }
      if (repaired < limit) {
        const missing = ctx
          .stmt(
            'read',
            `SELECT m.rid AS rid, m.content AS content, m.has_cjk AS has_cjk FROM memories m
             WHERE m.agent_id = @agent AND NOT EXISTS (SELECT 1 FROM memories_fts_words f WHERE f.rowid = m.rid)
             ORDER BY m.rid LIMIT @limit`,
          )
          .all<{ rid: number; content: string; has_cjk: number }>({
            agent: agentId,
            limit: limit - repaired,
          });
        for (const r of missing) {
          deleteFts(ctx, r.rid, r.has_cjk === 1);
          writeFts(ctx, r.rid, agentId, r.content);
          repaired += 1;
        }
      }
      return { repaired };
    });
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
        // One anti-join: a vector whose row is gone, not `ready`, or filed under another agent.
        const orphans = ctx
          .stmt(
            'vector',
            `SELECT v.rowid AS rid FROM memories_vec v LEFT JOIN memories m ON m.rid = v.rowid
             WHERE ${agentId === undefined ? '' : 'v.agent_id = @agent AND'}
               (m.rid IS NULL OR m.embedding_state <> 'ready' OR m.agent_id <> v.agent_id)`,
          )
          .all<{ rid: number | bigint }>(params);
        for (const v of orphans) {
          ctx.stmt('vector', 'DELETE FROM memories_vec WHERE rowid = ?').run(v.rid);
          pruned += 1;
        }
      }
      // FTS rows (either index) whose row is gone; scoped to the agent's postings when one is given.
      const scope = (t: string): string => (agentId === undefined ? '' : `${t} MATCH @match AND`);
      const ftsOrphans = ctx
        .stmt(
          'fts',
          `SELECT rowid AS rid FROM memories_fts_words
             WHERE ${scope('memories_fts_words')} rowid NOT IN (SELECT rid FROM memories)
           UNION
           SELECT rowid AS rid FROM memories_fts_trigram
             WHERE ${scope('memories_fts_trigram')} rowid NOT IN (SELECT rid FROM memories)`,
        )
        .all<{ rid: number }>(agentId === undefined ? {} : { match: `agent : "${ctx.agentToken(agentId)}"` });
      for (const f of ftsOrphans) {
        deleteFts(ctx, f.rid, true);
        pruned += 1;
      }
      return { pruned };
    });
  });
}
