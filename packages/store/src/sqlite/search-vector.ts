/**
 * The vector arm of the read slice: k-NN inside the agent's sqlite-vec partition.
 */
import { EngramStoreError, invalidInput } from '../errors.js';
import type { VectorHit, VectorQuery } from '../types.js';
import { validateAgentId, validateLimit, validateVector } from '../validate.js';
import { agentHasChunks, CHUNK_KEY_SPAN, chunkSpan } from './chunks.js';
import type { StoreContext } from './context.js';

/** How many chunk neighbours are asked for per wanted memory when the agent has chunked memories. */
const CHUNK_OVERSAMPLING = 4;
/** sqlite-vec's largest k. */
const MAX_KNN = 4096;

/**
 * k-NN in the agent's vector partition; cosine distance, similarity = 1 − distance; nearest first. A chunked
 * memory is as near as its nearest chunk, which the hit names.
 */
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
    // Chunk vectors: several may belong to one memory, so a store with chunked memories asks the index for
    // more neighbours and keeps the nearest chunk of each memory (max similarity over its chunks). When the
    // nearest chunks crowd into fewer than k memories (long memories have many chunks) and the index has
    // more, it asks again with a wider net, so chunking never starves the arm of candidates.
    const chunked = agentHasChunks(ctx, agentId);
    let kk = chunked ? Math.min(k * CHUNK_OVERSAMPLING, MAX_KNN) : k;
    type Row = { id: string; distance: number | null; key: number; rid: number; chunks: number; got: number };
    let rows: Row[];
    try {
      for (;;) {
        rows = ctx
          .stmt(
            'vector',
            `WITH knn AS MATERIALIZED (
               SELECT rowid, distance FROM memories_vec WHERE embedding MATCH @v AND k = @kk AND agent_id = @agent
             )
             SELECT m.id AS id, min(knn.distance) AS distance, knn.rowid AS key, m.rid AS rid,
                    m.chunk_count AS chunks, (SELECT count(*) FROM knn) AS got
             FROM knn CROSS JOIN memories m ON m.rid = knn.rowid % ${CHUNK_KEY_SPAN}
             WHERE m.agent_id = @agent
             GROUP BY m.rid
             ORDER BY distance, m.id LIMIT @k`,
          )
          .all<Row>({ v: vector, k, kk, agent: agentId });
        const got = rows[0]?.got ?? 0;
        if (!chunked || rows.length >= k || got < kk || kk >= MAX_KNN) break;
        kk = Math.min(kk * CHUNK_OVERSAMPLING, MAX_KNN);
      }
    } catch (err) {
      ctx.emitWarmup('failed');
      throw err;
    }
    ctx.emitWarmup(rows.length > 0 ? 'warm' : 'cold');
    const hits: VectorHit[] = [];
    for (const r of rows) {
      if (r.distance === null || !Number.isFinite(r.distance)) continue;
      const span =
        r.chunks > 1 ? chunkSpan(ctx, agentId, r.rid, Math.floor(r.key / CHUNK_KEY_SPAN)) : undefined;
      hits.push({
        id: r.id,
        distance: r.distance,
        similarity: 1 - r.distance,
        ...(span === undefined ? {} : { chunk: span }),
      });
    }
    return hits;
  });
}
