/**
 * `@engram/store`: the store port. The data model, the async `MemoryStore` interface and its slices, the
 * typed store errors and their codes, and the export format: pure TypeScript, no native dependency. The
 * adapters implement it: `@engram/store-sqlite` (one SQLite file) and `@engram/store-postgres`. The pure rules
 * an adapter reuses (validation, chunking, tokens, BM25 planning) are `@engram/store/port-kit`.
 */

// The port's backlog reads (`listFailedEmbeddings`, `listSessionSummaries`) type themselves; their helpers are in
// `@engram/store/port-kit`. The drain's own code for an unusable vector:
export type { ChunkSpan } from './chunking.js';
export { CHUNK_BUDGET, CHUNK_OVERLAP } from './chunking.js';
export type { EngramStoreErrorCode, EngramStoreErrorOptions } from './errors.js';
export { ENGRAM_STORE_ERROR_CODES, EngramStoreError, isEngramStoreError } from './errors.js';
export type {
  ConflictLink,
  ConflictResolution,
  ConflictState,
  DeleteAllOptions,
  DeleteAllResult,
  ForgetMode,
  ForgetOptions,
  ForgetResult,
  MemoryFactsSlice,
  MemoryHistory,
  MemoryHistoryAction,
  MemoryHistoryEntry,
} from './facts-types.js';
export type { ProcessBeatSlice } from './process-beats.js';
export type { UserScope } from './scope.js';
export type { SessionReadSlice, SessionWindow } from './session-read.js';
export { MAX_SESSION_ROWS, MAX_SESSION_WINDOWS } from './session-read.js';
export type {
  IntegrityResult,
  RepairEmbeddingIntegrityOptions,
  StoreAccess,
  VectorIndexOptions,
  VectorIndexProgress,
  VectorIndexSetting,
  VectorQuantization,
} from './store-options.js';
export { embeddingFingerprint } from './store-options.js';
export type {
  ExportCounts,
  ExportHeader,
  ExportOptions,
  ExportRecord,
  ExportRow,
  ImportOptions,
  ImportSummary,
} from './transfer.js';
export { EXPORT_FORMAT, EXPORT_FORMAT_VERSION, formatExportLine, parseExportLine } from './transfer.js';
export type {
  AppendEventsResult,
  ClaimMaintenanceOptions,
  EmbeddingBacklog,
  EmbeddingCommitResult,
  EmbeddingOutcome,
  EmbeddingProfile,
  EmbeddingState,
  EventInput,
  EventLogSlice,
  EventRecord,
  EventType,
  IngestBatch,
  InsertedMemory,
  LexicalHit,
  LexicalPaths,
  LexicalQuery,
  LexicalResult,
  Lifecycle,
  ListMemoriesOptions,
  ListPendingOptions,
  MaintenanceClaim,
  MaintenanceLeaseSlice,
  MemoryBrief,
  MemoryEmbeddingSlice,
  MemoryFilter,
  MemoryHealthSlice,
  MemoryIntegritySlice,
  MemoryKind,
  MemoryLifecycleSlice,
  MemoryPatch,
  MemoryReadSlice,
  MemoryRecord,
  MemoryStore,
  MemoryWriteSlice,
  MergeSource,
  MetadataCondition,
  MetadataScalar,
  NewMemory,
  PendingEmbedding,
  RevalidateOptions,
  RevalidationCandidate,
  SkillInput,
  SkillRecord,
  SkillSlice,
  StatementKind,
  StoreHealth,
  StoreObserver,
  SupersedeOptions,
  TermMode,
  TimeScope,
  VectorHit,
  VectorQuery,
  VectorWarmupOutcome,
} from './types.js';
export { DEFAULT_MAX_CONTENT_LENGTH, MAX_METADATA_CHARS } from './validate.js';
