/**
 * The diagnostics snapshot DTO: TypeScript types, the strict zod schemas the health endpoint and the
 * health page parse it with, and empty (zero-filled) factories. A snapshot holds numbers, booleans,
 * timestamps (epoch ms) and closed enum keys only; `agentId`, a caller-chosen identifier, is the one string.
 */

import type {
  CircuitState,
  DegradationCause,
  RetrievalArm,
  RetrievalOutcome,
  RetrievalPurpose,
  RetrievalStage,
} from '@engram/contracts';
import type {
  AdmissionDecision,
  ExtractionDecision,
  ExtractionOutcome,
  MaintenanceStep,
  PhaseOutcome,
  ProviderKind,
  ProviderRace,
} from '@engram/maintenance';
import type { StatementKind, VectorWarmupOutcome } from '@engram/store';
import { z } from 'zod';
import {
  ADMISSION_DECISION_KEYS,
  CANDIDATE_KEYS,
  CIRCUIT_STATE_KEYS,
  DEGRADATION_CAUSE_KEYS,
  DRAIN_TRANSITION_KEYS,
  EXTRACTION_DECISION_KEYS,
  EXTRACTION_OUTCOME_KEYS,
  MAINTENANCE_STEP_KEYS,
  PHASE_OUTCOME_KEYS,
  PROVIDER_KIND_KEYS,
  PROVIDER_RACE_KEYS,
  RETRIEVAL_ARM_KEYS,
  RETRIEVAL_OUTCOME_KEYS,
  RETRIEVAL_PURPOSE_KEYS,
  RETRIEVAL_STAGE_KEYS,
  STATEMENT_KIND_KEYS,
  VECTOR_WARMUP_OUTCOME_KEYS,
} from './enums.js';
import { DEFAULT_SAMPLE_CAPACITY, type DistributionSummary, EMPTY_DISTRIBUTION } from './ring.js';

/** Version of the snapshot shape; bumped on any incompatible change. */
export const DIAGNOSTICS_SCHEMA_VERSION: 1 = 1;

/** Default number of agents the collector tracks. */
export const DEFAULT_MAX_AGENTS = 64;

/** Default idle time after which an agent's state is dropped: 24 hours. */
export const DEFAULT_AGENT_TTL_MS: number = 24 * 60 * 60 * 1000;

/** Longest agent id the collector tracks (UTF-16 code units); longer ids are rejected, never truncated. */
export const MAX_AGENT_ID_LENGTH = 256;

/** A candidate arm counted per retrieval. */
export type CandidateArm = (typeof CANDIDATE_KEYS)[number];
/** A drain state transition counted per batch. */
export type DrainTransition = (typeof DRAIN_TRANSITION_KEYS)[number];

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

// ---------------------------------------------------------------------------------------------------------
// Schemas

const count = z.number().nonnegative();
const nullableCount = count.nullable();
const timestamp = z.number().nonnegative();
const nullableTimestamp = timestamp.nullable();

function countsBy<K extends string>(keys: readonly K[]) {
  return z.record(z.enum(keys), count);
}

/** Schema of one distribution: window count, all-time total, nearest-rank p50/p95 and max (null without samples). */
export const distributionSchema: z.ZodType<DistributionSummary> = z.strictObject({
  count: z.number().int().nonnegative(),
  total: z.number().int().nonnegative(),
  p50: nullableCount,
  p95: nullableCount,
  max: nullableCount,
});

const retrievalPurposeSchema = z.strictObject({
  operations: count,
  outcomes: countsBy(RETRIEVAL_OUTCOME_KEYS),
  degradations: countsBy(DEGRADATION_CAUSE_KEYS),
  arms: countsBy(RETRIEVAL_ARM_KEYS),
  latency: z.record(z.enum(RETRIEVAL_STAGE_KEYS), distributionSchema),
  candidates: z.record(z.enum(CANDIDATE_KEYS), distributionSchema),
});

/** Schema of the per-agent part. */
export const agentDiagnosticsSchema: z.ZodType<AgentDiagnostics> = z.strictObject({
  tracked: z.boolean(),
  firstSeenAt: nullableTimestamp,
  lastSeenAt: nullableTimestamp,
  retrieval: z.record(z.enum(RETRIEVAL_PURPOSE_KEYS), retrievalPurposeSchema),
  extraction: z.strictObject({
    chunks: count,
    outcomes: countsBy(EXTRACTION_OUTCOME_KEYS),
    decisions: countsBy(EXTRACTION_DECISION_KEYS),
    candidates: count,
    invalidOutputs: count,
    conflicts: count,
    duration: distributionSchema,
  }),
  embedding: z.strictObject({
    batches: count,
    rows: count,
    transitions: countsBy(DRAIN_TRANSITION_KEYS),
    batchSize: distributionSchema,
    duration: distributionSchema,
  }),
  maintenance: z.strictObject({
    passes: count,
    cheap: z.strictObject({
      outcomes: countsBy(PHASE_OUTCOME_KEYS),
      repaired: count,
      archived: count,
      pruned: count,
    }),
    heavy: z.strictObject({
      outcomes: countsBy(PHASE_OUTCOME_KEYS),
      modelCalls: count,
      inputTokens: count,
      invalidOutputs: count,
      conflicts: count,
      denials: countsBy(MAINTENANCE_STEP_KEYS),
      steps: z.record(z.enum(MAINTENANCE_STEP_KEYS), countsBy(PHASE_OUTCOME_KEYS)),
    }),
    duration: distributionSchema,
  }),
});

/** Schema of the process-wide part. */
export const processDiagnosticsSchema: z.ZodType<ProcessDiagnostics> = z.strictObject({
  collector: z.strictObject({
    agentsTracked: count,
    maxAgents: count,
    agentTtlMs: count,
    sampleCapacity: count,
    agentsEvicted: count,
    agentsExpired: count,
    recordsRejected: count,
    observerFailures: count,
  }),
  extractionQueue: z.strictObject({
    depth: nullableCount,
    depthHighWater: nullableCount,
    oldestAgeMs: nullableCount,
    updatedAt: nullableTimestamp,
  }),
  embeddingBacklog: z.strictObject({
    total: nullableCount,
    activeAgents: nullableCount,
    updatedAt: nullableTimestamp,
  }),
  vectorStores: z.strictObject({
    openStores: nullableCount,
    openStoresHighWater: nullableCount,
    leases: nullableCount,
    leasesHighWater: nullableCount,
    updatedAt: nullableTimestamp,
    warmup: countsBy(VECTOR_WARMUP_OUTCOME_KEYS),
  }),
  providers: z.record(
    z.enum(PROVIDER_KIND_KEYS),
    z.strictObject({
      queued: nullableCount,
      queuedHighWater: nullableCount,
      active: nullableCount,
      activeHighWater: nullableCount,
      updatedAt: nullableTimestamp,
      admissions: countsBy(ADMISSION_DECISION_KEYS),
      races: countsBy(PROVIDER_RACE_KEYS),
    }),
  ),
  queryEmbeddingCircuit: z.strictObject({
    state: z.record(z.enum(CIRCUIT_STATE_KEYS), z.boolean()),
    failures: nullableCount,
    opened: nullableCount,
    halfOpenProbes: nullableCount,
    rejected: nullableCount,
    reports: count,
    updatedAt: nullableTimestamp,
  }),
  store: z.strictObject({
    statements: countsBy(STATEMENT_KIND_KEYS),
  }),
});

const agentIdSchema = z.string().min(1).max(MAX_AGENT_ID_LENGTH);

/** Strict schema of {@link DiagnosticsSnapshot}: unknown keys, strings other than `agentId` and missing enum keys are rejected. */
export const diagnosticsSnapshotSchema: z.ZodType<DiagnosticsSnapshot> = z.strictObject({
  schemaVersion: z.literal(DIAGNOSTICS_SCHEMA_VERSION),
  generatedAt: timestamp,
  agentId: agentIdSchema.nullable(),
  agent: agentDiagnosticsSchema,
  process: processDiagnosticsSchema,
});

/** Strict schema of {@link DiagnosticsSnapshotAll}. */
export const diagnosticsSnapshotAllSchema: z.ZodType<DiagnosticsSnapshotAll> = z.strictObject({
  schemaVersion: z.literal(DIAGNOSTICS_SCHEMA_VERSION),
  generatedAt: timestamp,
  agents: z.array(z.strictObject({ agentId: agentIdSchema, agent: agentDiagnosticsSchema })),
  process: processDiagnosticsSchema,
});

// ---------------------------------------------------------------------------------------------------------
// Empty (zero-filled) parts

/** A record with every key of `keys` set to `value()` (a fresh value per key). */
export function fillRecord<K extends string, V>(keys: readonly K[], value: (key: K) => V): Record<K, V> {
  const out = {} as Record<K, V>;
  for (const key of keys) out[key] = value(key);
  return out;
}

const zero = (): number => 0;
const emptyDistribution = (): DistributionSummary => ({ ...EMPTY_DISTRIBUTION });

/** The agent part of an agent without samples: every enum key present, counters 0, percentiles null. */
export function createEmptyAgentDiagnostics(): AgentDiagnostics {
  return {
    tracked: false,
    firstSeenAt: null,
    lastSeenAt: null,
    retrieval: fillRecord(RETRIEVAL_PURPOSE_KEYS, () => ({
      operations: 0,
      outcomes: fillRecord(RETRIEVAL_OUTCOME_KEYS, zero),
      degradations: fillRecord(DEGRADATION_CAUSE_KEYS, zero),
      arms: fillRecord(RETRIEVAL_ARM_KEYS, zero),
      latency: fillRecord(RETRIEVAL_STAGE_KEYS, emptyDistribution),
      candidates: fillRecord(CANDIDATE_KEYS, emptyDistribution),
    })),
    extraction: {
      chunks: 0,
      outcomes: fillRecord(EXTRACTION_OUTCOME_KEYS, zero),
      decisions: fillRecord(EXTRACTION_DECISION_KEYS, zero),
      candidates: 0,
      invalidOutputs: 0,
      conflicts: 0,
      duration: emptyDistribution(),
    },
    embedding: {
      batches: 0,
      rows: 0,
      transitions: fillRecord(DRAIN_TRANSITION_KEYS, zero),
      batchSize: emptyDistribution(),
      duration: emptyDistribution(),
    },
    maintenance: {
      passes: 0,
      cheap: { outcomes: fillRecord(PHASE_OUTCOME_KEYS, zero), repaired: 0, archived: 0, pruned: 0 },
      heavy: {
        outcomes: fillRecord(PHASE_OUTCOME_KEYS, zero),
        modelCalls: 0,
        inputTokens: 0,
        invalidOutputs: 0,
        conflicts: 0,
        denials: fillRecord(MAINTENANCE_STEP_KEYS, zero),
        steps: fillRecord(MAINTENANCE_STEP_KEYS, () => fillRecord(PHASE_OUTCOME_KEYS, zero)),
      },
      duration: emptyDistribution(),
    },
  };
}

/** Collector settings echoed in an empty process part. */
export interface EmptyProcessSettings {
  readonly maxAgents: number;
  readonly agentTtlMs: number;
  readonly sampleCapacity: number;
}

/** The process part before any report: gauges null, counters 0, every enum key present. */
export function createEmptyProcessDiagnostics(settings: EmptyProcessSettings): ProcessDiagnostics {
  return {
    collector: {
      agentsTracked: 0,
      maxAgents: settings.maxAgents,
      agentTtlMs: settings.agentTtlMs,
      sampleCapacity: settings.sampleCapacity,
      agentsEvicted: 0,
      agentsExpired: 0,
      recordsRejected: 0,
      observerFailures: 0,
    },
    extractionQueue: { depth: null, depthHighWater: null, oldestAgeMs: null, updatedAt: null },
    embeddingBacklog: { total: null, activeAgents: null, updatedAt: null },
    vectorStores: {
      openStores: null,
      openStoresHighWater: null,
      leases: null,
      leasesHighWater: null,
      updatedAt: null,
      warmup: fillRecord(VECTOR_WARMUP_OUTCOME_KEYS, zero),
    },
    providers: fillRecord(PROVIDER_KIND_KEYS, () => ({
      queued: null,
      queuedHighWater: null,
      active: null,
      activeHighWater: null,
      updatedAt: null,
      admissions: fillRecord(ADMISSION_DECISION_KEYS, zero),
      races: fillRecord(PROVIDER_RACE_KEYS, zero),
    })),
    queryEmbeddingCircuit: {
      state: fillRecord(CIRCUIT_STATE_KEYS, () => false),
      failures: null,
      opened: null,
      halfOpenProbes: null,
      rejected: null,
      reports: 0,
      updatedAt: null,
    },
    store: { statements: fillRecord(STATEMENT_KIND_KEYS, zero) },
  };
}

/** Options of {@link createEmptySnapshot}. */
export interface EmptySnapshotOptions extends Partial<EmptyProcessSettings> {
  /** Epoch ms; defaults to `Date.now()`. */
  readonly generatedAt?: number;
}

/** A snapshot with no samples at all: the agent part empty, the process part before any report. */
export function createEmptySnapshot(
  agentId?: string,
  options: EmptySnapshotOptions = {},
): DiagnosticsSnapshot {
  return {
    schemaVersion: DIAGNOSTICS_SCHEMA_VERSION,
    generatedAt: options.generatedAt ?? Date.now(),
    agentId: agentId ?? null,
    agent: createEmptyAgentDiagnostics(),
    process: createEmptyProcessDiagnostics({
      maxAgents: options.maxAgents ?? DEFAULT_MAX_AGENTS,
      agentTtlMs: options.agentTtlMs ?? DEFAULT_AGENT_TTL_MS,
      sampleCapacity: options.sampleCapacity ?? DEFAULT_SAMPLE_CAPACITY,
    }),
  };
}
