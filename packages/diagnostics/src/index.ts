// The types of what a collector produces (the rest of the DTO's types are in `@engram/contracts`).
export type { DiagnosticsSnapshot, HealthDto, ProcessBeatDto, ProcessesDto } from '@engram/contracts/health';
export {
  createEmptySnapshot,
  createHealthDto,
  diagnosticsSnapshotAllSchema,
  diagnosticsSnapshotSchema,
  healthDtoSchema,
  processSnapshotSchema,
} from '@engram/contracts/health';
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
export { mergeSnapshots } from './merge.js';
