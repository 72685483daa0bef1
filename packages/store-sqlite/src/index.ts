/**
 * `@engram/store-sqlite`: the store port (`@engram/store`) on one SQLite file: better-sqlite3, FTS5 and
 * sqlite-vec. Importing this module loads no native code; the driver is loaded when a store is opened. The
 * raw driver layer for benchmarks and fault-injection suites is `@engram/store-sqlite/raw`.
 */

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
export { createSqliteMemoryStore, DEFAULT_MMAP_SIZE, SqliteMemoryStore } from './sqlite-store.js';
