/**
 * Empty (zero-filled) parts of the health DTO and the DTO factory: every enum key present, counters 0,
 * gauges and percentiles null until a report arrives.
 */
import {
  ADMISSION_DECISIONS,
  CANDIDATE_ARMS,
  CIRCUIT_STATES,
  DEGRADATION_CAUSES,
  DRAIN_TRANSITIONS,
  EMBEDDING_STATES,
  EXTRACTION_DECISIONS,
  EXTRACTION_OUTCOMES,
  LIFECYCLES,
  MAINTENANCE_STEPS,
  MEMORY_KINDS,
  MODEL_OUTPUT_SCHEMAS,
  PHASE_OUTCOMES,
  PROVIDER_KINDS,
  PROVIDER_RACES,
  RETRIEVAL_ARMS,
  RETRIEVAL_OUTCOMES,
  RETRIEVAL_PURPOSES,
  RETRIEVAL_STAGES,
  STATEMENT_KINDS,
  VECTOR_WARMUP_OUTCOMES,
} from '../enums.js';
import { DIAGNOSTICS_SCHEMA_VERSION } from './schema.js';
import type {
  AgentDiagnostics,
  DiagnosticsSnapshot,
  DistributionSummary,
  HealthDto,
  ProcessDiagnostics,
  ProcessesDto,
  StoreHealthDto,
  StoreIntegrityDto,
} from './types.js';

/** Default number of agents a diagnostics collector tracks. */
export const DEFAULT_MAX_AGENTS = 64;

/** Default idle time after which an agent's diagnostics are dropped: 24 hours. */
export const DEFAULT_AGENT_TTL_MS: number = 24 * 60 * 60 * 1000;

/** Default number of samples a distribution keeps. */
export const DEFAULT_SAMPLE_CAPACITY = 256;

/** The summary of a distribution that never received a sample. */
export const EMPTY_DISTRIBUTION: DistributionSummary = Object.freeze({
  count: 0,
  total: 0,
  p50: null,
  p95: null,
  max: null,
});

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
    retrieval: fillRecord(RETRIEVAL_PURPOSES, () => ({
      operations: 0,
      outcomes: fillRecord(RETRIEVAL_OUTCOMES, zero),
      degradations: fillRecord(DEGRADATION_CAUSES, zero),
      arms: fillRecord(RETRIEVAL_ARMS, zero),
      latency: fillRecord(RETRIEVAL_STAGES, emptyDistribution),
      candidates: fillRecord(CANDIDATE_ARMS, emptyDistribution),
    })),
    extraction: {
      chunks: 0,
      outcomes: fillRecord(EXTRACTION_OUTCOMES, zero),
      decisions: fillRecord(EXTRACTION_DECISIONS, zero),
      candidates: 0,
      invalidOutputs: 0,
      conflicts: 0,
      duration: emptyDistribution(),
    },
    embedding: {
      batches: 0,
      rows: 0,
      transitions: fillRecord(DRAIN_TRANSITIONS, zero),
      batchSize: emptyDistribution(),
      duration: emptyDistribution(),
    },
    maintenance: {
      passes: 0,
      cheap: { outcomes: fillRecord(PHASE_OUTCOMES, zero), repaired: 0, archived: 0, pruned: 0 },
      heavy: {
        outcomes: fillRecord(PHASE_OUTCOMES, zero),
        modelCalls: 0,
        inputTokens: 0,
        invalidOutputs: 0,
        invalidBySchema: fillRecord(MODEL_OUTPUT_SCHEMAS, zero),
        conflicts: 0,
        denials: fillRecord(MAINTENANCE_STEPS, zero),
        steps: fillRecord(MAINTENANCE_STEPS, () => fillRecord(PHASE_OUTCOMES, zero)),
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
      warmup: fillRecord(VECTOR_WARMUP_OUTCOMES, zero),
    },
    providers: fillRecord(PROVIDER_KINDS, () => ({
      queued: null,
      queuedHighWater: null,
      active: null,
      activeHighWater: null,
      updatedAt: null,
      admissions: fillRecord(ADMISSION_DECISIONS, zero),
      races: fillRecord(PROVIDER_RACES, zero),
    })),
    queryEmbeddingCircuit: {
      state: fillRecord(CIRCUIT_STATES, () => false),
      failures: null,
      opened: null,
      halfOpenProbes: null,
      rejected: null,
      reports: 0,
      updatedAt: null,
    },
    store: { statements: fillRecord(STATEMENT_KINDS, zero) },
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

/** The integrity outcome as the DTO carries it: its state, when, and the counts that leave writes allowed. */
function integrityDto(integrity: StoreIntegrityDto): StoreIntegrityDto {
  const count = (n: unknown): number | undefined =>
    typeof n === 'number' && Number.isSafeInteger(n) && n > 0 ? n : undefined;
  const badRows = count(integrity.badRows);
  const chunks = count(integrity.damagedVectorChunks);
  return {
    state: integrity.state,
    checkedAt: integrity.checkedAt,
    ...(badRows === undefined ? {} : { badRows }),
    ...(chunks === undefined ? {} : { damagedVectorChunks: chunks }),
  };
}

/**
 * Builds the health DTO from the store's health counts and a snapshot, copying only the known keys
 * (extra properties of either input never reach the DTO; a missing enum key counts 0).
 */
export function createHealthDto(
  store: StoreHealthDto,
  runtime: DiagnosticsSnapshot,
  processes?: ProcessesDto,
): HealthDto {
  return {
    store: {
      totals: {
        memories: store.totals.memories,
        events: store.totals.events,
        facts: store.totals.facts,
        skills: store.totals.skills,
      },
      byKind: fillRecord(MEMORY_KINDS, (k) => store.byKind[k] ?? 0),
      byLifecycle: fillRecord(LIFECYCLES, (k) => store.byLifecycle[k] ?? 0),
      byEmbeddingState: fillRecord(EMBEDDING_STATES, (k) => store.byEmbeddingState[k] ?? 0),
      ...(store.integrity === undefined ? {} : { integrity: integrityDto(store.integrity) }),
    },
    runtime,
    ...(processes === undefined
      ? {}
      : {
          processes: {
            list: processes.list.map((p) => ({
              id: p.id,
              self: p.self,
              startedAt: p.startedAt,
              beatAt: p.beatAt,
              runtime: p.runtime,
            })),
            skipped: processes.skipped,
          },
        }),
  };
}
