/**
 * Embeds everything a store has pending, the way the drain does but without its bookkeeping: for tests that
 * need `ready` rows (and chunks) and sit below the maintenance layer. Structural, so it needs no store import.
 */

/** One pending item as the store's embedding slice lists it (a chunk of a long memory carries its index). */
export interface PendingItem {
  readonly id: string;
  readonly revision: number;
  readonly content: string;
  readonly chunk?: number;
}

/** The part of the store's embedding slice this helper calls. */
export interface PendingEmbeddingStore<P extends PendingItem> {
  listPendingEmbeddings(options: { readonly limit: number }): Promise<readonly P[]>;
  commitEmbeddings(
    outcomes: readonly {
      readonly id: string;
      readonly revision: number;
      readonly state: 'ready';
      readonly vector: Float32Array;
      readonly chunk?: number;
    }[],
  ): Promise<unknown>;
}

/** The part of an embedder this helper calls. */
export interface BatchEmbedder {
  embed(texts: readonly string[]): Promise<Float32Array[]>;
}

/** Lists, embeds and commits pending items in batches until none is left; returns how many it embedded. */
export async function embedAllPending<P extends PendingItem>(
  store: PendingEmbeddingStore<P>,
  embedder: BatchEmbedder,
  batchSize = 16,
): Promise<number> {
  let embedded = 0;
  for (;;) {
    const pending = await store.listPendingEmbeddings({ limit: batchSize });
    if (pending.length === 0) return embedded;
    const vectors = await embedder.embed(pending.map((p) => p.content));
    await store.commitEmbeddings(
      pending.map((p, i) => {
        const vector = vectors[i];
        if (vector === undefined) throw new Error('the embedder returned fewer vectors than texts');
        return {
          id: p.id,
          revision: p.revision,
          state: 'ready' as const,
          vector,
          ...(p.chunk === undefined ? {} : { chunk: p.chunk }),
        };
      }),
    );
    embedded += pending.length;
  }
}
