/**
 * `@engram/store`: the data model, the async store port and its SQLite adapter (better-sqlite3 + FTS5 +
 * sqlite-vec). Importing this module loads no native code; the driver is loaded when a store is opened.
 * The closed enums, the observer port and the shared input rules (agent id, tag, content hash) live in
 * `@engram/contracts`; the raw driver layer for benchmarks and fault-injection suites is `@engram/store/raw`.
 */

export type { ChunkSpan } from './chunking.js';
export { CHUNK_BUDGET, CHUNK_OVERLAP } from './chunking.js';
export type { EngramStoreErrorCode, EngramStoreErrorOptions } from './errors.js';
export { ENGRAM_STORE_ERROR_CODES, EngramStoreError, isEngramStoreError } from './errors.js';
export type {
  ConflictLink,
  ConflictResolution,
  ConflictState,
  DeleteAllResult,
  ForgetMode,
  ForgetOptions,
  ForgetResult,
  MemoryFactsSlice,
  MemoryHistory,
  MemoryHistoryAction,
  MemoryHistoryEntry,
} from './facts-types.js';
export type { EncryptionCipher, NativeCapability, NativeCapabilityReport, SqliteDriver } from './native.js';
export { checkNativeCapabilities } from './native.js';
export {
  ENGRAM_APPLICATION_ID,
  SCHEMA_VERSION,
  VEC0_CHUNK_BYTES,
  VEC0_DEFAULT_CHUNK_SIZE,
  vec0ChunkSize,
  vec0PartitionIndexSql,
  vectorChunkSize,
} from './schema.js';
export type {
  IntegrityResult,
  RepairEmbeddingIntegrityOptions,
  SqliteMemoryStoreConfig,
  SqliteMemoryStoreInfo,
  SqliteStoreEncryption,
  StoreAccess,
  VectorIndexOptions,
  VectorIndexProgress,
  VectorIndexSetting,
  VectorQuantization,
} from './sqlite-store.js';
export {
  createSqliteMemoryStore,
  DEFAULT_MMAP_SIZE,
  embeddingFingerprint,
  SqliteMemoryStore,
} from './sqlite-store.js';
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
  TermMode,
  TimeScope,
  VectorHit,
  VectorQuery,
  VectorWarmupOutcome,
} from './types.js';
export { DEFAULT_MAX_CONTENT_LENGTH, MAX_METADATA_CHARS } from './validate.js';
