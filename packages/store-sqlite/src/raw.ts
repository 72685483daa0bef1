/**
 * `@engram/store/raw`: the layer under the store, for tools that open a store file directly (benchmarks that
 * time raw statements, fault-injection and crash suites, forensic tests). Not needed to use the store, and
 * not covered by the store port's compatibility promise: the schema and the query plan change with it.
 */

export type { LexicalPlan } from '@engram/store/port-kit';
export { planLexicalQuery, quoteFts } from '@engram/store/port-kit';
export type {
  DatabaseEncryption,
  OpenDatabaseOptions,
  SqliteDatabase,
  SqliteDriver,
  SqliteDriverOptions,
  SqliteStatement,
} from './native.js';
export {
  CIPHER_DRIVER_PACKAGE,
  loadCipherDriver,
  loadDefaultDriver,
  openDatabase,
  sqliteVecLoadablePath,
} from './native.js';
export type { VectorWorkerProbe } from './sqlite/vector-dispatch.js';
export { vectorWorkerProbe } from './sqlite-store.js';
