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
  processDiagnosticsSchema,
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
  ProcessDiagnostics,
  ProviderDiagnostics,
  QueryEmbeddingCircuitDiagnostics,
  RetrievalPurposeDiagnostics,
  StoreHealthDto,
  StoreIntegrityDto,
  StoreStatementDiagnostics,
  VectorStoreGauges,
} from './types.js';
