/**
 * The health DTO types: store health counts plus a diagnostics snapshot. The health page, the health
 * endpoint and `engram health --json` all speak this shape. A snapshot holds numbers, booleans, timestamps
 * (epoch ms) and closed enum keys only; `agentId`, a caller-chosen identifier, is the one string.
 */
import type {
  AdmissionDecision,
  CandidateArm,
  CircuitState,
  DegradationCause,
  DrainTransition,
  EmbeddingState,
  ExtractionDecision,
  ExtractionOutcome,
  IntegrityState,
  Lifecycle,
  MaintenanceStep,
  MemoryKind,
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
} from '../enums.js';

/** A distribution as it appears in a snapshot; a missing sample is null, never 0. */
export interface DistributionSummary {
  /** Samples in the ring window (at most the ring's capacity). */
  readonly count: number;
  /** Samples ever accepted (all time). */
  readonly total: number;
  readonly p50: number | null;
  readonly p95: number | null;
  readonly max: number | null;
}

/** Retrieval figures of one purpose (one agent). Latencies in milliseconds, candidates in rows. */
export interface RetrievalPurposeDiagnostics {
  readonly operations: number;
  readonly outcomes: Readonly<Record<RetrievalOutcome, number>>;
  readonly degradations: Readonly<Record<DegradationCause, number>>;
  /** Calls in which each arm searched (`lexical` without `vector` is an FTS-only answer). */
  readonly arms: Readonly<Record<RetrievalArm, number>>;
  readonly latency: Readonly<Record<RetrievalStage, DistributionSummary>>;
  readonly candidates: Readonly<Record<CandidateArm, DistributionSummary>>;
}

/** Extraction figures of one agent. */
export interface ExtractionDiagnostics {
  readonly chunks: number;
  readonly outcomes: Readonly<Record<ExtractionOutcome, number>>;
  readonly decisions: Readonly<Record<ExtractionDecision, number>>;
  readonly candidates: number;
  readonly invalidOutputs: number;
  readonly conflicts: number;
  readonly duration: DistributionSummary;
}

/** Embedding-drain figures of one agent. */
export interface EmbeddingDrainDiagnostics {
  readonly batches: number;
  readonly rows: number;
  readonly transitions: Readonly<Record<DrainTransition, number>>;
  readonly batchSize: DistributionSummary;
  readonly duration: DistributionSummary;
}

/** Maintenance-pass figures of one agent. */
export interface MaintenanceDiagnostics {
  readonly passes: number;
  readonly cheap: {
    readonly outcomes: Readonly<Record<PhaseOutcome, number>>;
    readonly repaired: number;
    readonly archived: number;
    readonly pruned: number;
  };
  readonly heavy: {
    readonly outcomes: Readonly<Record<PhaseOutcome, number>>;
    readonly modelCalls: number;
    readonly inputTokens: number;
    readonly invalidOutputs: number;
    /** Invalid model answers by the schema they were asked for. */
    readonly invalidBySchema: Readonly<Record<ModelOutputSchema, number>>;
    readonly conflicts: number;
    readonly denials: Readonly<Record<MaintenanceStep, number>>;
    readonly steps: Readonly<Record<MaintenanceStep, Readonly<Record<PhaseOutcome, number>>>>;
  };
  readonly duration: DistributionSummary;
}

/** The per-agent part of a snapshot (one agent, or the aggregate of every tracked agent). */
export interface AgentDiagnostics {
  /** Whether the collector holds state for this agent (for the aggregate: for any agent). */
  readonly tracked: boolean;
  readonly firstSeenAt: number | null;
  readonly lastSeenAt: number | null;
  readonly retrieval: Readonly<Record<RetrievalPurpose, RetrievalPurposeDiagnostics>>;
  readonly extraction: ExtractionDiagnostics;
  readonly embedding: EmbeddingDrainDiagnostics;
  readonly maintenance: MaintenanceDiagnostics;
}

/** The collector's own bookkeeping. */
export interface CollectorDiagnostics {
  readonly agentsTracked: number;
  readonly maxAgents: number;
  readonly agentTtlMs: number;
  readonly sampleCapacity: number;
  /** Agents dropped as least recently used to make room. */
  readonly agentsEvicted: number;
  /** Agents dropped after being idle for `agentTtlMs`. */
  readonly agentsExpired: number;
  /** Records or values refused: non-finite or negative numbers, unknown enum values, invalid agent ids. */
  readonly recordsRejected: number;
  /** Recorder calls that threw inside the collector (isolated: the producer never saw them). */
  readonly observerFailures: number;
}

/** Process-wide extraction-queue gauge (absolute values written by the queue). */
export interface ExtractionQueueGauge {
  readonly depth: number | null;
  readonly depthHighWater: number | null;
  readonly oldestAgeMs: number | null;
  readonly updatedAt: number | null;
}

/** Process-wide embedding-backlog gauge (absolute values written by the drain). */
export interface EmbeddingBacklogGauge {
  readonly total: number | null;
  readonly activeAgents: number | null;
  readonly updatedAt: number | null;
}

/** Process-wide vector-store gauges and warm-up outcome counts. */
export interface VectorStoreGauges {
  readonly openStores: number | null;
  readonly openStoresHighWater: number | null;
  readonly leases: number | null;
  readonly leasesHighWater: number | null;
  readonly updatedAt: number | null;
  readonly warmup: Readonly<Record<VectorWarmupOutcome, number>>;
}

/** Process-wide figures of one provider kind behind the gateway. */
export interface ProviderDiagnostics {
  readonly queued: number | null;
  readonly queuedHighWater: number | null;
  readonly active: number | null;
  readonly activeHighWater: number | null;
  readonly updatedAt: number | null;
  readonly admissions: Readonly<Record<AdmissionDecision, number>>;
  readonly races: Readonly<Record<ProviderRace, number>>;
}

/** The query-embedding circuit breaker as last reported (counters are the breaker's own cumulative values). */
export interface QueryEmbeddingCircuitDiagnostics {
  /** One-hot; all false until the first report. */
  readonly state: Readonly<Record<CircuitState, boolean>>;
  readonly failures: number | null;
  readonly opened: number | null;
  readonly halfOpenProbes: number | null;
  readonly rejected: number | null;
  /** Circuit reports received. */
  readonly reports: number;
  readonly updatedAt: number | null;
}

/** Process-wide store statement counts. */
export interface StoreStatementDiagnostics {
  readonly statements: Readonly<Record<StatementKind, number>>;
}

/** The process-wide part of a snapshot; agent eviction never changes it. */
export interface ProcessDiagnostics {
  readonly collector: CollectorDiagnostics;
  readonly extractionQueue: ExtractionQueueGauge;
  readonly embeddingBacklog: EmbeddingBacklogGauge;
  readonly vectorStores: VectorStoreGauges;
  readonly providers: Readonly<Record<ProviderKind, ProviderDiagnostics>>;
  readonly queryEmbeddingCircuit: QueryEmbeddingCircuitDiagnostics;
  readonly store: StoreStatementDiagnostics;
}

/** One diagnostics snapshot: an agent part (one agent, or all tracked agents when `agentId` is null) and the process part. */
export interface DiagnosticsSnapshot {
  readonly schemaVersion: 1;
  readonly generatedAt: number;
  readonly agentId: string | null;
  readonly agent: AgentDiagnostics;
  readonly process: ProcessDiagnostics;
}

/** Every tracked agent's part (most recently used first) plus the process part, for an agent picker. */
export interface DiagnosticsSnapshotAll {
  readonly schemaVersion: 1;
  readonly generatedAt: number;
  readonly agents: readonly { readonly agentId: string; readonly agent: AgentDiagnostics }[];
  readonly process: ProcessDiagnostics;
}

/** Store health counts as they appear in the health DTO (every enum key present). */
export interface StoreHealthDto {
  readonly totals: {
    readonly memories: number;
    readonly events: number;
    readonly facts: number;
    readonly skills: number;
  };
  readonly byKind: Readonly<Record<MemoryKind, number>>;
  readonly byLifecycle: Readonly<Record<Lifecycle, number>>;
  readonly byEmbeddingState: Readonly<Record<EmbeddingState, number>>;
  /**
   * The file's last integrity check (`PRAGMA quick_check`) in the reporting process: its outcome and when it
   * ran (epoch ms, null when it did not). Absent from a store that does not check.
   */
  readonly integrity?: StoreIntegrityDto | undefined;
}

/** An integrity check's outcome as the health DTO carries it. */
export interface StoreIntegrityDto {
  readonly state: IntegrityState;
  readonly checkedAt: number | null;
  /**
   * With a failed check, the rows holding a value no reader can use, and the damaged vector index chunks: when
   * either is present the structure is sound and writes stay allowed (the rows can be forgotten; a write repairs
   * the chunks). Without them a failed check refuses writes.
   */
  readonly badRows?: number | undefined;
  readonly damagedVectorChunks?: number | undefined;
}

/** One live process using the store, as its last beat reported it (or, for the serving process, now). */
export interface ProcessBeatDto {
  /** A random id of the process (32 hex digits; never a pid or a host name). */
  readonly id: string;
  /** Whether this is the process serving the page. */
  readonly self: boolean;
  /** When the process started, epoch ms. */
  readonly startedAt: number;
  /** When it last published its figures, epoch ms. */
  readonly beatAt: number;
  /** Its whole-process snapshot (`agentId` null: every agent it tracks merged). */
  readonly runtime: DiagnosticsSnapshot;
}

/** Every live process using the store, oldest first, and how many published rows could not be shown. */
export interface ProcessesDto {
  readonly list: readonly ProcessBeatDto[];
  /** Rows skipped as malformed, oversized or over the listed cap. */
  readonly skipped: number;
}

/**
 * The health DTO: `{ store, runtime, processes? }`. With `processes` and no agent asked for, `runtime` is the
 * totals over the listed processes; for one agent it is the serving process's figures of that agent.
 */
export interface HealthDto {
  readonly store: StoreHealthDto;
  readonly runtime: DiagnosticsSnapshot;
  readonly processes?: ProcessesDto | undefined;
}
