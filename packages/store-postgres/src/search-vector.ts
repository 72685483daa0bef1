/**
 * The vector arm on PostgreSQL: pgvector HNSW (cosine) k-NN with the agent as a condition of the index scan.
 * Iterative index scans (`hnsw.iterative_scan = relaxed_order`, pgvector ≥ 0.8) keep scanning the graph until
 * enough rows of the agent are found, so a filtered k-NN never starves however small the agent's share of the
 * table; the outer query restores exact distance order. A chunked memory is as near as its nearest chunk.
 * With `briefs` the same statement re-reads each hit as `revalidateBrief` does (its brief, or null when that
 * re-read would drop the row), so revalidating the vector-only candidates of a search costs no round trip.
 */
import type { VectorHit, VectorQuery } from '@engram/store';
import { validateVectorQuery } from '@engram/store/port-kit';
import type { PgContext, Queryable } from './context.js';
import { CHUNK_KEY_SPAN, type ChunkColumns, chunkOf } from './derived.js';
import { filterSql, timeSql } from './filters.js';
import { readScope } from './read.js';
import { BRIEF_COLUMNS, type MemoryRow, toBrief, vectorLiteral } from './rows.js';
import { vectorColumnType } from './schema.js';

/** How many chunk neighbours are asked for per wanted memory (as in the SQLite store). */
const CHUNK_OVERSAMPLING = 4;
const MAX_KNN = 4096;
/** The brief columns of the joined row `m` but its id (the hit's own). */
const BRIEF_FIELDS = BRIEF_COLUMNS.split(', ')
  .filter((column) => column !== 'id')
  .map((column) => `m.${column}`)
  .join(', ');

/**
 * One k-NN as one statement, on any connection: `ch` says whether the agent has chunks; `cfg` sets the scan's
 * settings local to the statement's own transaction (`hnsw.iterative_scan`, and `hnsw.ef_search` to `ef`) and
 * holds the query vector, which the index scan reads through it, so the settings are in force before the scan
 * takes its first row (pgvector reads them then) and are gone after the statement. With `skipChunked` an agent
 * with chunks gets no k-NN (its first one asks for more neighbours, with another width). The statement always
 * returns a row (its `chunked`), and the hits when there are any, nearest first.
 */
function knnSql(type: string, scope: string, ef: string, skip: string, brief: string): string {
  return `WITH ch AS MATERIALIZED (SELECT EXISTS (SELECT 1 FROM memory_chunks WHERE agent_id = $2) AS chunked),
    cfg AS MATERIALIZED (
      SELECT $1::${type} AS q, set_config('hnsw.iterative_scan', 'relaxed_order', true) AS scan,
        set_config('hnsw.ef_search', ${ef}::text, true) AS ef, NOT (${skip}::boolean AND ch.chunked) AS go
      FROM ch),
    knn AS MATERIALIZED (
      SELECT v.key, v.rid, v.embedding <=> (SELECT q FROM cfg) AS distance FROM memory_vectors v
      ${scope} AND (SELECT go FROM cfg) ORDER BY v.embedding <=> (SELECT q FROM cfg) LIMIT $3)
  SELECT ch.chunked, r.*, c.start_at, c.end_at FROM ch
  LEFT JOIN (
    SELECT m.id, min(knn.distance) AS distance, (array_agg(knn.key ORDER BY knn.distance))[1] AS key,
      m.rid, m.chunk_count, (SELECT count(*) FROM knn) AS raw${brief}
    FROM knn JOIN memories m ON m.rid = knn.rid
    WHERE m.agent_id = $2
    GROUP BY m.rid ORDER BY distance, m.id COLLATE "C" LIMIT $4) r ON true
  LEFT JOIN memory_chunks c ON r.chunk_count > 1 AND c.rid = r.rid AND c.idx = r.key / ${CHUNK_KEY_SPAN}
  ORDER BY r.distance, r.id COLLATE "C"`;
}

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
    type Row = {
      chunked: boolean;
      id: string | null;
      distance: number | null;
      raw: string | null;
      /** With `briefs`: whether `revalidateBrief` would keep the row (its brief columns follow). */
      brief_ok?: boolean;
    } & ChunkColumns &
      Partial<Omit<MemoryRow, 'id'>>;
    // The folded re-read: `revalidateBrief`'s options, checked before anything is read (its errors).
    const briefs = query.briefs;
    if (briefs !== undefined) readScope(briefs, []);
    const literal = vectorLiteral(vector);
    const knn = async (
      db: Queryable,
      kk: number,
      skipChunked: boolean,
    ): Promise<{ rows: Row[]; raw: number; chunked: boolean }> => {
      const params: unknown[] = [literal, agentId, kk, k];
      if (restricted) params.push(kinds, tags);
      const scope = restricted
        ? `JOIN memories f ON f.rid = v.rid WHERE v.agent_id = $2 AND ($5::text[] IS NULL OR f.kind = ANY($5::text[]))
           AND f.tags @> $6::text[] AND ${timeSql(query.time, params, 'any', false, 'f')}
           AND ${filterSql(query.filter, params, 'f')}`
        : 'WHERE v.agent_id = $2';
      let brief = '';
      if (briefs !== undefined) {
        // `revalidateBrief`'s conditions and columns on the row already joined (the agent's, by the k-NN).
        const { time, user } = readScope(briefs, params);
        brief = `, (${time} ${user}) AS brief_ok, ${BRIEF_FIELDS}`;
      }
      params.push(String(Math.max(ctx.vectorSearch.efSearch, Math.min(kk, 1000))), skipChunked);
      const got = await ctx.q<Row>(
        db,
        'vector',
        knnSql(type, scope, `$${params.length - 1}`, `$${params.length}`, brief),
        params,
      );
      const rows = got.filter((r) => r.id !== null);
      return { rows, raw: Number(rows[0]?.raw ?? 0), chunked: got[0]?.chunked === true };
    };
    // The first k-NN assumes the agent has no chunks (the common case: one statement); an agent with chunks
    // gets none from it and asks again for more neighbours. When the nearest kk vectors are chunks of fewer
    // than k memories (long memories have many chunks) and the agent has more vectors, it asks again with a
    // wider net, as the SQLite store does: chunking never starves the arm of memories.
    const search = async (db: Queryable): Promise<Row[]> => {
      const first = await knn(db, k, true);
      if (!first.chunked) return first.rows;
      let kk = Math.min(k * CHUNK_OVERSAMPLING, MAX_KNN);
      for (;;) {
        const found = await knn(db, kk, false);
        if (found.rows.length >= k || found.raw < kk || kk >= MAX_KNN) return found.rows;
        kk = Math.min(kk * CHUNK_OVERSAMPLING, MAX_KNN);
      }
    };
    let rows: Row[];
    try {
      // An exact scan turns the index off for the planner, which takes a transaction (`exact` measures recall).
      rows = ctx.vectorSearch.exact
        ? await ctx.tx(async (db) => {
            await ctx.run(db, 'meta', "SELECT set_config('enable_indexscan', 'off', true)");
            return search(db);
          })
        : await search(ctx.pool);
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
        id: r.id as string,
        distance,
        similarity: 1 - distance,
        ...(r.start_at === null ? {} : { chunk: chunkOf(r) }),
        ...(briefs === undefined ? {} : { brief: r.brief_ok === true ? toBrief(r as MemoryRow) : null }),
      });
    }
    return hits;
  });
}
