/**
 * `@engram/memory`: Engram in one object. `createMemory({ path })` opens a memory file and returns a
 * {@link Memory} with `add`, `search`, `get`, `update`, `delete`, `deleteAll`, `history`, `list`, `ingest`,
 * `maintain`, `health`, `flush` and `close`; embedding is done for the caller. The packages underneath
 * (`@engram/store`, `@engram/retrieval`, `@engram/maintenance`, `@engram/diagnostics`) stay usable one by one;
 * `@engram/memory/compose` gives the wired parts to a CLI or a server.
 */

export type { HealthDto } from '@engram/diagnostics';
export type { EmbedderPort, MaintenancePassResult, ModelMessage, ModelPort } from '@engram/maintenance';
// The typed errors of the packages underneath, which a call may pass through with their own codes.
export { EngramMaintenanceError, isEngramMaintenanceError } from '@engram/maintenance';
export type { RerankConfig, Reranker, RetrievalExplanation } from '@engram/retrieval';
export { EngramRetrievalError, isEngramRetrievalError } from '@engram/retrieval';
export type {
  Lifecycle,
  MemoryFilter,
  MemoryKind,
  MetadataCondition,
  VectorIndexProgress,
} from '@engram/store';
export { EngramStoreError, isEngramStoreError } from '@engram/store';
export type {
  ConflictsOptions,
  EmbeddingFailure,
  EmbeddingFailuresOptions,
  MemoryConflict,
  SessionInfo,
  SessionsOptions,
} from './backlog.js';
export type { EmbedderOption } from './engine.js';
export type { EngramMemoryErrorCode } from './errors.js';
export {
  ENGRAM_MEMORY_ERROR_CODES,
  EngramMemoryError,
  engramErrorCode,
  isEngramMemoryError,
} from './errors.js';
export { createMemory } from './memory.js';
export type {
  ExportCounts,
  ExportHeader,
  ExportRecord,
  ExportRow,
  ImportChoices,
  ImportSummary,
} from './transfer.js';
export {
  checkImportChoices,
  formatExportLine,
  importClock,
  parseExportLine,
  prepareImport,
} from './transfer.js';
export type {
  AddOptions,
  AddResult,
  CallToolOptions,
  ChatEntryType,
  ChatMessage,
  ClearMessagesOptions,
  ContextOptions,
  ExportOptions,
  ForgetOptions,
  ForgottenMemory,
  ImportOptions,
  IngestOptions,
  IngestSummary,
  ListOptions,
  LoggedMessage,
  Memory,
  MemoryChange,
  MemoryConfig,
  MemoryContext,
  MemoryItem,
  MemoryVersion,
  MessagesOptions,
  Scope,
  SearchHit,
  SearchOptions,
  StoredVersion,
  ToolResult,
  ToolSpec,
  UpdateOptions,
  VersionChange,
} from './types.js';
