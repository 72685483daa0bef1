/**
 * The vector arm of the read slice: k-NN inside the agent's sqlite-vec partition, with filters applied inside
 * the candidate query (over-fetch and refill, then an exact scan) so that a filter never starves the top k.
 * A user scope is applied inside the k-NN as well (the `user_key` metadata column, `user-key.ts`), so vec0 ranks
 * only the scope's vectors. With a quantised index the k-NN is a coarse pass rescored by exact float distances
 * (`vector-quant.ts`).
 */

import type { VectorHit, VectorQuery } from '@engram/store/port-kit';
import { validateVectorQuery } from '@engram/store/port-kit';
import { agentHasChunks, CHUNK_KEY_SPAN, chunkSpan } from './chunks.js';
import type { StoreContext } from './context.js';
import {
  checkedFilterParams,
  checkedTimeParams,
  type FilterParams,
  filterSql,
  type TimeParams,
  tagsSql,
  timeSql,
} from './filters.js';
import { compareIds } from './id-order.js';
import { knnUsers } from './user-key.js';
import { followVectorIndex, knnParams, knnSql, MAX_KNN, planKnn } from './vector-quant.js';

/** How many chunk neighbours are asked for per wanted memory when the agent has chunked memories. */
const CHUNK_OVERSAMPLING = 4;
/** How many more neighbours each round of a filtered search asks for. */
const FILTER_OVERSAMPLING = 4;
/**
 * A filtered k-NN that would need more neighbours than this in its next round scans the passing rows exactly
 * instead: sqlite-vec's k-NN costs more the larger its k (measured at 100k 384-d rows with 6 % of them passing:
 * a second round of k ≈ 1,000 made the arm about 1.7× slower than the exact scan of the passing rows).
 */
const EXACT_SCAN_ABOVE = 800;

/**
 * The neighbours the first k-NN round of a search for `k` asks the index for: `k`, ×4 when the agent has chunked
 * memories, ×4 when filtered (×16 both), at most sqlite-vec's largest k. The search plans with it, and so does
 * the vector worker's dispatch (`vector-partition.ts`), so both size the same scan.
 */
export function firstRoundK(k: number, filtered: boolean, chunked: boolean): number {
  return Math.min(k * (filtered ? FILTER_OVERSAMPLING : 1) * (chunked ? CHUNK_OVERSAMPLING : 1), MAX_KNN);
}

/** The rows a k-NN round found, grouped by memory: nearest chunk first. */
type Row = { id: string; distance: number | null; key: number; rid: number; chunks: number };

/**
 * One validated k-NN request: what `runVectorPlan` needs, plain data only (it is posted to the vector worker
 * as it is, see `vector-worker.ts`).
 */
export interface VectorPlan {
  readonly agentId: string;
  readonly vector: Float32Array;
  readonly k: number;
  /** The filter parameters, or null for the unfiltered k-NN. */
  readonly scope: Scope | null;
}

/**
 * Runs a validated k-NN somewhere else (the vector worker): a promise of the hits, or undefined to run it on
 * the store's own connection. A rejected promise is never the search's answer: the k-NN then runs here.
 */
export type VectorOffload = (ctx: StoreContext, plan: VectorPlan) => Promise<VectorHit[]> | undefined;

/**
 * k-NN in the agent's vector partition; cosine distance, similarity = 1 − distance; nearest first. A chunked
 * memory is as near as its nearest chunk, which the hit names. With kind, tag, scope, metadata or time
 * filters, the nearest rows passing them: the index is asked for more neighbours (×4 per round) until `k`
 * pass or the partition is exhausted, and past sqlite-vec's largest k the passing rows are scanned exactly.
 * With `offload` (the vector worker) the validated request may run on another connection to the same file;
 * when that fails for any reason the k-NN runs on this connection, so the answer never changes.
 */
export function searchVector(
  ctx: StoreContext,
  query: VectorQuery,
  offload?: VectorOffload,
): Promise<readonly VectorHit[]> {
  // `op` resolves with the callback's value, so a returned promise (the worker's answer) is followed.
  return ctx.op<readonly VectorHit[] | Promise<readonly VectorHit[]>>('searchVector', () => {
    const plan = planVectorSearch(ctx, query);
    // The file's vector index setting, in case another connection changed it (see `followVectorIndex`).
    followVectorIndex(ctx);
    const remote = offload?.(ctx, plan);
    if (remote === undefined) return runVectorHere(ctx, plan);
    return remote.then(
      (hits) => {
        ctx.emitWarmup(hits.length > 0 ? 'warm' : 'cold');
        return hits;
      },
      () => ctx.op('searchVector', () => runVectorHere(ctx, plan)),
    );
  }) as Promise<readonly VectorHit[]>;
}

/** The k-NN on the store's own connection, with the warm-up report. */
function runVectorHere(ctx: StoreContext, plan: VectorPlan): VectorHit[] {
  let hits: VectorHit[];
  try {
    hits = runVectorPlan(ctx, plan);
  } catch (err) {
    ctx.emitWarmup('failed');
    throw err;
  }
  ctx.emitWarmup(hits.length > 0 ? 'warm' : 'cold');
  return hits;
}

/** Validates a vector query into a plan (the checks both stores share: `query-checks.ts`). */
function planVectorSearch(ctx: StoreContext, query: VectorQuery): VectorPlan {
  const q = validateVectorQuery(query, ctx.profile === null ? null : ctx.profile.dimensions);
  const scope: Scope | null = q.restricted
    ? {
        kinds: q.kinds === null ? null : JSON.stringify(q.kinds),
        tags: JSON.stringify(q.tags),
        ...checkedFilterParams(q.filter),
        ...checkedTimeParams(q.time, 3),
      }
    : null;
  return { agentId: q.agentId, vector: q.vector, k: q.k, scope };
}

/**
 * The k-NN of a validated plan over `ctx`'s connection: the same code on the store's connection and on the
 * vector worker's.
 */
export function runVectorPlan(ctx: StoreContext, plan: VectorPlan): VectorHit[] {
  const { agentId, vector, k, scope } = plan;
  // Chunk vectors: several may belong to one memory, so a store with chunked memories asks the index for
  // more neighbours and keeps the nearest chunk of each memory (max similarity over its chunks). When the
  // nearest chunks crowd into fewer than k memories (long memories have many chunks) and the index has
  // more, it asks again with a wider net, so chunking never starves the arm of candidates.
  const chunked = agentHasChunks(ctx, agentId);
  return scope === null && !chunked
    ? nearestMemories(ctx, agentId, vector, k)
    : toHits(
        ctx,
        agentId,
        scope === null
          ? nearest(ctx, agentId, vector, k)
          : nearestPassing(ctx, agentId, vector, k, chunked, scope),
      );
}

/** The hits of grouped rows: a finite distance each, and the matching chunk of a chunked memory. */
function toHits(ctx: StoreContext, agentId: string, rows: readonly Row[]): VectorHit[] {
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
}

/**
 * The unfiltered k-NN of an agent without chunked memories (one vector per memory, so the neighbours are the
 * memories): one statement, the float index's k-NN (or the quantised coarse pass with its rescoring) joined to
 * the memories for their ids. This is the hot path of every hybrid search, so the statement returns bare value
 * arrays in the k-NN's order and the order by distance, then id, is checked here: the rows come nearest first,
 * so sorting is needed only when ties on the distance are not in id order (the comparison the statement's
 * `ORDER BY distance, m.id` did, without a sorter in SQLite or an object per row).
 */
function nearestMemories(ctx: StoreContext, agentId: string, vector: Float32Array, k: number): VectorHit[] {
  const plan = planKnn(ctx, agentId, k, vector.length);
  const rows = ctx
    .stmt(
      'vector',
      `WITH knn AS MATERIALIZED (
         ${knnSql(ctx, plan)})
       SELECT m.id, knn.distance
       FROM knn CROSS JOIN memories m ON m.rid = knn.rowid
       WHERE m.agent_id = @agent`,
    )
    .values<[string, number | null]>({
      v: vector,
      kk: k,
      agent: agentId,
      ...knnParams(ctx, plan, vector, k),
    });
  const hits: VectorHit[] = [];
  let sorted = true;
  let last: VectorHit | undefined;
  for (const [id, distance] of rows) {
    if (distance === null || !Number.isFinite(distance)) continue;
    const hit: VectorHit = { id, distance, similarity: 1 - distance };
    if (
      last !== undefined &&
      (distance < last.distance || (distance === last.distance && compareIds(id, last.id) < 0))
    ) {
      sorted = false;
    }
    hits.push(hit);
    last = hit;
  }
  if (!sorted) hits.sort(byDistanceThenId);
  return hits.length > k ? hits.slice(0, k) : hits;
}

function byDistanceThenId(a: VectorHit, b: VectorHit): number {
  return a.distance - b.distance || compareIds(a.id, b.id);
}

/**
 * The unfiltered k-NN of an agent with chunked memories: the nearest chunk of each memory. When the nearest
 * chunks crowd into fewer than k memories (long memories have many chunks) and the index has more, it asks
 * again with a wider net, so chunking never starves the arm.
 */
function nearest(ctx: StoreContext, agentId: string, vector: Float32Array, k: number): Row[] {
  let kk = firstRoundK(k, false, true);
  for (;;) {
    const plan = planKnn(ctx, agentId, kk, vector.length);
    const rows = ctx
      .stmt(
        'vector',
        `WITH knn AS MATERIALIZED (
           ${knnSql(ctx, plan)})
         SELECT m.id AS id, min(knn.distance) AS distance, knn.rowid AS key, m.rid AS rid, m.chunk_count AS chunks,
           (SELECT count(*) FROM knn) AS raw
         FROM knn CROSS JOIN memories m ON m.rid = knn.rowid % ${CHUNK_KEY_SPAN}
         WHERE m.agent_id = @agent
         GROUP BY m.rid
         ORDER BY distance, m.id LIMIT @k`,
      )
      .all<Row & { raw: number }>({ v: vector, k, kk, agent: agentId, ...knnParams(ctx, plan, vector, kk) });
    const raw = rows[0]?.raw ?? 0;
    if (rows.length >= k || raw < kk || kk >= MAX_KNN) return rows;
    kk = Math.min(kk * CHUNK_OVERSAMPLING, MAX_KNN);
  }
}

/** The filters of the filtered k-NN over `m`: only the clauses that apply (see `filters.ts`). */
export type Scope = FilterParams & TimeParams & { readonly kinds: string | null; readonly tags: string };
function passingWhere(scope: Scope): string {
  return `m.agent_id = @agent
  ${scope.kinds === null ? '' : 'AND m.kind IN (SELECT value FROM json_each(@kinds))'}
  ${tagsSql(scope.tags)}
  AND ${timeSql(scope)} AND ${filterSql(scope)}`;
}

/** Filtered k-NN: over-fetch and refill, then an exact scan of the passing rows when the index's k runs out. */
function nearestPassing(
  ctx: StoreContext,
  agentId: string,
  vector: Float32Array,
  k: number,
  chunked: boolean,
  scope: Scope,
): Row[] {
  const where = passingWhere(scope);
  // The user scope is applied inside the k-NN too (`user-key.ts`): vec0 scans only the scope's vectors, so the
  // neighbours it returns are the scope's nearest; the candidate query's own user condition stays the rule.
  const { users, uk } = knnUsers(scope);
  const userParams = users === 'none' ? {} : { uk: BigInt(uk) };
  let kk = firstRoundK(k, true, chunked);
  for (;;) {
    const plan = planKnn(ctx, agentId, kk, vector.length);
    const rows = ctx
      .stmt(
        'vector',
        `WITH knn AS MATERIALIZED (
           ${knnSql(ctx, plan, users)})
         SELECT m.id AS id, min(knn.distance) AS distance, knn.rowid AS key, m.rid AS rid, m.chunk_count AS chunks,
           (SELECT count(*) FROM knn) AS raw
         FROM knn CROSS JOIN memories m ON m.rid = knn.rowid % ${CHUNK_KEY_SPAN}
         WHERE ${where}
         GROUP BY m.rid
         ORDER BY distance, m.id LIMIT @k`,
      )
      .all<Row & { raw: number }>({
        v: vector,
        k,
        kk,
        agent: agentId,
        ...scope,
        ...userParams,
        ...knnParams(ctx, plan, vector, kk),
      });
    if (rows.length >= k) return rows;
    // Fewer passing rows than k: either the partition has no more neighbours, or more must be looked at.
    const raw =
      rows[0]?.raw ??
      ctx.stmt('vector', `SELECT count(*) AS n FROM (${knnSql(ctx, plan, users)})`).get<{ n: number }>({
        v: vector,
        kk,
        agent: agentId,
        ...userParams,
        ...knnParams(ctx, plan, vector, kk),
      })?.n ??
      0;
    if (raw < kk) return rows;
    if (kk >= MAX_KNN) break;
    // The share of neighbours that passed says how wide the next round must be (none passed: ×4, the usual step): a
    // round that would need more than the index's largest k goes straight to the exact scan (a selective filter,
    // such as one user of many, bounds that scan) instead of widening round by round up to it.
    const needed = rows.length === 0 ? kk * FILTER_OVERSAMPLING : Math.ceil((k / rows.length) * kk * 1.25);
    if (rows.length > 0 && needed > EXACT_SCAN_ABOVE) break;
    kk = Math.min(Math.max(needed, kk * 2), MAX_KNN);
  }
  // Exact scan: the distance of every vector of every passing row (the filter bounds the work).
  return ctx
    .stmt(
      'vector',
      `WITH keys(rid, key) AS (
         SELECT m.rid, m.rid FROM memories m WHERE m.chunk_count <= 1 AND ${where}
         UNION ALL
         SELECT m.rid, m.rid + c.idx * ${CHUNK_KEY_SPAN} FROM memories m
         CROSS JOIN memory_chunks c ON c.agent_id = m.agent_id AND c.rid = m.rid
         WHERE m.chunk_count > 1 AND ${where})
       SELECT m.id AS id, min(vec_distance_cosine(v.embedding, @v)) AS distance, keys.key AS key, m.rid AS rid,
         m.chunk_count AS chunks
       FROM keys CROSS JOIN memories_vec v ON v.rowid = keys.key
       CROSS JOIN memories m ON m.rid = keys.rid
       GROUP BY m.rid
       ORDER BY distance, m.id LIMIT @k`,
    )
    .all<Row>({ v: vector, k, agent: agentId, ...scope });
}
