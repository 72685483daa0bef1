/**
 * Observer port of the store: statement counts (for perf tests that assert counts, never time) and the
 * process-wide vector-store gauges. Called synchronously; must not throw (the store isolates it anyway).
 */

/** Warm-up outcomes of a store's vector index (the first vector query or write after opening). */
export const VECTOR_WARMUP_OUTCOMES = ['warm', 'cold', 'failed'] as const;
/** A warm-up outcome. */
export type VectorWarmupOutcome = (typeof VECTOR_WARMUP_OUTCOMES)[number];

/** Store statement families counted by `onStatement`. */
export const STATEMENT_KINDS = ['read', 'write', 'fts', 'vector', 'like', 'meta'] as const;
/** A statement family. */
export type StatementKind = (typeof STATEMENT_KINDS)[number];

/** Observer port of the SQLite store; every method optional, no-op by default. */
export interface StoreObserver {
  /** One SQL statement executed (counts only). */
  onStatement?(kind: StatementKind): void;
  /** Absolute gauge: stores with a vector index open in this process, and leases (open handles) on them. */
  onVectorStores?(gauge: { readonly openStores: number; readonly leases: number }): void;
  onVectorWarmup?(outcome: VectorWarmupOutcome): void;
}

/** The no-op store observer. */
export const noopStoreObserver: StoreObserver = Object.freeze({});
