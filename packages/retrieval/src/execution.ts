/**
 * The retrieval execution context and its observer port (DESIGN.md, "Retrieval").
 * These closed enums are the only keys diagnostics may record: no text ever crosses this port.
 */

/** Why a retrieval ran: one entry point per purpose. */
export const RETRIEVAL_PURPOSES = ['recall', 'search', 'decision', 'injection'] as const;
/** A retrieval purpose. */
export type RetrievalPurpose = (typeof RETRIEVAL_PURPOSES)[number];

/** Timed stages of the pipeline; `total` spans the whole call. */
export const RETRIEVAL_STAGES = [
  'keyword',
  'queryEmbedding',
  'vector',
  'authoritativeRevalidation',
  'assembly',
  'total',
] as const;
/** A retrieval stage. */
export type RetrievalStage = (typeof RETRIEVAL_STAGES)[number];

/** Exactly one terminal outcome per call. */
export const RETRIEVAL_OUTCOMES = ['completed', 'disabled', 'emptyQuery', 'cancelled', 'failed'] as const;
/** A retrieval outcome. */
export type RetrievalOutcome = (typeof RETRIEVAL_OUTCOMES)[number];

/** Causes of a degraded (but possibly `completed`) answer; independent of the outcome. */
export const DEGRADATION_CAUSES = [
  'vectorCold',
  'embeddingTimeout',
  'embeddingError',
  'embeddingCircuitOpen',
  'storeUnusable',
  'storeTimeout',
  'storeError',
  'revisionChanged',
  'ftsUnavailable',
  'candidateBudgetExhausted',
  'unknown',
] as const;
/** A degradation cause. */
export type DegradationCause = (typeof DEGRADATION_CAUSES)[number];

/** States of the query-embedding circuit breaker. */
export const CIRCUIT_STATES = ['closed', 'open', 'halfOpen'] as const;
/** A circuit-breaker state. */
export type CircuitState = (typeof CIRCUIT_STATES)[number];

/** The retrieval arms: FTS5 (lexical) and sqlite-vec (vector). */
export const RETRIEVAL_ARMS = ['lexical', 'vector'] as const;
/** A retrieval arm. */
export type RetrievalArm = (typeof RETRIEVAL_ARMS)[number];

/** Candidate counts of one call. */
export interface RetrievalCandidateCounts {
  readonly fts: number;
  readonly vector: number;
  readonly selected: number;
}

/** The settled execution context of one retrieval call: numbers and closed enums only. */
export interface RetrievalExecution {
  readonly purpose: RetrievalPurpose;
  readonly agentId: string;
  /** Epoch ms. */
  readonly startedAt: number;
  /** Milliseconds per stage that actually ran; a stage that did not run is absent (never 0). */
  readonly latencies: Readonly<Partial<Record<RetrievalStage, number>>>;
  readonly candidates: RetrievalCandidateCounts;
  readonly outcome: RetrievalOutcome;
  readonly degradations: readonly DegradationCause[];
  /**
   * Arms that searched in this call (in `RETRIEVAL_ARMS` order): `['lexical']` is an FTS-only answer. Absent
   * when no arm ran (`disabled`, `emptyQuery`, or a call cancelled or failed before any search).
   */
  readonly arms?: readonly RetrievalArm[];
}

/** Circuit-breaker counters, cumulative for the retriever's lifetime. */
export interface CircuitSnapshot {
  readonly state: CircuitState;
  readonly failures: number;
  readonly opened: number;
  readonly halfOpenProbes: number;
  readonly rejected: number;
}

/**
 * Observer port of the retriever. Called synchronously, exactly once per call (`onRetrieval`) from the
 * call's `finally`, and on every circuit transition. It must not throw; the retriever isolates it anyway,
 * so an observer failure can never change or delay a result. The default is a no-op.
 */
export interface RetrievalObserver {
  onRetrieval(execution: RetrievalExecution): void;
  onCircuitState?(snapshot: CircuitSnapshot): void;
}

/** The no-op observer. */
export const noopRetrievalObserver: RetrievalObserver = Object.freeze({
  onRetrieval(): void {},
  onCircuitState(): void {},
});
