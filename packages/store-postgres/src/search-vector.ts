/**
 * The vector arm on PostgreSQL: pgvector HNSW (cosine) k-NN with the agent as a condition of the index scan.
 * Iterative index scans (`hnsw.iterative_scan = relaxed_order`, pgvector ≥ 0.8) keep scanning the graph until
 * enough rows of the agent are found, so a filtered k-NN never starves however small the agent's share of the
 * table; the outer query restores exact distance order. A chunked memory is as near as its nearest chunk.
 */
import type { VectorHit, VectorQuery } from '@engram/store';
import { validateVectorQuery } from '@engram/store/port-kit';
import type { PgContext } from './context.js';
import { CHUNK_KEY_SPAN, type ChunkColumns, chunkOf } from './derived.js';
import { filterSql, timeSql } from './filters.js';
import { vectorLiteral } from './rows.js';
import { vectorColumnType } from './schema.js';

/** How many chunk neighbours are asked for per wanted memory (as in the SQLite store). */
const CHUNK_OVERSAMPLING = 4;
const MAX_KNN = 4096;

/** k-NN in the agent's vectors; cosine distance, similarity = 1 − distance; nearest first. */
export function searchVector(ctx: PgContext, query: VectorQuery): Promise<readonly VectorHit[]> {
  return ctx.op('searchVector', async () => {
    // The checks both stores share (`@engram/store/port-kit`): every filter is checked, given or not
    // restrictive (a bad one is refused, never ignored). With any of them, the candidate query joins the rows
    // and filters inside the k-NN: the iterative index scan keeps walking the graph until k passing rows are
    // found (or the agent's vectors run out), so a filter never starves the top k.
    const { agentId, vector, k, kinds, tags, restricted } = validateVectorQuery(
      query,
      ctx.profile === null ? null : ctx.profile.dimensions,
    );
    const type = vectorColumnType(vector.length);
    type Row = { id: string; distance: number | null } & ChunkColumns;
    let rows: Row[];
    try {
      rows = await ctx.readTx(async (db) => {
        // One statement says whether the agent has chunks (then the first k-NN asks for more neighbours) and
        // sets the scan's settings for that k-NN, local to the transaction.
        const plainK = k;
        const chunkedK = Math.min(k * CHUNK_OVERSAMPLING, MAX_KNN);
        const ef = (kk: number): string => String(Math.max(ctx.vectorSearch.efSearch, Math.min(kk, 1000)));
        const setSql = ctx.vectorSearch.exact
          ? "set_config('enable_indexscan', 'off', true)"
          : `set_config('hnsw.iterative_scan', 'relaxed_order', true),
             set_config('hnsw.ef_search', CASE WHEN c.chunked THEN $2 ELSE $3 END, true)`;
        const setParams = ctx.vectorSearch.exact ? [agentId] : [agentId, ef(chunkedK), ef(plainK)];
        const first = await ctx.q<{ chunked: boolean }>(
          db,
          'read',
          `SELECT c.chunked, ${setSql}
           FROM (SELECT EXISTS (SELECT 1 FROM memory_chunks WHERE agent_id = $1) AS chunked) c`,
          setParams,
        );
        const chunked = first[0]?.chunked === true;
        let configured = true;
        const knn = async (kk: number): Promise<{ rows: Row[]; raw: number }> => {
          // A wider net (below) sets the search width for its own k-NN.
          if (!configured && !ctx.vectorSearch.exact) {
            await ctx.run(db, 'meta', "SELECT set_config('hnsw.ef_search', $1, true)", [ef(kk)]);
          }
          configured = false;
          const params: unknown[] = [vectorLiteral(vector), agentId, kk, k];
          if (restricted) params.push(kinds, tags);
          const scope = restricted
            ? `JOIN memories f ON f.rid = v.rid WHERE v.agent_id = $2 AND ($5::text[] IS NULL OR f.kind = ANY($5::text[]))
               AND f.tags @> $6::text[] AND ${timeSql(query.time, params, 'any', false, 'f')}
               AND ${filterSql(query.filter, params, 'f')}`
            : 'WHERE v.agent_id = $2';
          const got = await ctx.q<Row & { raw: string }>(
            db,
            'vector',
            `WITH knn AS MATERIALIZED (
               SELECT v.key, v.rid, v.embedding <=> $1::${type} AS distance FROM memory_vectors v
               ${scope} ORDER BY v.embedding <=> $1::${type} LIMIT $3)
             SELECT r.*, c.start_at, c.end_at FROM (
               SELECT m.id, min(knn.distance) AS distance, (array_agg(knn.key ORDER BY knn.distance))[1] AS key,
                 m.rid, m.chunk_count, (SELECT count(*) FROM knn) AS raw
               FROM knn JOIN memories m ON m.rid = knn.rid
               WHERE m.agent_id = $2
               GROUP BY m.rid ORDER BY distance, m.id COLLATE "C" LIMIT $4) r
             LEFT JOIN memory_chunks c ON r.chunk_count > 1 AND c.rid = r.rid AND c.idx = r.key / ${CHUNK_KEY_SPAN}
             ORDER BY r.distance, r.id COLLATE "C"`,
            params,
          );
          return { rows: got, raw: got.length === 0 ? 0 : Number(got[0]?.raw ?? 0) };
        };
        let kk = chunked ? chunkedK : plainK;
        // When the nearest kk vectors are chunks of fewer than k memories (long memories have many chunks)
        // and the agent has more vectors, ask again with a wider net, as the SQLite store does: chunking never
        // starves the arm of memories.
        for (;;) {
          const found = await knn(kk);
          if (!chunked || found.rows.length >= k || found.raw < kk || kk >= MAX_KNN) return found.rows;
          kk = Math.min(kk * CHUNK_OVERSAMPLING, MAX_KNN);
        }
      });
    } catch (err) {
      ctx.emitWarmup('failed');
      throw err;
    }
    ctx.emitWarmup(rows.length > 0 ? 'warm' : 'cold');
    const hits: VectorHit[] = [];
    for (const r of rows) {
      const distance = r.distance === null ? Number.NaN : Number(r.distance);
      if (!Number.isFinite(distance)) continue;
      hits.push({
        id: r.id,
        distance,
        similarity: 1 - distance,
        ...(r.start_at === null ? {} : { chunk: chunkOf(r) }),
      });
    }
    return hits;
  });
}
