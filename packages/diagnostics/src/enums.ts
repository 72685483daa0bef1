/**
 * The closed enums diagnostics records, mirrored from their producers so this package needs no runtime
 * import of them (DESIGN.md: type-only). `exhaustive<T>()` makes `tsc` fail when a mirror and its producer
 * drift apart in either direction: a value the producer lacks, or a producer value missing here.
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
import type {
  EmbeddingState,
  Lifecycle,
  MemoryKind,
  StatementKind,
  VectorWarmupOutcome,
} from '@engram/store';

/** Accepts an array only when it lists every member of `T` and nothing else (internal; not re-exported). */
export function exhaustive<T extends string>(): <const A extends readonly T[]>(
  values: A & ([T] extends [A[number]] ? unknown : never),
) => readonly T[] {
  return (values) => Object.freeze([...values]);
}

/** Retrieval purposes (`@engram/retrieval`). */
export const RETRIEVAL_PURPOSE_KEYS: readonly RetrievalPurpose[] = exhaustive<RetrievalPurpose>()([
  'recall',
  'search',
  'decision',
  'injection',
]);
/** Retrieval stages (`@engram/retrieval`). */
export const RETRIEVAL_STAGE_KEYS: readonly RetrievalStage[] = exhaustive<RetrievalStage>()([
  'keyword',
  'queryEmbedding',
  'vector',
  'authoritativeRevalidation',
  'assembly',
  'total',
]);
/** Retrieval outcomes (`@engram/retrieval`). */
export const RETRIEVAL_OUTCOME_KEYS: readonly RetrievalOutcome[] = exhaustive<RetrievalOutcome>()([
  'completed',
  'disabled',
  'emptyQuery',
  'cancelled',
  'failed',
]);
/** Degradation causes (`@engram/retrieval`). */
export const DEGRADATION_CAUSE_KEYS: readonly DegradationCause[] = exhaustive<DegradationCause>()([
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
]);
/** Circuit-breaker states (`@engram/retrieval`). */
export const CIRCUIT_STATE_KEYS: readonly CircuitState[] = exhaustive<CircuitState>()([
  'closed',
  'open',
  'halfOpen',
]);
/** Retrieval arms (`@engram/retrieval`): which index searched in a call. */
export const RETRIEVAL_ARM_KEYS: readonly RetrievalArm[] = exhaustive<RetrievalArm>()(['lexical', 'vector']);
/** Candidate arms counted per retrieval. */
export const CANDIDATE_KEYS: readonly ('fts' | 'vector' | 'selected')[] = exhaustive<
  'fts' | 'vector' | 'selected'
>()(['fts', 'vector', 'selected']);

/** Extraction outcomes (`@engram/maintenance`). */
export const EXTRACTION_OUTCOME_KEYS: readonly ExtractionOutcome[] = exhaustive<ExtractionOutcome>()([
  'completed',
  'cancelled',
  'failed',
  'skipped',
]);
/** Extraction decisions (`@engram/maintenance`). */
export const EXTRACTION_DECISION_KEYS: readonly ExtractionDecision[] = exhaustive<ExtractionDecision>()([
  'ADD',
  'UPDATE',
  'SUPERSEDE',
  'NOOP',
  'CHALLENGE',
]);
/** Heavy-phase maintenance steps (`@engram/maintenance`). */
export const MAINTENANCE_STEP_KEYS: readonly MaintenanceStep[] = exhaustive<MaintenanceStep>()([
  'challenge',
  'merge',
  'reflection',
  'persona',
]);
/** Maintenance phase outcomes (`@engram/maintenance`). */
export const PHASE_OUTCOME_KEYS: readonly PhaseOutcome[] = exhaustive<PhaseOutcome>()([
  'completed',
  'skipped',
  'gated',
  'failed',
  'cancelled',
]);
/** Provider admission decisions (`@engram/maintenance`). */
export const ADMISSION_DECISION_KEYS: readonly AdmissionDecision[] = exhaustive<AdmissionDecision>()([
  'admitted',
  'rateLimited',
  'capacityRejected',
]);
/** Provider race events (`@engram/maintenance`). */
export const PROVIDER_RACE_KEYS: readonly ProviderRace[] = exhaustive<ProviderRace>()([
  'deadline',
  'aborted',
  'lateSettled',
]);
/** Provider kinds (`@engram/maintenance`). */
export const PROVIDER_KIND_KEYS: readonly ProviderKind[] = exhaustive<ProviderKind>()(['embedding', 'model']);

/** Drain state transitions reported per batch (`DrainBatchReport.transitions`). */
export const DRAIN_TRANSITION_KEYS: readonly ('ready' | 'error' | 'ftsOnly' | 'stale')[] = exhaustive<
  'ready' | 'error' | 'ftsOnly' | 'stale'
>()(['ready', 'error', 'ftsOnly', 'stale']);

/** Vector warm-up outcomes (`@engram/store`). */
export const VECTOR_WARMUP_OUTCOME_KEYS: readonly VectorWarmupOutcome[] = exhaustive<VectorWarmupOutcome>()([
  'warm',
  'cold',
  'failed',
]);
/** Store statement families (`@engram/store`). */
export const STATEMENT_KIND_KEYS: readonly StatementKind[] = exhaustive<StatementKind>()([
  'read',
  'write',
  'fts',
  'vector',
  'like',
  'meta',
]);
/** Memory kinds (`@engram/store`), keys of the health DTO's `byKind`. */
export const MEMORY_KIND_KEYS: readonly MemoryKind[] = exhaustive<MemoryKind>()([
  'event',
  'fact',
  'semantic',
  'episodic',
  'reflection',
  'persona',
  'skill',
]);
/** Lifecycle states (`@engram/store`), keys of the health DTO's `byLifecycle`. */
export const LIFECYCLE_KEYS: readonly Lifecycle[] = exhaustive<Lifecycle>()([
  'active',
  'archived',
  'superseded',
  'conflicted',
]);
/** Embedding states (`@engram/store`), keys of the health DTO's `byEmbeddingState`. */
export const EMBEDDING_STATE_KEYS: readonly EmbeddingState[] = exhaustive<EmbeddingState>()([
  'pending',
  'ready',
  'error',
  'ftsOnly',
]);
