/**
 * `@engram/contracts/health`: the health DTO — its types, the strict zod schemas and the empty snapshot
 * factory. The only entry that loads zod.
 */
export type { EmptyProcessSettings, EmptySnapshotOptions } from './empty.js';
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
} from './empty.js';
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
} from './schema.js';
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
} from './types.js';
