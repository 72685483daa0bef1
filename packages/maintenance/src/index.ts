/**
 * `@engram/maintenance`: background memory work off the hot path — the embedding drain, event ingestion,
 * extraction, budgeted maintenance passes, a scheduler and a provider gateway. Imports types from
 * `@engram/store` and the fact-merge guard from `@engram/retrieval`; nothing here loads native code.
 */

export type { BudgetRequest, PassBudget, PassBudgetLimits, PassBudgetSnapshot } from './budget.js';
export { createPassBudget, DEFAULT_PASS_BUDGET, resolvePassBudgetLimits } from './budget.js';
export type { Clock, Timers } from './clock.js';
export { systemClock, systemTimers } from './clock.js';
export type { DecayConfig } from './decay.js';
export {
  DECAY_BASE_HALF_LIFE_MS,
  DEFAULT_DECAY,
  decayAgeMs,
  decayScore,
  shouldArchiveByDecay,
} from './decay.js';
export type {
  DrainRunOptions,
  DrainRunOutcome,
  DrainRunResult,
  EmbeddingDrain,
  EmbeddingDrainConfig,
} from './drain.js';
export { classifyVector, createEmbeddingDrain } from './drain.js';
export type { EngramMaintenanceErrorCode } from './errors.js';
export {
  ENGRAM_MAINTENANCE_ERROR_CODES,
  EngramMaintenanceError,
  isEngramMaintenanceError,
  isLocalRejection,
  LOCAL_REJECTION_CODES,
} from './errors.js';
export type { ExtractionQueue, ExtractionQueueConfig, ExtractionQueueKey } from './extraction-queue.js';
export { createExtractionQueue } from './extraction-queue.js';
export type {
  AppliedDecision,
  ExtractionChunk,
  ExtractionResult,
  ExtractionTurn,
  Extractor,
  ExtractorConfig,
} from './extractor.js';
export { createExtractor } from './extractor.js';
export type { ProviderGateway, ProviderGatewayConfig, ProviderGatewayStats } from './gateway.js';
export { createProviderGateway } from './gateway.js';
export type {
  EventIngestor,
  EventIngestorConfig,
  IngestOptions,
  IngestPendingResult,
  IngestResult,
} from './ingest.js';
export { createEventIngestor, eventToMemory } from './ingest.js';
export type {
  MaintenancePassOptions,
  MaintenancePassResult,
  MaintenanceRunner,
  MaintenanceRunnerConfig,
} from './maintenance.js';
export { createMaintenanceRunner, REVIEW_NEEDED_TAG } from './maintenance.js';
export type {
  CandidatesOutput,
  ChallengeOutput,
  CheckedDecision,
  DecisionOutput,
  MergeOutput,
  ModelOutputResult,
  PersonaOutput,
  ReflectionOutput,
} from './model-output.js';
export {
  candidatesOutputSchema,
  challengeOutputSchema,
  checkDecision,
  decisionOutputSchema,
  jsonSchemaOf,
  MAX_MODEL_CONTENT_CHARS,
  mergeOutputSchema,
  parseModelOutput,
  personaOutputSchema,
  reflectionOutputSchema,
} from './model-output.js';
export type {
  AdmissionDecision,
  DrainBatchReport,
  ExtractionDecision,
  ExtractionOutcome,
  ExtractionReport,
  MaintenanceObserver,
  MaintenancePassReport,
  MaintenanceStep,
  PhaseOutcome,
  ProviderKind,
  ProviderObserver,
  ProviderRace,
} from './observer.js';
export {
  ADMISSION_DECISIONS,
  EXTRACTION_DECISIONS,
  EXTRACTION_OUTCOMES,
  MAINTENANCE_STEPS,
  noopMaintenanceObserver,
  noopProviderObserver,
  PHASE_OUTCOMES,
  PROVIDER_KINDS,
  PROVIDER_RACES,
} from './observer.js';
export type { EmbedderPort, ModelMessage, ModelPort } from './ports.js';
export type { MaintenanceScheduler, MaintenanceSchedulerConfig, SchedulerTask } from './scheduler.js';
export { createMaintenanceScheduler, SCHEDULER_TASKS } from './scheduler.js';
export { mayMerge, textSimilarity, tokenSet } from './similarity.js';
export type {
  DecisionNeighbour,
  DecisionRetriever,
  DrainStore,
  ExtractionStore,
  IngestStore,
  IntegrityRepairSlice,
  MaintenanceStore,
} from './store-ports.js';
export {
  deriveEventTags,
  eventMemoryContent,
  filePathsOf,
  hashContent,
  isStoreSafeTag,
  MAX_DERIVED_TAG_VALUE_LENGTH,
  MAX_DERIVED_TAGS,
  normalizeForHash,
  renderToolCall,
  toolArguments,
} from './tags.js';
export { estimateMessagesTokens, estimateTokens } from './tokens.js';
