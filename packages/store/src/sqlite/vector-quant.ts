/**
 * Opt-in quantised vector search. Beside the float index (`memories_vec`) a store may keep a second vec0 table,
 * `memories_vec_quant`, partitioned by agent like the float one and keyed by the same rowids (a memory's rid, or
 * a chunk's key), holding each vector quantised to `int8` (scaled per vector by its largest component, so the
 * cosine is kept) or to `bit` (the sign of each component, compared by Hamming distance), with a copy of the
 * float vector as an auxiliary column. A k-NN then runs on the quantised table for `k × rescore` candidates,
 * and the exact cosine distance of each candidate's float copy orders them: the arm returns the same distances
 * as the exact scan, for the candidates the coarse pass found. The copy is what makes rescoring cheap: vec0
 * keeps its vectors in chunk blobs (up to 1 MiB, `vec0ChunkSize`; 6 MiB at 1536-d in files made before), and
 * reading one of them by rowid walks such a blob (measured 5× slower than the exact scan it should beat, with
 * 6 MiB chunks), while an auxiliary value is one row of a plain table. It costs 4 bytes per dimension per vector on top of the quantised vector.
 *
 * The setting is recorded in the meta table (`vector_index`), beside the embedder fingerprint: a store opened
 * with another one is `ENGRAM_STORE_VECTOR_INDEX_MISMATCH`, and changing it is the explicit `resetVectorIndex`,
 * which rebuilds the quantised table from the stored float vectors (no re-embedding; `vector-quant-build.ts`).
 */
import { EngramStoreError } from '../errors.js';
import type { SqliteDatabase } from '../native.js';
import { vec0ChunkSize, vec0PartitionIndexSql } from '../schema.js';
import type { StoreContext } from './context.js';

/** How the vector index is quantised: `none` (exact float scan, the default), `int8` or `bit`. */
export type VectorQuantization = 'none' | 'int8' | 'bit';

/** The vector index options of a SQLite store. */
export interface VectorIndexOptions {
  /** `none` (default): exact float k-NN. `int8` / `bit`: a coarse k-NN on quantised vectors, then exact rescoring. */
  readonly quantization?: VectorQuantization;
  /**
   * How many coarse candidates per wanted neighbour are rescored with the exact float distance (an integer,
   * 1–64; default 8 for `int8`, 16 for `bit`). Applies at query time: changing it needs no re-index.
   */
  readonly rescore?: number;
}

/** The vector index a store searches with: the recorded quantisation and the oversampling of the coarse pass. */
export interface VectorIndexSetting {
  readonly quantization: VectorQuantization;
  readonly rescore: number;
}

/** The quantisations, in the order the options list them. */
export const VECTOR_QUANTIZATIONS: readonly VectorQuantization[] = ['none', 'int8', 'bit'];

/**
 * Default oversampling per quantisation. int8 keeps about 7 bits per component, so its coarse order is close to
 * the exact one and 8 candidates per neighbour suffice; a bit keeps only the sign, so the coarse pass needs a
 * wider net for the exact rescoring to find the true top k. Measured with `pnpm bench` at 1536-d × 100k (k =
 * 10): Recall@10 1.000 for int8 at 8 and 0.999 for bit at 16, where the rescoring is still a small part of the
 * bit search (160 float distances against a 100,000-row Hamming scan); on the native test's 256-d clustered
 * vectors bit reached 0.79 at 4, 0.98 at 8 and 1.0 at 16.
 */
export const DEFAULT_RESCORE: Readonly<Record<VectorQuantization, number>> = { none: 1, int8: 8, bit: 16 };

/** sqlite-vec's largest k. */
const MAX_KNN = 4096;

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
  return `CREATE VIRTUAL TABLE IF NOT EXISTS ${QUANT_TABLE} USING vec0(agent_id text partition key, embedding ${column}, +vector blob, chunk_size=${chunkSize});
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

/** Stores a row's quantised vector (nothing when the store searches exactly). */
export function writeQuantVector(
  ctx: StoreContext,
  rid: number,
  agentId: string,
  vector: Float32Array,
): void {
  followVectorIndex(ctx);
  const q = ctx.vectorIndex.quantization;
  if (q === 'none') return;
  ctx
    .stmt(
      'vector',
      `INSERT INTO ${QUANT_TABLE}(rowid, agent_id, embedding, vector) VALUES (?, ?, ${typed(q, '?')}, ?)`,
    )
    .run(BigInt(rid), agentId, quantize(q, vector), vector);
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
 * The k-NN the vector arm reads as `knn(rowid, distance)` for `@v` (the query), `@kk` (neighbours wanted) and
 * `@agent`: the float index's own k-NN, or with quantisation the coarse k-NN of `@kq` candidates on the quantised
 * table rescored by the exact distance of their float copies. Parameters from `knnParams`.
 */
export function knnSql(ctx: StoreContext): string {
  const q = searchIndex(ctx).quantization;
  if (q === 'none') {
    return 'SELECT rowid, distance FROM memories_vec WHERE embedding MATCH @v AND k = @kk AND agent_id = @agent';
  }
  // The file decides, not this connection's view of it: another process may be rebuilding the quantised table
  // (its build commits in steps), and then the float index answers. Each arm's condition is constant, so SQLite
  // checks it before that arm's scan and runs only one of the two.
  const pending = `SELECT 1 FROM meta WHERE key = '${QUANT_BUILD_META}'`;
  return `SELECT rowid, distance FROM (
      SELECT c.rowid AS rowid, vec_distance_cosine(c.vector, @v) AS distance
      FROM (SELECT rowid, vector FROM ${QUANT_TABLE}
        WHERE embedding MATCH ${typed(q, '@q')} AND k = @kq AND agent_id = @agent) c
      ORDER BY distance, c.rowid LIMIT @kk)
    WHERE NOT EXISTS (${pending})
    UNION ALL
    SELECT rowid, distance FROM memories_vec
    WHERE embedding MATCH @v AND k = @kk AND agent_id = @agent AND EXISTS (${pending})`;
}

/** The extra parameters of `knnSql` for a query `vector` and `kk` wanted neighbours (none without quantisation). */
export function knnParams(ctx: StoreContext, vector: Float32Array, kk: number): Record<string, unknown> {
  const { quantization, rescore } = searchIndex(ctx);
  if (quantization === 'none') return {};
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
      `SELECT f.rowid AS rid, f.embedding AS embedding FROM memories_vec f
       WHERE f.agent_id = @agent AND NOT EXISTS (SELECT 1 FROM ${QUANT_TABLE} q WHERE q.rowid = f.rowid)
       LIMIT @limit`,
    )
    .all<{ rid: number; embedding: Uint8Array }>({ agent: agentId, limit });
  for (const m of missing) {
    const floats = new Float32Array(new Uint8Array(m.embedding).buffer, 0, m.embedding.byteLength / 4);
    writeQuantVector(ctx, m.rid, agentId, floats);
  }
  return missing.length;
}
