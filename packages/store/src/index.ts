/**
 * `@engram/store`: the data model, the async store port and its SQLite adapter (better-sqlite3 + FTS5 +
 * sqlite-vec). Importing this module loads no native code; the driver is loaded when a store is opened.
 */

export type { ChunkSpan } from './chunking.js';
export { CHUNK_BUDGET, CHUNK_OVERLAP } from './chunking.js';
export type { EngramStoreErrorCode, EngramStoreErrorOptions } from './errors.js';
export {
  classifySqliteError,
  ENGRAM_STORE_ERROR_CODES,
  EngramStoreError,
  isEngramStoreError,
  storeErrorCode,
} from './errors.js';
export type { LexicalPlan } from './lexical-plan.js';
export {
  ENGLISH_STOP_WORDS,
  escapeLike,
  MAX_LEXICAL_TERMS,
  MAX_LIKE_TERMS,
  MAX_TERM_LENGTH,
  MAX_TRIGRAM_WINDOWS,
  planLexicalQuery,
  quoteFts,
} from './lexical-plan.js';
export type {
  DatabaseEncryption,
  EncryptionCipher,
  NativeCapability,
  NativeCapabilityReport,
  OpenDatabaseOptions,
  SqliteDatabase,
  SqliteDriver,
  SqliteDriverOptions,
  SqliteStatement,
} from './native.js';
export {
  CIPHER_DRIVER_PACKAGE,
  checkNativeCapabilities,
  ENCRYPTION_CIPHERS,
  loadCipherDriver,
  loadDefaultDriver,
  loadSqliteVec,
  NATIVE_CAPABILITIES,
  openDatabase,
  sqliteVecLoadablePath,
} from './native.js';
export { codePointLength, contentHash, hasCjk, isWellFormedText, normalizeContent } from './normalize.js';
export type { StatementKind, StoreObserver, VectorWarmupOutcome } from './observer.js';
export { noopStoreObserver, STATEMENT_KINDS, VECTOR_WARMUP_OUTCOMES } from './observer.js';
export { SCHEMA_VERSION, TOKENIZER_DESCRIPTION } from './schema.js';
export type {
  RepairEmbeddingIntegrityOptions,
  SqliteMemoryStoreConfig,
  SqliteMemoryStoreInfo,
  SqliteStoreEncryption,
} from './sqlite-store.js';
export {
  createSqliteMemoryStore,
  embeddingFingerprint,
  LIKE_MATCH_SCORE,
  SqliteMemoryStore,
} from './sqlite-store.js';
export type {
  AppendEventsResult,
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
  LexicalHit,
  LexicalPaths,
  LexicalQuery,
  LexicalResult,
  Lifecycle,
  ListMemoriesOptions,
  ListPendingOptions,
  MemoryEmbeddingSlice,
  MemoryHealthSlice,
  MemoryIntegritySlice,
  MemoryKind,
  MemoryLifecycleSlice,
  MemoryPatch,
  MemoryReadSlice,
  MemoryRecord,
  MemoryStore,
  MemoryWriteSlice,
  NewMemory,
  PendingEmbedding,
  RevalidationCandidate,
  SkillInput,
  SkillRecord,
  SkillSlice,
  StoreHealth,
  TermMode,
  VectorHit,
  VectorQuery,
} from './types.js';
export { EMBEDDING_STATES, EVENT_TYPES, LIFECYCLES, MEMORY_KINDS, RECALLABLE_KINDS } from './types.js';
export type { ValidationLimits } from './validate.js';
export {
  DEFAULT_MAX_CONTENT_LENGTH,
  DEFAULT_MAX_CONTENT_LENGTH as MAX_CONTENT_LENGTH,
  isValidTag,
  MAX_AGENT_ID_LENGTH,
  MAX_ID_LENGTH,
  MAX_TAG_VALUE_LENGTH,
  MAX_TAGS,
  SKILL_NAME_PATTERN,
  TAG_PREFIX_PATTERN,
  validateTag,
  validateTags,
  validateVector,
} from './validate.js';
