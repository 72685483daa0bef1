/**
 * The closed enum keys the page renders, in display order. Types come from the health DTO (a type-only
 * import, erased in the browser); `keysOf<T>()` makes `tsc` fail when a list here and the DTO drift apart.
 */
import type { HealthDto } from '@engram/diagnostics';

type Agent = HealthDto['runtime']['agent'];
type Process = HealthDto['runtime']['process'];
type Purpose = Agent['retrieval'][keyof Agent['retrieval']];

/** A retrieval purpose. */
export type PurposeKey = keyof Agent['retrieval'];
/** A retrieval stage. */
export type StageKey = keyof Purpose['latency'];
/** A retrieval outcome. */
export type OutcomeKey = keyof Purpose['outcomes'];
/** A degradation cause. */
export type DegradationKey = keyof Purpose['degradations'];
/** A candidate arm. */
export type CandidateKey = keyof Purpose['candidates'];
/** A memory kind. */
export type KindKey = keyof HealthDto['store']['byKind'];
/** A lifecycle state. */
export type LifecycleKey = keyof HealthDto['store']['byLifecycle'];
/** An embedding state. */
export type EmbeddingStateKey = keyof HealthDto['store']['byEmbeddingState'];
/** An extraction outcome. */
export type ExtractionOutcomeKey = keyof Agent['extraction']['outcomes'];
/** An extraction decision. */
export type DecisionKey = keyof Agent['extraction']['decisions'];
/** A drain transition. */
export type TransitionKey = keyof Agent['embedding']['transitions'];
/** A maintenance phase outcome. */
export type PhaseOutcomeKey = keyof Agent['maintenance']['cheap']['outcomes'];
/** A heavy-phase step. */
export type StepKey = keyof Agent['maintenance']['heavy']['denials'];
/** A provider kind. */
export type ProviderKey = keyof Process['providers'];
/** A provider admission decision. */
export type AdmissionKey = keyof Process['providers'][ProviderKey]['admissions'];
/** A provider race. */
export type RaceKey = keyof Process['providers'][ProviderKey]['races'];
/** A circuit-breaker state. */
export type CircuitKey = keyof Process['queryEmbeddingCircuit']['state'];
/** A vector warm-up outcome. */
export type WarmupKey = keyof Process['vectorStores']['warmup'];
/** A store statement family. */
export type StatementKey = keyof Process['store']['statements'];

/** Accepts an array only when it lists every member of `T` and nothing else. */
function keysOf<T extends string>(): <const A extends readonly T[]>(
  values: A & ([T] extends [A[number]] ? unknown : never),
) => readonly T[] {
  return (values) => Object.freeze([...values]);
}

/** Retrieval purposes, in display order. */
export const PURPOSES: readonly PurposeKey[] = keysOf<PurposeKey>()([
  'search',
  'recall',
  'injection',
  'decision',
]);
/** Retrieval stages, in pipeline order. */
export const STAGES: readonly StageKey[] = keysOf<StageKey>()([
  'keyword',
  'queryEmbedding',
  'vector',
  'authoritativeRevalidation',
  'assembly',
  'total',
]);
/** Retrieval outcomes. */
export const OUTCOMES: readonly OutcomeKey[] = keysOf<OutcomeKey>()([
  'completed',
  'emptyQuery',
  'disabled',
  'cancelled',
  'failed',
]);
/** Degradation causes. */
export const DEGRADATIONS: readonly DegradationKey[] = keysOf<DegradationKey>()([
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
/** Candidate arms. */
export const CANDIDATES: readonly CandidateKey[] = keysOf<CandidateKey>()(['fts', 'vector', 'selected']);
/** Memory kinds. */
export const KINDS: readonly KindKey[] = keysOf<KindKey>()([
  'event',
  'fact',
  'semantic',
  'episodic',
  'reflection',
  'persona',
  'skill',
]);
/** Lifecycle states. */
export const LIFECYCLES: readonly LifecycleKey[] = keysOf<LifecycleKey>()([
  'active',
  'archived',
  'superseded',
  'conflicted',
]);
/** Embedding states. */
export const EMBEDDING_STATES: readonly EmbeddingStateKey[] = keysOf<EmbeddingStateKey>()([
  'ready',
  'pending',
  'ftsOnly',
  'error',
]);
/** Extraction outcomes. */
export const EXTRACTION_OUTCOMES: readonly ExtractionOutcomeKey[] = keysOf<ExtractionOutcomeKey>()([
  'completed',
  'skipped',
  'cancelled',
  'failed',
]);
/** Extraction decisions. */
export const DECISIONS: readonly DecisionKey[] = keysOf<DecisionKey>()([
  'ADD',
  'UPDATE',
  'SUPERSEDE',
  'NOOP',
  'CHALLENGE',
]);
/** Drain transitions. */
export const TRANSITIONS: readonly TransitionKey[] = keysOf<TransitionKey>()([
  'ready',
  'ftsOnly',
  'error',
  'stale',
]);
/** Maintenance phase outcomes. */
export const PHASE_OUTCOMES: readonly PhaseOutcomeKey[] = keysOf<PhaseOutcomeKey>()([
  'completed',
  'skipped',
  'gated',
  'cancelled',
  'failed',
]);
/** Heavy-phase steps. */
export const STEPS: readonly StepKey[] = keysOf<StepKey>()(['challenge', 'merge', 'reflection', 'persona']);
/** Provider kinds. */
export const PROVIDERS: readonly ProviderKey[] = keysOf<ProviderKey>()(['embedding', 'model']);
/** Provider admission decisions. */
export const ADMISSIONS: readonly AdmissionKey[] = keysOf<AdmissionKey>()([
  'admitted',
  'rateLimited',
  'capacityRejected',
]);
/** Provider races. */
export const RACES: readonly RaceKey[] = keysOf<RaceKey>()(['deadline', 'aborted', 'lateSettled']);
/** Circuit-breaker states. */
export const CIRCUIT_STATES: readonly CircuitKey[] = keysOf<CircuitKey>()(['closed', 'halfOpen', 'open']);
/** Vector warm-up outcomes. */
export const WARMUPS: readonly WarmupKey[] = keysOf<WarmupKey>()(['warm', 'cold', 'failed']);
/** Store statement families. */
export const STATEMENTS: readonly StatementKey[] = keysOf<StatementKey>()([
  'read',
  'write',
  'fts',
  'vector',
  'like',
  'meta',
]);

/** Every enum list by the message-key prefix its labels use (`<prefix>.<key>`); the i18n test reads it. */
export const ENUM_LABEL_PREFIXES: Readonly<Record<string, readonly string[]>> = Object.freeze({
  purpose: PURPOSES,
  stage: STAGES,
  outcome: OUTCOMES,
  degradation: DEGRADATIONS,
  candidate: CANDIDATES,
  kind: KINDS,
  lifecycle: LIFECYCLES,
  embeddingState: EMBEDDING_STATES,
  extractionOutcome: EXTRACTION_OUTCOMES,
  decision: DECISIONS,
  transition: TRANSITIONS,
  phaseOutcome: PHASE_OUTCOMES,
  step: STEPS,
  provider: PROVIDERS,
  admission: ADMISSIONS,
  race: RACES,
  circuit: CIRCUIT_STATES,
  warmup: WARMUPS,
  statement: STATEMENTS,
});
