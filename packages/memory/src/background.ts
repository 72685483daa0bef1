/**
 * The facade's embedding helpers: the background drain and inline embedding of small writes.
 */
import { CHUNK_BUDGET, type MemoryRecord } from '@engram/store';
import type { Engine } from './engine.js';
import { EngramMemoryError } from './errors.js';

/**
 * The background drain: one loop at a time; `flush` waits for it; `stop` ends it after its current run. With
 * `automatic` false, `kick` starts nothing: only `flush` runs the drain (a memory opened for looking).
 */
export function backgroundDrain(
  engine: Engine,
  automatic = true,
): {
  kick(): void;
  flush(): Promise<void>;
  stop(): Promise<void>;
} {
  let running: Promise<void> | null = null;
  let again = false;
  let stopped = false;
  const stopping = new AbortController();
  let failure: unknown = null;
  const start = (): void => {
    if (stopped) return;
    if (running !== null) {
      again = true;
      return;
    }
    running = (async () => {
      do {
        again = false;
        const totals = await engine.drain({ signal: stopping.signal });
        if (totals.rows === 0) break;
      } while (again && !stopped);
    })()
      .catch((error: unknown) => {
        failure = error;
      })
      .finally(() => {
        running = null;
      });
  };
  return {
    kick: () => {
      if (automatic) start();
    },
    async flush() {
      start();
      while (running !== null) await running;
      if (failure !== null) {
        const error = failure;
        failure = null;
        throw new EngramMemoryError('ENGRAM_MEMORY_STORE_FAILED', 'the background embedding drain failed', {
          cause: error,
        });
      }
    },
    async stop() {
      stopped = true;
      stopping.abort();
      while (running !== null) await running;
    },
  };
}

/**
 * Embeds the given rows now, in one embedder call, when each is one chunk long; a longer row, or any row when
 * the embedder fails, stays pending for the background drain. Returns the rows as they are afterwards.
 */
export async function embedNow(
  engine: Engine,
  rows: readonly MemoryRecord[],
): Promise<readonly MemoryRecord[]> {
  const short = rows.filter((r) => r.embeddingState === 'pending' && r.content.length <= CHUNK_BUDGET);
  if (short.length === 0) return rows;
  await engine.warmUp();
  let vectors: Float32Array[];
  try {
    vectors = await engine.embedder.embed(short.map((r) => r.content));
  } catch {
    return rows;
  }
  if (vectors.length !== short.length) return rows;
  try {
    await engine.store.commitEmbeddings(
      short.map((r, i) => ({
        id: r.id,
        revision: r.revision,
        state: 'ready',
        vector: vectors[i] as Float32Array,
      })),
    );
  } catch (error) {
    // The rows stay pending; a vector index changed by another connection is the facade's own error.
    throw engine.storeError(error);
  }
  return Promise.all(rows.map(async (r) => (await engine.store.getMemory(r.agentId, r.id)) ?? r));
}
