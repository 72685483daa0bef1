import type { MemoryStore } from '@engram/store';

/**
 * The slice of the store that the retriever needs (the consumer owns the port).
 *
 * Contract: every method is async and may reject with an `EngramStoreError`; the retriever never lets such a
 * rejection escape — it settles the call as `failed` (lexical arm, revalidation) or degrades to FTS-only
 * (vector arm) with a cause classified by the error's code. A port whose full-text index is unavailable rejects
 * `searchLexical` with the code `ENGRAM_STORE_FTS_UNAVAILABLE`: the call then degrades to vector-only
 * (`ftsUnavailable`). `searchVector` must search one agent's partition only and
 * `revalidate` must return only that agent's rows in the time scope it is given (`active` ones by default) of
 * the expected revision.
 *
 * Five members are optional. `sessionNeighbours` (read once per call under conversation scoring with a
 * neighbour share above 0): the memories next to the first lexical candidates in their sessions, which join as
 * candidates; absent, only the arm's own candidates are scored with their neighbours and sessions. `revalidateBrief` (the same answer as `revalidate`, with only the fields ranking
 * and filtering read): when present and the call has no scope or metadata filter, candidates are revalidated
 * with it and only the returned results are read in full (`revalidate`, at the revision they were ranked at;
 * one that changed in between is dropped and the rest ranked again); absent, every candidate is read in full
 * once. `listConflicts` (read after fusion, one call when the results include facts, never
 * on failure paths): open contradiction links of the results, shown in their explanations; absent or failing,
 * explanations carry no conflict.
 *
 * `embeddingProfile` (read once per call): `null` means the store has no vector
 * index, so the query is not embedded at all (`vectorCold`); a profile whose id or dimensions differ from the
 * embedder's also skips the embedding (`vectorCold`), and a query vector of another length than the store's is
 * never searched (`embeddingError`); absent, the embedder's own profile is trusted. `recordAccess` is called
 * after a `recall`, `search` or `injection` call has settled (never for `decision`, never on the call's path)
 * with the ids it returned; its rejection is swallowed — access times are advisory.
 */
export type RetrievalStore = Pick<MemoryStore, 'searchLexical' | 'searchVector' | 'revalidate'> &
  Partial<
    Pick<
      MemoryStore,
      'embeddingProfile' | 'recordAccess' | 'listConflicts' | 'revalidateBrief' | 'sessionNeighbours'
    >
  >;

/**
 * The slice of the store that context injection needs: the agent's active facts, and (when the store has it)
 * its open contradictions, which the core block marks.
 */
export type InjectionStore = Pick<MemoryStore, 'listMemories'> & Partial<Pick<MemoryStore, 'listConflicts'>>;

/**
 * Query-embedder port: turns texts into vectors of the store's embedding profile.
 *
 * Contract: async; called with one text per query (and a few texts when the tools compare facts); it should
 * honour `signal` (the retriever aborts it at the deadline) and may reject or never settle — the retriever
 * bounds every call by its deadline, its in-flight cap and its circuit breaker, so a broken embedder can only
 * degrade an answer to FTS-only, never fail or delay it past the deadline.
 */
export interface QueryEmbedder {
  readonly profile?: { readonly id: string; readonly dimensions: number };
  embed(texts: readonly string[], options?: { readonly signal?: AbortSignal }): Promise<Float32Array[]>;
}

/**
 * Reranker port: a cross-encoder that scores each document against the query.
 *
 * Contract: async; resolves with one finite score per document, in the documents' order (higher is more
 * relevant; any scale). It receives only the query and the memories' text (a chunked memory's matching
 * window), never an id, a tag or metadata. It should honour `signal` (the retriever aborts it at the rerank
 * budget) and may reject or never settle: the retriever bounds every call by its `timeoutMs` and then keeps
 * the fused order, reporting `rerankTimeout` or `rerankError`. A wrong number of scores, or a score that is
 * not a finite number, counts as an error.
 */
export interface Reranker {
  /** A name for reports (e.g. the model's); never sent anywhere. */
  readonly id?: string;
  rerank(
    query: string,
    documents: readonly string[],
    options?: { readonly signal?: AbortSignal },
  ): Promise<readonly number[]>;
}
