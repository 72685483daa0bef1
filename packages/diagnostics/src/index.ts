// The health DTO a collector's snapshot feeds, re-exported from `@engram/contracts` for convenience.
export type {
  AgentDiagnostics,
  DiagnosticsSnapshot,
  DiagnosticsSnapshotAll,
  DistributionSummary,
  HealthDto,
  ProcessDiagnostics,
  StoreHealthDto,
} from '@engram/contracts';
export {
  createEmptySnapshot,
  createHealthDto,
  diagnosticsSnapshotAllSchema,
  diagnosticsSnapshotSchema,
  healthDtoSchema,
} from '@engram/contracts';
export type { DiagnosticsCollector, DiagnosticsCollectorConfig } from './collector.js';
export { createDiagnosticsCollector } from './collector.js';
export {
  createCompositeMaintenanceObserver,
  createCompositeProviderObserver,
  createCompositeRetrievalObserver,
  createCompositeStoreObserver,
} from './compose.js';
export type { EngramDiagnosticsErrorCode } from './errors.js';
export {
  ENGRAM_DIAGNOSTICS_ERROR_CODES,
  EngramDiagnosticsError,
  isEngramDiagnosticsError,
} from './errors.js';
