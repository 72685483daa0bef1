/**
 * How big an agent's vector partition is, for the vector worker's dispatch (`vector-dispatch.ts`): the bytes
 * of vectors its k-NN scans, from its vec0 chunk count, counted at most once per agent per
 * {@link CHUNK_RECOUNT} searches.
 */
import type { SqliteStatement } from '../native.js';
import type { StoreContext } from './context.js';

/**
 * The fewest bytes of vectors an agent's partition holds for its k-NN to go to the worker (2 MiB: 1,024
 * float vectors of 512 dimensions). The worker saves at most the time of the work its k-NN overlaps (the
 * BM25 arm on the store's connection) and costs a round trip (posting the query, a read transaction, the hits
 * back, waking each thread: ≈0.15 ms measured) plus the two threads' contention for the cores. What a k-NN
 * costs follows the bytes it scans: on a 2-core machine one vec0 chunk (1,024 vectors) took 0.55–0.65 ms at
 * 128-d (512 KiB) and 2.5–2.8 ms at 1,536-d (6 MiB). With 100 agents × 1,000 rows, hybrid searches were
 * slower with the worker at 128-d (p50 3.1 and 4.8 ms against 2.3 and 2.8 on the store's connection, load 4–5)
 * and as fast or faster at 1,536-d (6.0 and 5.4 against 6.3 and 8.9). The threshold sits between the two, where
 * the k-NN takes about 1 ms: several times the round trip, and about as long as the BM25 arm it overlaps.
 */
export const WORKER_MIN_SCAN_BYTES: number = 2 * 1024 * 1024;

/** vec0 keeps a partition's vectors in chunks of this many (the partition's size is counted in chunks). */
const VEC0_CHUNK_VECTORS = 1024;

/** How many searches of an agent reuse its counted chunks before they are counted again. */
const CHUNK_RECOUNT = 256;
/** The most agents whose chunk counts are kept (past it the counts are dropped and taken again). */
const CHUNK_CACHE_AGENTS = 4096;

/** The chunk counts of the agents a store searched (one per store, kept by its vector worker). */
export class PartitionSizes {
  /** Per agent: its vec0 chunk count, and how many more searches may use it before it is counted again. */
  readonly #chunks = new Map<string, { chunks: number; left: number }>();
  #countChunks: SqliteStatement | undefined;

  /** The bytes of vectors a k-NN of the agent scans: its vec0 chunks' vectors, in the index's format. */
  scanBytes(ctx: StoreContext, agentId: string): number {
    const dimensions = ctx.profile?.dimensions ?? 0;
    const q = ctx.vectorIndex.quantization;
    const perVector = q === 'none' ? 4 * dimensions : q === 'int8' ? dimensions : dimensions / 8;
    return this.#chunkCount(ctx, agentId) * VEC0_CHUNK_VECTORS * perVector;
  }

  /**
   * The agent's vec0 chunk count, counted on the store's connection at most once per {@link CHUNK_RECOUNT}
   * searches of the agent: a count that is a little stale only moves a k-NN between connections, never changes
   * its answer. Not reported to the observer: it is the dispatch's probe, not the search's work.
   */
  #chunkCount(ctx: StoreContext, agentId: string): number {
    const cached = this.#chunks.get(agentId);
    if (cached !== undefined && cached.left > 0) {
      cached.left -= 1;
      return cached.chunks;
    }
    let chunks: number;
    try {
      this.#countChunks ??= ctx.db.prepare(
        'SELECT count(*) AS n FROM memories_vec_chunks WHERE partition00 = ?',
      );
      const row = this.#countChunks.get(agentId) as { n: number } | undefined;
      chunks = row?.n ?? 0;
    } catch {
      // A vec0 layout without that table: every k-NN may go to the worker, as before the rule.
      chunks = Number.POSITIVE_INFINITY;
    }
    if (cached !== undefined) {
      cached.chunks = chunks;
      cached.left = CHUNK_RECOUNT;
    } else {
      if (this.#chunks.size >= CHUNK_CACHE_AGENTS) this.#chunks.clear();
      this.#chunks.set(agentId, { chunks, left: CHUNK_RECOUNT });
    }
    return chunks;
  }
}
