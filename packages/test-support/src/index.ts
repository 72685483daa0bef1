/**
 * `@engram/test-support` (private): helpers that several packages' tests need, kept in one place so that no
 * test copies another's harness. Nothing here is shipped.
 */

export type { ChromiumLaunchOptions } from './chromium.js';
export { CHROMIUM_PATH, chromiumLaunchOptions } from './chromium.js';
export type { ConformanceOpenOptions } from './conformance-port.js';
export { CONFORMANCE_PROFILE } from './conformance-port.js';
export type { BadInputCase } from './conformance-records.js';
export { BAD_INPUT_CASES, BAD_INPUT_SEED } from './conformance-records.js';
export type { BadVectorQuery } from './conformance-vector-input.js';
export { BAD_VECTOR_QUERIES } from './conformance-vector-input.js';
export type { BatchEmbedder, PendingEmbeddingStore, PendingItem } from './embed-pending.js';
export { embedAllPending } from './embed-pending.js';
export type { FreshMemoryFields } from './memory-record.js';
export { FRESH_MEMORY_FIELDS } from './memory-record.js';
export type { TestPostgres } from './pg-server.js';
export { resetTestPostgres, startTestPostgres } from './pg-server.js';
export { pgStoreOpener } from './pg-stores.js';
export {
  EXAMPLE_ENDPOINT,
  readmeSnippet,
  runExampleOnEndpoint,
  runReadmeSnippet,
  runRepositoryExample,
} from './run-example.js';
export type { ChildRun, RunNodeOptions } from './run-node.js';
export { runNode } from './run-node.js';
export type { ConformanceHarness } from './store-conformance.js';
export { describeStoreConformance } from './store-conformance.js';
export type { RawConnection } from './vector-index-build.js';
export { interruptVectorIndexBuild } from './vector-index-build.js';
export type { WireServer } from './wire-server.js';
export { serveWire } from './wire-server.js';
