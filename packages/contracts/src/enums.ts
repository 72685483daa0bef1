/**
 * Every closed enum of Engram, as `as const` tuples with their member types. Producers record these values,
 * diagnostics counts them and the health page renders them, all from this one list.
 *
 * This module imports nothing: the health page loads its compiled form in the browser as an ES module.
 */

// ---------------------------------------------------------------------------------------------------------
// Store

/** Memory kinds, after the three-layer memory model. */
export const MEMORY_KINDS = [
  'event',
  'fact',
  'semantic',
  'episodic',
  'reflection',
  'persona',
  'skill',
] as const;
/** A memory kind. */
export type MemoryKind = (typeof MEMORY_KINDS)[number];

/** Kinds that search returns by default: `persona` and `skill` are managed records, not recalled. */
export const RECALLABLE_KINDS: readonly MemoryKind[] = [
  'event',
  'fact',
  'semantic',
  'episodic',
  'reflection',
];

/** Lifecycle states of a memory row; only `active` rows are ever returned by search. */
export const LIFECYCLES = ['active', 'archived', 'superseded', 'conflicted'] as const;
/** A lifecycle state. */
export type Lifecycle = (typeof LIFECYCLES)[number];

/** Embedding states: rows start `pending`; the drain moves them to `ready`, `error` or `ftsOnly`. */
export const EMBEDDING_STATES = ['pending', 'ready', 'error', 'ftsOnly'] as const;
/** An embedding state. */
export type EmbeddingState = (typeof EMBEDDING_STATES)[number];

/**
 * The outcome of a store file's integrity check (`PRAGMA quick_check`): `ok`, `failed` (writes are refused),
 * or `notChecked` (no check ran in this process, e.g. a read-only open or a file above the check's size bound).
 */
export const INTEGRITY_STATES = ['ok', 'failed', 'notChecked'] as const;
/** An integrity-check outcome. */
export type IntegrityState = (typeof INTEGRITY_STATES)[number];

/** Event types of the archival log. */
export const EVENT_TYPES = ['message', 'tool_call', 'tool_result'] as const;
/** An event type. */
export type EventType = (typeof EVENT_TYPES)[number];

/** Store statement families counted by the store observer's `onStatement`. */
export const STATEMENT_KINDS = ['read', 'write', 'fts', 'vector', 'like', 'meta'] as const;
/** A statement family. */
export type StatementKind = (typeof STATEMENT_KINDS)[number];

/** Warm-up outcomes of a store's vector index (the first vector query or write after opening). */
export const VECTOR_WARMUP_OUTCOMES = ['warm', 'cold', 'failed'] as const;
/** A warm-up outcome. */
export type VectorWarmupOutcome = (typeof VECTOR_WARMUP_OUTCOMES)[number];

// ---------------------------------------------------------------------------------------------------------
// Retrieval

/** Why a retrieval ran: one entry point per purpose. */
export const RETRIEVAL_PURPOSES = ['recall', 'search', 'decision', 'injection'] as const;
/** A retrieval purpose. */
export type RetrievalPurpose = (typeof RETRIEVAL_PURPOSES)[number];

/** Timed stages of the pipeline; `rerank` runs only with a reranker configured; `total` spans the whole call. */
export const RETRIEVAL_STAGES = [
  'keyword',
  'queryEmbedding',
  'vector',
  'authoritativeRevalidation',
  'assembly',
  'rerank',
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
  'rerankTimeout',
  'rerankError',
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

/** Candidate counts of one retrieval call: per arm, and the rows selected. */
export const CANDIDATE_ARMS = ['fts', 'vector', 'selected'] as const;
/** A candidate count key. */
export type CandidateArm = (typeof CANDIDATE_ARMS)[number];

// ---------------------------------------------------------------------------------------------------------
// Maintenance and the provider gateway

/** Terminal outcomes of one extraction chunk. */
export const EXTRACTION_OUTCOMES = ['completed', 'cancelled', 'failed', 'skipped'] as const;
/** An extraction outcome. */
export type ExtractionOutcome = (typeof EXTRACTION_OUTCOMES)[number];

/** Decisions the extraction model may take for a candidate memory. */
export const EXTRACTION_DECISIONS = ['ADD', 'UPDATE', 'SUPERSEDE', 'NOOP', 'CHALLENGE'] as const;
/** An extraction decision. */
export type ExtractionDecision = (typeof EXTRACTION_DECISIONS)[number];

/** Steps of the heavy maintenance phase, each reserving from one budget per pass. */
export const MAINTENANCE_STEPS = ['challenge', 'merge', 'reflection', 'persona'] as const;
/** A heavy-phase step. */
export type MaintenanceStep = (typeof MAINTENANCE_STEPS)[number];

/**
 * The names of the structured answers a model is asked for (the model port's `jsonSchema.name`): candidates
 * and decisions of extraction, then the heavy maintenance steps. `@engram/maintenance` documents each shape.
 */
export const MODEL_OUTPUT_SCHEMAS = [
  'memory_candidates',
  'memory_decision',
  'memory_challenge',
  'memory_merge',
  'memory_reflection',
  'memory_persona',
] as const;
/** One model-output schema name. */
export type ModelOutputSchema = (typeof MODEL_OUTPUT_SCHEMAS)[number];

/** Outcomes of a maintenance phase. `gated`: the heavy phase's cool-down had not elapsed. */
export const PHASE_OUTCOMES = ['completed', 'skipped', 'gated', 'failed', 'cancelled'] as const;
/** A phase outcome. */
export type PhaseOutcome = (typeof PHASE_OUTCOMES)[number];

/** Drain state transitions reported per batch. `stale`: the row changed while it was being embedded. */
export const DRAIN_TRANSITIONS = ['ready', 'error', 'ftsOnly', 'stale'] as const;
/** A drain transition. */
export type DrainTransition = (typeof DRAIN_TRANSITIONS)[number];

/** The periodic tasks of the maintenance scheduler. */
export const SCHEDULER_TASKS = ['ingest', 'drain', 'maintain'] as const;
/** A scheduler task. */
export type SchedulerTask = (typeof SCHEDULER_TASKS)[number];

/** Provider admission decisions of the gateway. */
export const ADMISSION_DECISIONS = ['admitted', 'rateLimited', 'capacityRejected'] as const;
/** An admission decision. */
export type AdmissionDecision = (typeof ADMISSION_DECISIONS)[number];

/** Races the gateway settles: a deadline fired, the caller aborted, or the provider answered after either. */
export const PROVIDER_RACES = ['deadline', 'aborted', 'lateSettled'] as const;
/** A provider race event. */
export type ProviderRace = (typeof PROVIDER_RACES)[number];

/** The provider kinds the gateway fronts. */
export const PROVIDER_KINDS = ['embedding', 'model'] as const;
/** A provider kind. */
export type ProviderKind = (typeof PROVIDER_KINDS)[number];
