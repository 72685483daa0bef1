export type { DiagnosticsCollector, DiagnosticsCollectorConfig } from './collector.js';
export { createDiagnosticsCollector, MemoryDiagnosticsCollector } from './collector.js';
export {
  createCompositeMaintenanceObserver,
  createCompositeProviderObserver,
  createCompositeRetrievalObserver,
  createCompositeStoreObserver,
} from './compose.js';
export {
  ADMISSION_DECISION_KEYS,
  CANDIDATE_KEYS,
  CIRCUIT_STATE_KEYS,
  DEGRADATION_CAUSE_KEYS,
  DRAIN_TRANSITION_KEYS,
  EMBEDDING_STATE_KEYS,
  EXTRACTION_DECISION_KEYS,
  EXTRACTION_OUTCOME_KEYS,
  LIFECYCLE_KEYS,
  MAINTENANCE_STEP_KEYS,
  MEMORY_KIND_KEYS,
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
export type { EngramDiagnosticsErrorCode } from './errors.js';
export {
  ENGRAM_DIAGNOSTICS_ERROR_CODES,
  EngramDiagnosticsError,
  isEngramDiagnosticsError,
} from './errors.js';
export type { HealthDto, StoreHealthDto } from './health.js';
export { createHealthDto, healthDtoSchema, storeHealthDtoSchema } from './health.js';
export type { DistributionSummary } from './ring.js';
export {
  BoundedNumberRing,
  DEFAULT_SAMPLE_CAPACITY,
  EMPTY_DISTRIBUTION,
  nearestRank,
  summarize,
} from './ring.js';
export type {
  AgentDiagnostics,
  CandidateArm,
  CollectorDiagnostics,
  DiagnosticsSnapshot,
  DiagnosticsSnapshotAll,
  DrainTransition,
  EmbeddingBacklogGauge,
  EmbeddingDrainDiagnostics,
  EmptyProcessSettings,
  EmptySnapshotOptions,
  ExtractionDiagnostics,
  ExtractionQueueGauge,
  MaintenanceDiagnostics,
  ProcessDiagnostics,
  ProviderDiagnostics,
  QueryEmbeddingCircuitDiagnostics,
  RetrievalPurposeDiagnostics,
  StoreStatementDiagnostics,
  VectorStoreGauges,
} from './schema.js';
export {
  agentDiagnosticsSchema,
  createEmptyAgentDiagnostics,
  createEmptyProcessDiagnostics,
  createEmptySnapshot,
  DEFAULT_AGENT_TTL_MS,
  DEFAULT_MAX_AGENTS,
  DIAGNOSTICS_SCHEMA_VERSION,
  diagnosticsSnapshotAllSchema,
  diagnosticsSnapshotSchema,
  distributionSchema,
  MAX_AGENT_ID_LENGTH,
  processDiagnosticsSchema,
} from './schema.js';
