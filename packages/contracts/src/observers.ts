/**
 * The observer ports producers call and diagnostics implements. Every report holds numbers, booleans,
 * timestamps, closed enum values and the caller-chosen `agentId` only: no memory text, query, vector or
 * error message ever crosses a port.
 *
 * Common contract of every port: the producer calls it synchronously, on its own call path; an observer
 * must not throw, block or keep the report beyond the call (copy what it needs); producers isolate observer
 * failures anyway, so an observer can never change or delay a result. Each port has a no-op default.
 */
import type {
  AdmissionDecision,
  CircuitState,
  DegradationCause,
  ExtractionDecision,
  ExtractionOutcome,
  MaintenanceStep,
  ModelOutputSchema,
  PhaseOutcome,
  ProviderKind,
  ProviderRace,
  RetrievalArm,
  RetrievalOutcome,
  RetrievalPurpose,
  RetrievalStage,
  StatementKind,
  VectorWarmupOutcome,
} from './enums.js';

// ---------------------------------------------------------------------------------------------------------
// Store

/** Absolute gauge: stores with a vector index open in this process, and leases (open handles) on them. */
export interface VectorStoreGauge {
  readonly openStores: number;
  readonly leases: number;
}

/**
 * Observer port of the SQLite store: statement counts (for perf tests that assert counts, never time) and
 * the process-wide vector-store gauges. Called by the store, synchronously; every method optional.
 */
export interface StoreObserver {
  /** One SQL statement executed (counts only). */
  onStatement?(kind: StatementKind): void;
  /** The vector-store gauge changed. */
  onVectorStores?(gauge: VectorStoreGauge): void;
  /** A store's vector index warmed up (or failed to). */
  onVectorWarmup?(outcome: VectorWarmupOutcome): void;
}

/** The no-op store observer. */
export const noopStoreObserver: StoreObserver = Object.freeze({});

// ---------------------------------------------------------------------------------------------------------
// Retrieval

/** Candidate counts of one call. */
export interface RetrievalCandidateCounts {
  readonly fts: number;
  readonly vector: number;
  readonly selected: number;
}

/** The settled execution record of one retrieval call: numbers and closed enums only. */
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
 * Observer port of the retriever. Called by the retriever, synchronously: `onRetrieval` exactly once per
 * call from the call's `finally` (whatever the outcome), `onCircuitState` on every circuit transition.
 */
export interface RetrievalObserver {
  onRetrieval(execution: RetrievalExecution): void;
  onCircuitState?(snapshot: CircuitSnapshot): void;
}

/** The no-op retrieval observer. */
export const noopRetrievalObserver: RetrievalObserver = Object.freeze({
  onRetrieval(): void {},
  onCircuitState(): void {},
});

// ---------------------------------------------------------------------------------------------------------
// Maintenance

/**
 * One drained batch of one agent. A batch of an all-agents run that holds rows of several agents is
 * reported once per agent (its rows, its transitions); `agentId` is always a real agent id.
 */
export interface DrainBatchReport {
  readonly agentId: string;
  readonly batchSize: number;
  readonly durationMs: number;
  readonly transitions: {
    readonly ready: number;
    readonly error: number;
    readonly ftsOnly: number;
    readonly stale: number;
  };
}

/** One extraction chunk. */
export interface ExtractionReport {
  readonly agentId: string;
  readonly outcome: ExtractionOutcome;
  readonly durationMs: number;
  readonly candidates: number;
  readonly decisions: Readonly<Record<ExtractionDecision, number>>;
  /** Model outputs rejected by validation (counted, never half-applied). */
  readonly invalidOutputs: number;
  /** Re-decisions after a real compare-and-set conflict. */
  readonly conflicts: number;
}

/** One maintenance pass of one agent. */
export interface MaintenancePassReport {
  readonly agentId: string;
  readonly durationMs: number;
  readonly cheap: {
    readonly outcome: PhaseOutcome;
    readonly repaired: number;
    readonly archived: number;
    readonly pruned: number;
  };
  readonly heavy: {
    readonly outcome: PhaseOutcome;
    readonly modelCalls: number;
    readonly inputTokens: number;
    /** Denied budget reservations per step. */
    readonly denials: Readonly<Record<MaintenanceStep, number>>;
    readonly steps: Readonly<Record<MaintenanceStep, PhaseOutcome>>;
    /** Model answers rejected by validation in this pass. */
    readonly invalidOutputs?: number;
    /** The rejected answers by the schema they were asked for (absent when none was rejected). */
    readonly invalidBySchema?: Readonly<Partial<Record<ModelOutputSchema, number>>>;
    /** Compare-and-set conflicts met by heavy steps (the write was skipped, never retried blindly). */
    readonly conflicts?: number;
  };
}

/** Absolute gauge of the embedding backlog, read from the store's counts after each drain run. */
export interface EmbeddingBacklogReport {
  readonly total: number;
  readonly activeAgents: number;
}

/** Absolute gauge of the process-wide extraction queue. */
export interface ExtractionQueueReport {
  readonly depth: number;
  readonly oldestAgeMs: number;
}

/**
 * Observer port of the drain, ingestion, extraction and maintenance passes. Called by those passes,
 * synchronously, once per batch / chunk / pass; every method optional.
 */
export interface MaintenanceObserver {
  onDrainBatch?(report: DrainBatchReport): void;
  onEmbeddingBacklog?(gauge: EmbeddingBacklogReport): void;
  onExtraction?(report: ExtractionReport): void;
  onExtractionQueue?(gauge: ExtractionQueueReport): void;
  onMaintenancePass?(report: MaintenancePassReport): void;
}

/** The no-op maintenance observer. */
export const noopMaintenanceObserver: MaintenanceObserver = Object.freeze({});

// ---------------------------------------------------------------------------------------------------------
// Provider gateway

/** Absolute gauge of one provider kind: requests waiting for a slot, and requests running. */
export interface ProviderQueueReport {
  readonly kind: ProviderKind;
  readonly queued: number;
  readonly active: number;
}

/**
 * Observer port of the provider gateway (process-wide figures). Called by the gateway, synchronously, on
 * every queue change, admission decision and race; every method optional.
 */
export interface ProviderObserver {
  onQueue?(gauge: ProviderQueueReport): void;
  onAdmission?(kind: ProviderKind, decision: AdmissionDecision): void;
  onRace?(kind: ProviderKind, race: ProviderRace): void;
}

/** The no-op provider observer. */
export const noopProviderObserver: ProviderObserver = Object.freeze({});
