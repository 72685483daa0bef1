/**
 * How big an agent's vector partition is, for the vector worker's dispatch (`vector-dispatch.ts`): the bytes
 * of vectors its k-NN scans (the float ones when a quantised store's search runs the exact scan), from its vec0 chunks (their capacity in vectors, each chunk's recorded size: an
 * upper bound) and its rows (counted up to
 * the dispatch threshold only, so the count is bounded), counted at most once per agent per
 * {@link CHUNK_RECOUNT} searches.
 */
import type { SqliteStatement } from '../native.js';
import { agentHasChunks } from './chunks.js';
import type { StoreContext } from './context.js';
import { firstRoundK } from './search-vector.js';
import { chooseKnnPlan, MAX_KNN, searchIndex } from './vector-quant.js';

/**
 * The fewest bytes of vectors an agent's partition holds for its k-NN to go to the worker (2 MiB: 1,024
 * float vectors of 512 dimensions). The worker saves at most the time of the work its k-NN overlaps (the
 * BM25 arm on the store's connection) and costs a round trip (posting the query, a read transaction, the hits
 * back, waking each thread: a fraction of a millisecond) plus the two threads' contention for the cores. What
 * a k-NN costs follows the bytes it scans: small partitions (512 KiB of 128-d vectors) searched on the worker
 * made hybrid searches slower, large ones (6 MiB of 1,536-d vectors) as fast or faster. The threshold sits
 * between the two, where the k-NN takes about 1 ms: several times the round trip, and about as long as the BM25
 * arm it overlaps. It is a fixed rule, not a per-machine measurement.
 */
export const WORKER_MIN_SCAN_BYTES: number = 2 * 1024 * 1024;

/**
 * The dispatch's probe: the capacity of an agent's float chunks, read through the chunk table's partition index
 * (`vec0PartitionIndexSql`).
 */
export const CHUNK_CAPACITY_SQL =
  'SELECT coalesce(sum(size), 0) AS n FROM memories_vec_chunks WHERE partition00 = ?';

/** How many searches of an agent reuse its counted chunks before they are counted again. */
const CHUNK_RECOUNT = 256;
/** The most agents whose chunk counts are kept (past it the counts are dropped and taken again). */
const CHUNK_CACHE_AGENTS = 4096;

/** The chunk counts of the agents a store searched (one per store, kept by its vector worker). */
export class PartitionSizes {
  /**
   * Per agent: the vectors its vec0 chunks hold (their capacity), and how many more searches may use it before
   * it is counted again.
   */
  readonly #chunks = new Map<string, { chunks: number; rows: number; limit: number; left: number }>();
  #countChunks: SqliteStatement | undefined;
  #countRows: SqliteStatement | undefined;

  /**
   * The bytes of vectors a k-NN of the agent scans, in the index's format: `bound`, the capacity of its vec0
   * float chunks (`chunk_size` vectors each, filled or not; what the hang deadline is derived from: with a
   * quantised index, whose chunks are larger at wide vectors, it may fall short of the quantised table's capacity
   * by less than one of its chunks, nothing next to the deadline's base), and `estimate`, its
   * rows' vectors when fewer than the chunks hold, counted only up to `threshold` bytes (what the dispatch
   * compares with). vec0 reads a chunk's whole vector blob but computes distances for its rows only, so a
   * chunk's cost follows its rows far more than its capacity and the rows are the better estimate (the blob
   * read is left out: it is paid on either connection).
   */
  scanBytes(
    ctx: StoreContext,
    agentId: string,
    threshold: number,
    k: number,
    filtered: boolean,
  ): { bound: number; estimate: number } {
    const dimensions = ctx.profile?.dimensions ?? 0;
    const { quantization: q, rescore } = searchIndex(ctx);
    const quantised = q === 'none' ? 4 * dimensions : q === 'int8' ? dimensions : dimensions / 8;
    const limit = quantised > 0 ? Math.ceil(threshold / quantised) : 0;
    const { chunks, rows } = this.#counts(ctx, agentId, limit);
    // The k-NN's plan (`chooseKnnPlan`, from the same chunk capacity the search's own probe reads, for the same
    // first-round k, `firstRoundK`): a quantised store whose search runs the exact float scan scans float
    // vectors. The rows were counted up to the larger limit of the narrower vectors, so the count also serves
    // the float ones.
    let exact = false;
    if (q !== 'none') {
      const kk = firstRoundK(k, filtered, agentHasChunks(ctx, agentId));
      exact =
        chooseKnnPlan({ quantization: q, dimensions, kk, kq: Math.min(kk * rescore, MAX_KNN) }, chunks) ===
        'exact';
    }
    const perVector = exact ? 4 * dimensions : quantised;
    const bound = chunks * perVector;
    return { bound, estimate: Math.min(bound, rows * perVector) };
  }

  /**
   * The capacity of the agent's vec0 chunks in vectors (the sum of their sizes: 1,024 each in a file made
   * before `vec0ChunkSize`, fewer at wide vectors since) and its rows up to `limit` (Infinity: at least `limit`), counted on the store's connection at most once per {@link CHUNK_RECOUNT}
   * searches of the agent: a count that is a little stale only moves a k-NN between connections, never changes
   * its answer. It reads the agent's chunk rows through the chunk table's partition index (schema 13,
   * `vec0PartitionIndexSql`), not every agent's. Not reported to the observer: it is the dispatch's probe, not
   * the search's work.
   */
  #counts(ctx: StoreContext, agentId: string, limit: number): { chunks: number; rows: number } {
    const cached = this.#chunks.get(agentId);
    if (cached !== undefined && cached.left > 0 && cached.limit === limit) {
      cached.left -= 1;
      return cached;
    }
    let chunks: number;
    let rows = Number.POSITIVE_INFINITY;
    try {
      this.#countChunks ??= ctx.db.prepare(CHUNK_CAPACITY_SQL);
      const row = this.#countChunks.get(agentId) as { n: number } | undefined;
      chunks = row?.n ?? 0;
      if (limit > 0) {
        // Rows, not vectors (a pending row has none, a chunked memory several): an estimate, bounded by `limit`.
        this.#countRows ??= ctx.db.prepare(
          'SELECT count(*) AS n FROM (SELECT 1 FROM memories WHERE agent_id = ? LIMIT ?)',
        );
        const counted = (this.#countRows.get(agentId, limit) as { n: number } | undefined)?.n ?? 0;
        if (counted < limit) rows = counted;
      }
    } catch {
      // A vec0 layout without that table: no size is known, so every k-NN may go to the worker.
      chunks = Number.POSITIVE_INFINITY;
    }
    const entry = { chunks, rows, limit, left: CHUNK_RECOUNT };
    if (cached === undefined && this.#chunks.size >= CHUNK_CACHE_AGENTS) this.#chunks.clear();
    this.#chunks.set(agentId, entry);
    return entry;
  }
}
