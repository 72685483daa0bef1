export type {
  AdmissionDecision,
  CandidateArm,
  CircuitState,
  DegradationCause,
  DrainTransition,
  EmbeddingState,
  EventType,
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
  SchedulerTask,
  StatementKind,
  VectorWarmupOutcome,
} from './enums.js';
export {
  ADMISSION_DECISIONS,
  CANDIDATE_ARMS,
  CIRCUIT_STATES,
  DEGRADATION_CAUSES,
  DRAIN_TRANSITIONS,
  EMBEDDING_STATES,
  EVENT_TYPES,
  EXTRACTION_DECISIONS,
  EXTRACTION_OUTCOMES,
  INTEGRITY_STATES,
  LIFECYCLES,
  MAINTENANCE_STEPS,
  MEMORY_KINDS,
  MODEL_OUTPUT_SCHEMAS,
  PHASE_OUTCOMES,
  PROVIDER_KINDS,
  PROVIDER_RACES,
  RECALLABLE_KINDS,
  RETRIEVAL_ARMS,
  RETRIEVAL_OUTCOMES,
  RETRIEVAL_PURPOSES,
  RETRIEVAL_STAGES,
  SCHEDULER_TASKS,
  STATEMENT_KINDS,
  VECTOR_WARMUP_OUTCOMES,
} from './enums.js';
// The error hierarchy: every package's error class extends EngramError.
export type { EngramErrorOptions } from './errors.js';
export {
  ENGRAM_ERROR_CODE_PATTERN,
  EngramError,
  engramErrorCode,
  hasEngramErrorShape,
  isEngramError,
} from './errors.js';
export type { EmptyProcessSettings, EmptySnapshotOptions } from './health-dto/empty.js';
export {
  createEmptyAgentDiagnostics,
  createEmptyProcessDiagnostics,
  createEmptySnapshot,
  createHealthDto,
  DEFAULT_AGENT_TTL_MS,
  DEFAULT_MAX_AGENTS,
  DEFAULT_SAMPLE_CAPACITY,
  EMPTY_DISTRIBUTION,
  fillRecord,
} from './health-dto/empty.js';
export {
  agentDiagnosticsSchema,
  DIAGNOSTICS_SCHEMA_VERSION,
  diagnosticsSnapshotAllSchema,
  diagnosticsSnapshotSchema,
  distributionSchema,
  healthDtoSchema,
  MAX_PROCESSES_LISTED,
  PROCESS_ID_REGEX,
  processDiagnosticsSchema,
  processesDtoSchema,
  processSnapshotSchema,
  storeHealthDtoSchema,
} from './health-dto/schema.js';
export type {
  AgentDiagnostics,
  CollectorDiagnostics,
  DiagnosticsSnapshot,
  DiagnosticsSnapshotAll,
  DistributionSummary,
  EmbeddingBacklogGauge,
  EmbeddingDrainDiagnostics,
  ExtractionDiagnostics,
  ExtractionQueueGauge,
  HealthDto,
  MaintenanceDiagnostics,
  ProcessBeatDto,
  ProcessDiagnostics,
  ProcessesDto,
  ProviderDiagnostics,
  QueryEmbeddingCircuitDiagnostics,
  RetrievalPurposeDiagnostics,
  StoreHealthDto,
  StoreIntegrityDto,
  StoreStatementDiagnostics,
  VectorStoreGauges,
} from './health-dto/types.js';
export type {
  CircuitSnapshot,
  DrainBatchReport,
  EmbeddingBacklogReport,
  ExtractionQueueReport,
  ExtractionReport,
  MaintenanceObserver,
  MaintenancePassReport,
  ProviderObserver,
  ProviderQueueReport,
  RetrievalCandidateCounts,
  RetrievalExecution,
  RetrievalObserver,
  StoreObserver,
  VectorStoreGauge,
} from './observers.js';
export {
  noopMaintenanceObserver,
  noopProviderObserver,
  noopRetrievalObserver,
  noopStoreObserver,
} from './observers.js';
export type { AgentIdFormProblem, IdentifierProblem } from './rules/agent-id.js';
export {
  AGENT_ID_FORM_PROBLEMS,
  checkAgentId,
  checkAgentIdForm,
  checkMemoryId,
  IDENTIFIER_PROBLEMS,
  isValidAgentId,
  MAX_AGENT_ID_LENGTH,
  MAX_MEMORY_ID_LENGTH,
} from './rules/agent-id.js';
export { CJK_CHARACTER, CJK_CLASS_SOURCE, hasCjk } from './rules/cjk.js';
export { REDACTED, redactConnectionUrl, redactConnectionUrls } from './rules/connection-url.js';
export type {
  Deadline,
  DeadlineExpiry,
  DeadlineOptions,
  DeadlineOutcome,
  Timers,
  WithDeadlineOptions,
} from './rules/deadline.js';
export { backgroundTimers, createDeadline, systemTimers, withDeadline } from './rules/deadline.js';
export type {
  MemoryFilter,
  MemoryFilterProblem,
  MetadataCondition,
  MetadataScalar,
  NormalisedCondition,
  NormalisedFilter,
} from './rules/memory-filter.js';
export {
  checkMemoryFilter,
  MAX_FILTER_STRING_LENGTH,
  MAX_IN_VALUES,
  MAX_METADATA_CONDITIONS,
  MAX_METADATA_PATH_DEPTH,
  MEMORY_FILTER_PROBLEMS,
  METADATA_KEY_PATTERN,
  matchesMemoryFilter,
  metadataPath,
} from './rules/memory-filter.js';
export type { ArchivePointer } from './rules/pointer.js';
export {
  ARCHIVE_POINTER_PATTERN,
  formatArchivePointer,
  MAX_POINTER_SESSION_ID_LENGTH,
  parseArchivePointer,
} from './rules/pointer.js';
export type { TagProblem } from './rules/tag.js';
export {
  checkTag,
  isValidTag,
  MAX_TAG_VALUE_LENGTH,
  MAX_TAGS,
  TAG_PREFIX_PATTERN,
  TAG_PROBLEMS,
} from './rules/tag.js';
export {
  contentHash,
  contentHashOfNfkc,
  hasControlCharacter,
  isWellFormedText,
  normalizeContent,
  toWellFormedText,
} from './rules/text.js';
export type { TimestampProblem } from './rules/timestamp.js';
export {
  checkTimestamp,
  isValidTimestamp,
  MAX_TIMESTAMP_MS,
  TIMESTAMP_PROBLEMS,
} from './rules/timestamp.js';
export { estimateTokens, tokenUnits } from './rules/tokens.js';
