/**
 * Opt-in quantised vector search. Beside the float index (`memories_vec`) a store may keep a second vec0 table,
 * `memories_vec_quant`, partitioned by agent like the float one, keyed by the same rowids (a memory's rid, or
 * a chunk's key) and with the same user keys (`user-key.ts`), holding each vector quantised to `int8` (scaled per vector by its largest component, so the
 * cosine is kept) or to `bit` (the sign of each component, compared by Hamming distance), with a copy of the
 * float vector as an auxiliary column. A k-NN then runs on the quantised table for `k × rescore` candidates,
 * and the exact cosine distance of each candidate's float copy orders them: the arm returns the same distances
 * as the exact scan, for the candidates the coarse pass found. The copy is what makes rescoring cheap: vec0
 * keeps its vectors in chunk blobs (up to 1 MiB, `vec0ChunkSize`; 6 MiB at 1536-d in files made before), and
 * reading one of them by rowid walks such a blob (slower than the exact scan rescoring should beat), while an
 * auxiliary value is one row of a plain table. It costs 4 bytes per dimension per vector on top of the quantised vector.
 *
 * The setting is recorded in the meta table (`vector_index`), beside the embedder fingerprint: a store opened
 * with another one is `ENGRAM_STORE_VECTOR_INDEX_MISMATCH`, and changing it is the explicit `resetVectorIndex`,
 * which rebuilds the quantised table from the stored float vectors (no re-embedding; `vector-quant-build.ts`).
 */

import type { VectorIndexOptions, VectorIndexSetting, VectorQuantization } from '@engram/store/port-kit';
import { EngramStoreError } from '@engram/store/port-kit';
import type { SqliteDatabase, SqliteStatement } from '../native.js';
import { vec0ChunkSize, vec0PartitionIndexSql, vectorChunkSize } from '../schema.js';
import type { StoreContext } from './context.js';
import { type KnnUsers, knnUsersSql } from './user-key.js';

export type { VectorIndexOptions, VectorIndexSetting, VectorQuantization };

/** The quantisations, in the order the options list them. */
export const VECTOR_QUANTIZATIONS: readonly VectorQuantization[] = ['none', 'int8', 'bit'];

/**
 * Default oversampling per quantisation. int8 keeps about 7 bits per component, so its coarse order is close to
 * the exact one and 8 candidates per neighbour suffice; a bit keeps only the sign, so the coarse pass needs a
 * wider net for the exact rescoring to find the true top k. At these defaults the benchmark's Recall@10 against
 * the exact top 10 stays at or near 1 for both (docs/benchmarks.md), while rescoring remains a small part of a
 * bit search (k × 16 float distances against a Hamming scan of the partition); on clustered vectors a bit
 * index needs the full 16 to find every true neighbour.
 */
export const DEFAULT_RESCORE: Readonly<Record<VectorQuantization, number>> = { none: 1, int8: 8, bit: 16 };

/** sqlite-vec's largest k. */
export const MAX_KNN = 4096;

/** The meta key the setting is recorded under. */
export const VECTOR_INDEX_META = 'vector_index';
/**
 * The meta key of an unfinished build of the quantised table (`vector-quant-build.ts`): while it exists the table
 * is incomplete, and every k-NN reads the float index instead.
 */
export const QUANT_BUILD_META = 'vector_index_build';

/** The name of the quantised table. */
export const QUANT_TABLE = 'memories_vec_quant';

/** The setting a store opened with `options` searches with (`recorded` when the options name no quantisation). */
export function vectorIndexSetting(
  recorded: VectorQuantization,
  options: VectorIndexOptions | undefined,
): VectorIndexSetting {
  const quantization = options?.quantization ?? recorded;
  return { quantization, rescore: options?.rescore ?? DEFAULT_RESCORE[quantization] };
}

/** Parses a recorded setting (an absent one is `undefined`); a malformed one is `ENGRAM_STORE_CORRUPT`. */
export function parseRecordedQuantization(value: string | undefined): VectorQuantization | undefined {
  if (value === undefined) return undefined;
  if (!VECTOR_QUANTIZATIONS.includes(value as VectorQuantization)) {
    throw new EngramStoreError('ENGRAM_STORE_CORRUPT', 'the recorded vector index setting is malformed');
  }
  return value as VectorQuantization;
}

/**
 * The error of a store opened with another vector index setting (`asked`) than its file records (`recorded`):
 * `ENGRAM_STORE_VECTOR_INDEX_MISMATCH`, not the embedder's `ENGRAM_STORE_FINGERPRINT_MISMATCH` (the recovery
 * differs). Names the kinds only (never content) and the recovery.
 */
export function vectorIndexMismatch(
  asked: VectorQuantization,
  recorded: VectorQuantization,
): EngramStoreError {
  return new EngramStoreError(
    'ENGRAM_STORE_VECTOR_INDEX_MISMATCH',
    `the database's vector index quantization is '${recorded}', not the '${asked}' asked for: open it with vectorIndex.quantization '${recorded}' or without vectorIndex to adopt it, or open it without vectorIndex and call resetVectorIndex to rebuild it as '${asked}'`,
  );
}

/**
 * The error of a store whose explicit setting (`held`) is no longer the file's (`recorded`): another connection
 * called `resetVectorIndex`. Names the kinds only (never content) and the recovery.
 */
export function vectorIndexChanged(held: VectorQuantization, recorded: VectorQuantization): EngramStoreError {
  return new EngramStoreError(
    'ENGRAM_STORE_VECTOR_INDEX_MISMATCH',
    `the database's vector index quantization is now '${recorded}' (another connection called resetVectorIndex), not the '${held}' this store was opened with; nothing was written: reopen the store with vectorIndex.quantization '${recorded}', or without vectorIndex to adopt the file's setting`,
  );
}

/**
 * Keeps `ctx.vectorIndex` the file's recorded setting while the store is open: another connection (another store
 * object, another process) may have called `resetVectorIndex` since this store opened, and then its quantised
 * table is of another kind, or gone, or new. Every write of a quantised copy (inside its write transaction, so
 * the check and the write see the same file, once per transaction) and every vector search calls this first.
 *
 * It does what opening the store now would do: a store opened with an explicit `vectorIndex.quantization` that
 * differs from the file's raises `ENGRAM_STORE_VECTOR_INDEX_MISMATCH` (the write's transaction rolls back, nothing is
 * written; the store stays refused until reopened, since its holder asked for that kind and must not silently get
 * another), and a store opened without one adopts the file's setting (its writes keep the new table's copies, its
 * searches use it). Cheap: one `PRAGMA data_version` read; the recorded setting is read again only when another
 * connection committed since the last check (the same technique as `open-links.ts`).
 *
 * With `refuse` false (a delete: a `forget` must not wait for a reopen) a store holding another kind is not
 * refused: the file's recorded kind is returned for this one statement, and the store stays refused for writes
 * and searches. Returns the kind whose quantised table the file has now.
 */
export function followVectorIndex(ctx: StoreContext, refuse = true): VectorQuantization {
  if (ctx.vectorIndexVersion === null || (ctx.vectorIndexChecked && ctx.db.inTransaction)) {
    return ctx.vectorIndex.quantization;
  }
  const version = ctx.dataVersion();
  if (version !== ctx.vectorIndexVersion) {
    const recorded =
      parseRecordedQuantization(
        ctx.stmt('meta', 'SELECT value FROM meta WHERE key = ?').get<{ value: string }>(VECTOR_INDEX_META)
          ?.value,
      ) ?? 'none';
    const held = ctx.vectorIndex.quantization;
    if (recorded !== held) {
      // The version is not moved on: every later write and search is refused too, not only this one.
      if (ctx.vectorIndexOption?.quantization !== undefined) {
        if (refuse) throw vectorIndexChanged(held, recorded);
        return recorded;
      }
      adoptVectorIndex(ctx, recorded);
    }
    ctx.vectorIndexVersion = version;
  }
  ctx.vectorIndexChecked = ctx.db.inTransaction;
  return ctx.vectorIndex.quantization;
}

/** Switches the store to the file's `recorded` setting (a store opened without one: see `followVectorIndex`). */
function adoptVectorIndex(ctx: StoreContext, recorded: VectorQuantization): void {
  ctx.vectorIndex = vectorIndexSetting(recorded, ctx.vectorIndexOption);
  // A build still pending in the file is seen by each k-NN itself (`knnSql`), not by this connection's flag.
  ctx.quantReady = true;
  // Statements on the old quantised table are stale (as after this store's own `resetVectorIndex`).
  for (const sql of [...ctx.statements.keys()]) {
    if (sql.includes(QUANT_TABLE)) ctx.statements.delete(sql);
  }
}

/**
 * The SQL that creates the quantised table for `quantization` and `dimensions` and the index of its chunks by
 * partition (`vec0PartitionIndexSql`; two statements, for `exec`), or null for `none`.
 */
export function quantTableSql(quantization: VectorQuantization, dimensions: number): string | null {
  if (quantization === 'none') return null;
  const bits = Math.ceil(dimensions / 8) * 8;
  const column = quantization === 'int8' ? `int8[${dimensions}] distance_metric=cosine` : `bit[${bits}]`;
  // The chunk size follows the quantised vector's own width (int8: a byte per dimension; bit: one bit).
  const chunkSize = vec0ChunkSize(quantization === 'int8' ? dimensions : bits / 8);
  return `CREATE VIRTUAL TABLE IF NOT EXISTS ${QUANT_TABLE} USING vec0(agent_id text partition key, user_key integer, embedding ${column}, +vector blob, chunk_size=${chunkSize});
${vec0PartitionIndexSql(QUANT_TABLE)};`;
}

/** True when the file has the quantised table. */
export function hasQuantTable(db: SqliteDatabase): boolean {
  return (
    db.prepare(`SELECT 1 AS x FROM sqlite_master WHERE type = 'table' AND name = '${QUANT_TABLE}'`).get() !==
    undefined
  );
}

/**
 * A vector quantised for the table: int8 components scaled by the largest magnitude (cosine is scale-free, so
 * every vector uses the whole int8 range), or one bit per component (set when positive, padded to whole bytes).
 */
export function quantize(quantization: 'int8' | 'bit', vector: Float32Array): Uint8Array {
  if (quantization === 'bit') {
    const out = new Uint8Array(Math.ceil(vector.length / 8));
    for (let i = 0; i < vector.length; i += 1) {
      if ((vector[i] as number) > 0) out[i >> 3] = (out[i >> 3] as number) | (1 << (i & 7));
    }
    return out;
  }
  let max = 0;
  for (let i = 0; i < vector.length; i += 1) max = Math.max(max, Math.abs(vector[i] as number));
  const out = new Int8Array(vector.length);
  if (max > 0) {
    const scale = 127 / max;
    for (let i = 0; i < vector.length; i += 1) out[i] = Math.round((vector[i] as number) * scale);
  }
  return new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
}

/** The exact float k-NN's setting: what a search uses while the quantised table is incomplete. */
const EXACT: VectorIndexSetting = { quantization: 'none', rescore: 1 };

/** The setting searches use now: the store's, or the exact scan while its quantised table is being built. */
export function searchIndex(ctx: StoreContext): VectorIndexSetting {
  return ctx.quantReady ? ctx.vectorIndex : EXACT;
}

/** The SQL function that types a quantised blob for the table. */
export function typed(quantization: 'int8' | 'bit', param: string): string {
  return quantization === 'int8' ? `vec_int8(${param})` : `vec_bit(${param})`;
}

/** Stores a row's quantised vector with its user key (nothing when the store searches exactly). */
export function writeQuantVector(
  ctx: StoreContext,
  rid: number,
  agentId: string,
  userKey: bigint,
  vector: Float32Array,
): void {
  followVectorIndex(ctx);
  const q = ctx.vectorIndex.quantization;
  if (q === 'none') return;
  ctx
    .stmt(
      'vector',
      `INSERT INTO ${QUANT_TABLE}(rowid, agent_id, user_key, embedding, vector) VALUES (?, ?, ?, ${typed(q, '?')}, ?)`,
    )
    .run(BigInt(rid), agentId, userKey, quantize(q, vector), vector);
}

/**
 * Removes a row's quantised vector (nothing when the file has no quantised table). Never refused for a vector
 * index another connection changed: the copy of the file's current kind goes, so a delete or `forget` by a store
 * opened with another kind neither waits for a reopen nor leaves a copy behind.
 */
export function deleteQuantVector(ctx: StoreContext, rid: number | bigint): void {
  if (followVectorIndex(ctx, false) === 'none') return;
  ctx.stmt('vector', `DELETE FROM ${QUANT_TABLE} WHERE rowid = ?`).run(rid);
}

/**
 * Which k-NN a search runs: `quantised`, the coarse pass on the quantised table for `kq` candidates rescored by
 * their float copies, or `exact`, the float index's own k-NN (what a store without quantisation runs). Chosen per
 * search by {@link chooseKnnPlan}: the exact scan's answer is exact, so choosing it never lowers recall.
 */
export type KnnPlan = 'quantised' | 'exact';

/**
 * What one k-NN costs, per vector of the agent's partition and per rescored candidate, in µs measured on a
 * 2-core x86 machine with sqlite-vec 0.1.9 (CPU time, partitions of 4k and 16k vectors at 128-d and 384-d, 2k
 * and 8k at 1,536-d: the exact k-NN at k = 10, the coarse k-NN at k = 10 and 128–2,048, and the coarse pass
 * with and without its rescoring, CPU time per query; see also docs/design/vector-search.md). Only their
 * ratios matter: {@link chooseKnnPlan} compares two sums of them, and a faster or slower machine moves all of
 * them together. The table gives the measurements; the constants below fit each as a fixed part plus a part per
 * dimension (within 10 % of them, 27 % for the noisiest, rescoring at 384-d, measured 1.6–4.5 µs):
 *
 * | per vector / candidate              | 128-d | 384-d | 1,536-d | ratio to the float distance (128 / 384 / 1,536) |
 * | ----------------------------------- | ----- | ----- | ------- | ----------------------------------------------- |
 * | float distance (exact scan)         | 0.15  | 0.45  | 1.7     | 1                                               |
 * | Hamming distance (`bit` coarse)     | 0.018 | 0.041 | 0.071   | 0.12 / 0.09 / 0.04                              |
 * | int8 distance (`int8` coarse)       | 0.26  | 0.71  | 3.0     | 1.5 / 1.6 / 1.7                                 |
 * | rescoring a candidate (its float copy read as an auxiliary row, one cosine) | 2.3 | 3.8 | 5.0 | 15 / 8 / 3 |
 *
 * and, for every vec0 k-NN whatever its vectors, the selection of the k nearest inside each chunk of S vectors
 * ({@link selectionCost}): per vector, in 1,024-vector chunks, about 0.12 µs at k = 128, 0.28 at 256, 0.74 at
 * 512 and 1.8 at 1,024, where it stops growing (a k-NN selects at most a chunk's worth from each chunk),
 * negligible at k = 10; smaller chunks cost more per vector at the same k (measured: 0.16 µs at k = 64 and 0.34
 * at k = 128 in 128-vector chunks, 0.14 / 0.37 / 0.91 at k = 128 / 256 / 512 in 512-vector chunks, about
 * √(1,024 / S) times the 1,024-vector figure), plus a little per chunk for a k larger than the chunk (0.005 µs
 * per vector per further chunk's worth). That term is why a wide coarse pass is not cheap: at 1,536-d a `bit`
 * pass for kq = 2,048 spends 1.8 µs per vector selecting, more than the float distance it saves.
 */
const COST = {
  exact: { fixed: 0.03, perDim: 0.00109 },
  bit: { fixed: 0.015, perDim: 0.000037 },
  int8: { fixed: 0, perDim: 0.00197 },
  rescore: { fixed: 2.05, perDim: 0.0019 },
} as const;

/** The per-vector selection cost of a k-NN keeping `k` in 1,024-vector chunks (µs, measured: see {@link COST}). */
const SELECT: readonly (readonly [number, number])[] = [
  [10, 0],
  [128, 0.12],
  [256, 0.28],
  [512, 0.74],
  [1024, 1.8],
];

/** The per-vector cost (µs) of selecting the `k` nearest in each chunk of `chunk` vectors: see {@link COST}. */
function selectionCost(k: number, chunk: number): number {
  const kept = Math.min(k, chunk);
  let within = 0;
  let prev = SELECT[0] as readonly [number, number];
  if (kept > prev[0]) {
    within = (SELECT[SELECT.length - 1] as readonly [number, number])[1];
    for (const point of SELECT) {
      if (kept <= point[0]) {
        within = prev[1] + ((point[1] - prev[1]) * (kept - prev[0])) / (point[0] - prev[0]);
        break;
      }
      prev = point;
    }
  }
  return within * Math.sqrt(1024 / chunk) + (0.005 * Math.max(0, k - chunk)) / chunk;
}

/** What {@link chooseKnnPlan} decides from: plain numbers, so it is tested directly. */
export interface KnnPlanInput {
  readonly quantization: 'int8' | 'bit';
  readonly dimensions: number;
  /** The neighbours the exact scan would be asked for. */
  readonly kk: number;
  /** The candidates the coarse pass would be asked for (`kk × rescore`, at most sqlite-vec's 4,096). */
  readonly kq: number;
}

/**
 * The most vectors an agent's partition may hold for the exact scan to be the cheaper plan for `input` (0: never;
 * Infinity: always). With n the partition's vectors, costs per vector from {@link COST}, s(k, S) the selection
 * cost and S the chunk sizes of the two tables, the exact scan is chosen when
 *
 *   n × (coarse + s(kq, S_quant)) + kq × rescore  >=  n × (float + s(kk, S_float))
 *
 * that is when n <= kq × rescore / (float + s(kk, S_float) − coarse − s(kq, S_quant)). With `int8` the
 * coarse distance alone costs more than the float one (sqlite-vec 0.1.9's int8 distance is not faster), so the
 * exact scan is always chosen; with `bit` the bound at k = 10 (kq = 160) is about 1,700 vectors at 384-d and 539
 * at 1,536-d (every size at 128-d, where a float distance costs no more than selecting 160 candidates) and, at k = 128
 * (kq = 2,048, the hybrid retriever's candidate budget), every size up to 768-d and about 61,000 vectors at
 * 1,536-d: the coarse pass's selection of 2,048 candidates costs about as much as the float scan it replaces.
 */
export function exactPlanBound(input: KnnPlanInput): number {
  const { quantization, dimensions, kk, kq } = input;
  const at = (c: { fixed: number; perDim: number }): number => c.fixed + c.perDim * dimensions;
  const floatChunk = vectorChunkSize(dimensions);
  const quantChunk = vec0ChunkSize(quantization === 'int8' ? dimensions : Math.ceil(dimensions / 8));
  const exact = at(COST.exact) + selectionCost(kk, floatChunk);
  const coarse = at(COST[quantization]) + selectionCost(kq, quantChunk);
  const saved = exact - coarse;
  if (saved <= 0) return Number.POSITIVE_INFINITY;
  return Math.floor((kq * at(COST.rescore)) / saved);
}

/** The plan for `input` and a partition of (at most) `vectors` vectors: see {@link exactPlanBound}. */
export function chooseKnnPlan(input: KnnPlanInput, vectors: number): KnnPlan {
  return vectors <= exactPlanBound(input) ? 'exact' : 'quantised';
}

/**
 * The probe of the planner: the capacity of the agent's float chunks (an upper bound of its vectors, read through
 * the chunk table's partition index, `vec0PartitionIndexSql`), summed over at most `?` chunks, so its work is
 * bounded by the plan's bound, not by the partition.
 */
const PLAN_PROBE_SQL =
  'SELECT coalesce(sum(size), 0) AS n FROM (SELECT size FROM memories_vec_chunks WHERE partition00 = ? LIMIT ?)';
/** What the probe's answers are valid for: this connection's writes, and (when not known) other connections' commits. */
const PLAN_STAMP_SQL = 'SELECT total_changes() AS c';
const PLAN_STAMP_VERSION_SQL = 'SELECT total_changes() AS c, data_version AS v FROM pragma_data_version';
/** The most probe answers kept per connection (past it they are dropped and probed again). */
const PLAN_CACHE_MAX = 4096;

/**
 * Per connection: the planner's statements (prepared once; not reported to the observer: not the search's work)
 * and its probe's answers, kept while the file is unchanged as this connection sees it — no write of its own
 * (`total_changes()`) and no commit of another (`PRAGMA data_version`, which `followVectorIndex` has just read
 * for this search on the store's connection) — so a search of an unchanged partition does not read the chunk
 * index again (measured: the probe cost 20–35 µs per search, about 2 % of a 1 ms k-NN, its pages being cold
 * after the scan).
 */
interface PlanState {
  /** Null when the layout has no chunk table to probe (its `prepare` failed): every search is then `quantised`. */
  readonly probe: SqliteStatement | null;
  readonly stamp: SqliteStatement;
  readonly stampVersion: SqliteStatement;
  changes: number;
  version: number;
  readonly vectors: Map<string, number>;
}
const planStates = new WeakMap<StoreContext, PlanState>();

/** The statement of the planner's probe, or null on a vec0 layout without the chunk table it reads. */
function prepareProbe(ctx: StoreContext): SqliteStatement | null {
  try {
    return ctx.db.prepare(PLAN_PROBE_SQL);
  } catch {
    return null;
  }
}

/**
 * The capacity of `agentId`'s float chunks, summed over at most `chunks` of them (see {@link PLAN_PROBE_SQL}), or
 * null when the layout has no chunk table to probe (remembered per connection: it is not prepared again).
 *
 * Inside a transaction the answer is not kept: `total_changes()` does not go back when the transaction rolls
 * back, so a count of rows a rollback removed would otherwise outlive them (only the plan would follow from it,
 * never the answer; a worker's failed request falls back to this connection without reading `data_version`).
 */
function partitionVectors(ctx: StoreContext, agentId: string, chunks: number): number | null {
  let state = planStates.get(ctx);
  if (state === undefined) {
    state = {
      probe: prepareProbe(ctx),
      stamp: ctx.db.prepare(PLAN_STAMP_SQL),
      stampVersion: ctx.db.prepare(PLAN_STAMP_VERSION_SQL),
      changes: -1,
      version: -1,
      vectors: new Map(),
    };
    planStates.set(ctx, state);
  }
  const probe = state.probe;
  if (probe === null) return null;
  if (ctx.db.inTransaction) {
    return (probe.get(agentId, chunks) as { n: number } | undefined)?.n ?? 0;
  }
  let changes: number;
  let version: number;
  if (ctx.vectorIndexVersion === null) {
    // The vector worker's connection (or a private `:memory:` one): no version read by this search yet.
    const row = state.stampVersion.get() as { c: number; v: number };
    changes = row.c;
    version = row.v;
  } else {
    changes = (state.stamp.get() as { c: number }).c;
    version = ctx.vectorIndexVersion;
  }
  if (changes !== state.changes || version !== state.version || state.vectors.size >= PLAN_CACHE_MAX) {
    state.vectors.clear();
    state.changes = changes;
    state.version = version;
  }
  const key = `${chunks}:${agentId}`;
  let n = state.vectors.get(key);
  if (n === undefined) {
    n = (probe.get(agentId, chunks) as { n: number } | undefined)?.n ?? 0;
    state.vectors.set(key, n);
  }
  return n;
}

/**
 * The k-NN plan of one search of `agentId`'s partition for `kk` neighbours of a `dimensions`-wide query: `exact`
 * without quantisation (or while the quantised table is being built by this connection), otherwise the cheaper
 * of the two by {@link chooseKnnPlan}, the partition's size bounded from its float chunks. The same on the store's
 * connection and on the vector worker's (whose `ctx` has the setting the store posted).
 */
export function planKnn(ctx: StoreContext, agentId: string, kk: number, dimensions: number): KnnPlan {
  const { quantization } = searchIndex(ctx);
  if (quantization === 'none') return 'exact';
  const plan = knnPlanTestHook.forced ?? choosePlan(ctx, agentId, kk, dimensions);
  knnPlanTestHook[plan] += 1;
  return plan;
}

/** {@link planKnn} for a quantised store: the cheaper plan for the partition, probed. */
function choosePlan(ctx: StoreContext, agentId: string, kk: number, dimensions: number): KnnPlan {
  const { quantization, rescore } = searchIndex(ctx);
  if (quantization === 'none') return 'exact';
  const bound = exactPlanBound({ quantization, dimensions, kk, kq: Math.min(kk * rescore, MAX_KNN) });
  if (bound === Number.POSITIVE_INFINITY) return 'exact';
  if (bound <= 0) return 'quantised';
  // Enough chunks to exceed the bound: the chunks of one table share one size, this width's chunk size in a file
  // made since `vec0ChunkSize` and vec0's default (1,024, larger) in one made before.
  const chunks = Math.floor(bound / vectorChunkSize(dimensions)) + 1;
  let vectors: number | null;
  try {
    vectors = partitionVectors(ctx, agentId, chunks);
  } catch {
    vectors = null;
  }
  // A vec0 layout without that table: no partition size to plan with, so the quantised plan.
  if (vectors === null) return 'quantised';
  return vectors <= bound ? 'exact' : 'quantised';
}

/**
 * INTERNAL, for this package's tests only (never exported from the package's entry points, not part of the API):
 * `forced` makes every search of a quantised store on this thread's connections take that plan instead of the
 * planner's choice (the vector worker's thread has its own module and is not affected: tests that force a plan
 * search on the store's connection), and `quantised` / `exact` count the plans quantised stores' searches took
 * (one per k-NN round), so a test can assert that the path it means to cover ran.
 */
export const knnPlanTestHook: { forced: KnnPlan | null; quantised: number; exact: number } = {
  forced: null,
  quantised: 0,
  exact: 0,
};

/**
 * The k-NN the vector arm reads as `knn(rowid, distance)` for `@v` (the query), `@kk` (neighbours wanted) and
 * `@agent`, in `plan`: the float index's own k-NN, or the coarse k-NN of `@kq` candidates on the quantised table
 * rescored by the exact distance of their float copies. `users` restricts the scan to a user scope inside vec0
 * (`user-key.ts`, the key bound as `@uk`). One SQL text per plan and user restriction (each prepared once);
 * parameters from `knnParams` with the same plan.
 */
export function knnSql(ctx: StoreContext, plan: KnnPlan, users: KnnUsers = 'none'): string {
  const q = searchIndex(ctx).quantization;
  const scope = knnUsersSql(users);
  if (q === 'none' || plan === 'exact') {
    return `SELECT rowid, distance FROM memories_vec WHERE embedding MATCH @v AND k = @kk AND agent_id = @agent${scope}`;
  }
  // The file decides, not this connection's view of it: another process may be rebuilding the quantised table
  // (its build commits in steps), and then the float index answers. Each arm's condition is constant, so SQLite
  // checks it before that arm's scan and runs only one of the two.
  const pending = `SELECT 1 FROM meta WHERE key = '${QUANT_BUILD_META}'`;
  return `SELECT rowid, distance FROM (
      SELECT c.rowid AS rowid, vec_distance_cosine(c.vector, @v) AS distance
      FROM (SELECT rowid, vector FROM ${QUANT_TABLE}
        WHERE embedding MATCH ${typed(q, '@q')} AND k = @kq AND agent_id = @agent${scope}) c
      ORDER BY distance, c.rowid LIMIT @kk)
    WHERE NOT EXISTS (${pending})
    UNION ALL
    SELECT rowid, distance FROM memories_vec
    WHERE embedding MATCH @v AND k = @kk AND agent_id = @agent${scope} AND EXISTS (${pending})`;
}

/**
 * The extra parameters of `knnSql` in `plan` for a query `vector` and `kk` wanted neighbours (none for the exact
 * scan).
 */
export function knnParams(
  ctx: StoreContext,
  plan: KnnPlan,
  vector: Float32Array,
  kk: number,
): Record<string, unknown> {
  const { quantization, rescore } = searchIndex(ctx);
  if (quantization === 'none' || plan === 'exact') return {};
  return { q: quantize(quantization, vector), kq: Math.min(kk * rescore, MAX_KNN) };
}

/**
 * Integrity of the quantised table (maintenance, off the hot path): deletes quantised vectors (of one agent, or
 * all) whose float vector is gone. Returns how many it deleted.
 */
export function pruneQuantOrphans(ctx: StoreContext, agentId: string | undefined): number {
  followVectorIndex(ctx);
  if (ctx.vectorIndex.quantization === 'none' || ctx.profile === null) return 0;
  const orphans = ctx
    .stmt(
      'vector',
      `SELECT q.rowid AS rid FROM ${QUANT_TABLE} q
       WHERE ${agentId === undefined ? '' : 'q.agent_id = @agent AND'}
         NOT EXISTS (SELECT 1 FROM memories_vec f WHERE f.rowid = q.rowid)`,
    )
    .all<{ rid: number }>(agentId === undefined ? {} : { agent: agentId });
  for (const o of orphans) deleteQuantVector(ctx, o.rid);
  return orphans.length;
}

/**
 * Integrity of the quantised table: quantises again the agent's float vectors that have no quantised copy, at
 * most `limit`. Returns how many it wrote.
 */
export function repairQuantVectors(ctx: StoreContext, agentId: string, limit: number): number {
  followVectorIndex(ctx);
  if (ctx.vectorIndex.quantization === 'none' || ctx.profile === null || limit <= 0) return 0;
  const missing = ctx
    .stmt(
      'vector',
      `SELECT f.rowid AS rid, f.user_key AS uk, f.embedding AS embedding FROM memories_vec f
       WHERE f.agent_id = @agent AND NOT EXISTS (SELECT 1 FROM ${QUANT_TABLE} q WHERE q.rowid = f.rowid)
       LIMIT @limit`,
    )
    .all<{ rid: number; uk: number; embedding: Uint8Array }>({ agent: agentId, limit });
  for (const m of missing) {
    const floats = new Float32Array(new Uint8Array(m.embedding).buffer, 0, m.embedding.byteLength / 4);
    writeQuantVector(ctx, m.rid, agentId, BigInt(m.uk), floats);
  }
  return missing.length;
}
