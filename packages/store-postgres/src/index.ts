/**
 * `@engram/store-postgres`: the `MemoryStore` port of `@engram/store` on PostgreSQL (≥ 15) with pgvector
 * (≥ 0.8 for iterative index scans), through a `pg` pool. The same records, errors (`EngramStoreError` and its
 * codes) and observer as the SQLite store; many processes and machines may share one database.
 */

export type { PostgresMemoryStoreConfig } from './config.js';
export { classifyPgError } from './errors.js';
export { MIGRATION_LOCK_KEY, PG_SCHEMA_VERSION } from './schema.js';
export type { PostgresMemoryStoreInfo } from './store.js';
export {
  createPostgresMemoryStore,
  isPostgresUrl,
  PostgresMemoryStore,
  readPostgresBinding,
} from './store.js';
