/**
 * `@engram/maintenance`: background memory work off the hot path — the embedding drain, event ingestion,
 * extraction, budgeted maintenance passes, a scheduler and a provider gateway. Nothing here loads native code.
 * The enums, observer ports and shared rules it reports and checks with come from `@engram/contracts`.
 */

export type { Clock } from './clock.js';
export type { DecayAgeFrom, DecayConfig } from './decay.js';
export type {
  DrainRunOptions,
  DrainRunOutcome,
  DrainRunResult,
  EmbeddingDrain,
  EmbeddingDrainConfig,
} from './drain.js';
export { createEmbeddingDrain } from './drain.js';
export type { EngramMaintenanceErrorCode } from './errors.js';
export {
  ENGRAM_MAINTENANCE_ERROR_CODES,
  EngramMaintenanceError,
  isEngramMaintenanceError,
  isLocalRejection,
} from './errors.js';
export type { ExtractionQueue, ExtractionQueueConfig } from './extraction-queue.js';
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
export { REVIEW_NEEDED_TAG } from './heavy-steps.js';
export type {
  EventIngestor,
  EventIngestorConfig,
  IngestOptions,
  IngestPendingResult,
  IngestResult,
} from './ingest.js';
export { createEventIngestor } from './ingest.js';
export { LEASE_RENEWAL_MS } from './lease-keeper.js';
export type { MaintenanceRunner, MaintenanceRunnerConfig } from './maintenance.js';
export { createMaintenanceRunner, DEFAULT_MAINTENANCE_LEASE_MS } from './maintenance.js';
export type { InvalidModelOutput, ModelOutputFailure, ModelOutputSchemaName } from './model-output.js';
export { MODEL_OUTPUT_SCHEMA_NAMES } from './model-output.js';
export type {
  MaintenancePassDetails,
  MaintenancePassOptions,
  MaintenancePassResult,
  PlannedArchive,
} from './pass-types.js';
export type { EmbedderPort, ModelMessage, ModelPort } from './ports.js';
export type { MaintenanceScheduler, MaintenanceSchedulerConfig } from './scheduler.js';
export { createMaintenanceScheduler } from './scheduler.js';
export type {
  DecisionRetriever,
  DrainStore,
  ExtractionStore,
  IngestStore,
  MaintenanceStore,
} from './store-ports.js';
export { MAX_CHUNK_TAGS } from './user-scope.js';
