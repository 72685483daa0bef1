/**
 * The vector arm of the read slice: k-NN inside the agent's sqlite-vec partition.
 */
import { EngramStoreError, invalidInput } from '../errors.js';
import type { VectorHit, VectorQuery } from '../types.js';
import { validateAgentId, validateLimit, validateVector } from '../validate.js';
import type { StoreContext } from './context.js';

/** k-NN in the agent's vector partition; cosine distance, similarity = 1 − distance; nearest first. */
export function searchVector(ctx: StoreContext, query: VectorQuery): Promise<readonly VectorHit[]> {
  return ctx.op('searchVector', () => {
    if (typeof query !== 'object' || query === null) throw invalidInput('query must be an object');
    const agentId = validateAgentId(query.agentId);
    if (ctx.profile === null) {
      throw new EngramStoreError(
        'ENGRAM_STORE_VECTOR_UNAVAILABLE',
        'the store has no embedder profile, so it has no vector index',
      );
    }
    const vector = validateVector(query.vector, ctx.profile.dimensions, 'query.vector');
    const k = validateLimit(query.k, 'k', 1000);
    let rows: { id: string; distance: number | null }[];
    try {
      rows = ctx
        .stmt(
          'vector',
          `SELECT m.id AS id, knn.distance AS distance
           FROM (SELECT rowid, distance FROM memories_vec WHERE embedding MATCH @v AND k = @k AND agent_id = @agent) knn
           JOIN memories m ON m.rid = knn.rowid
           WHERE m.agent_id = @agent
           ORDER BY knn.distance, m.id`,
        )
        .all<{ id: string; distance: number | null }>({ v: vector, k, agent: agentId });
    } catch (err) {
      ctx.emitWarmup('failed');
      throw err;
    }
    ctx.emitWarmup(rows.length > 0 ? 'warm' : 'cold');
    const hits: VectorHit[] = [];
    for (const r of rows) {
      if (r.distance === null || !Number.isFinite(r.distance)) continue;
      hits.push({ id: r.id, distance: r.distance, similarity: 1 - r.distance });
    }
    return hits;
  });
}
