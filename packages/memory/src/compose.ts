/**
 * `@engram/memory/compose`: the wired parts under the facade, for a CLI, a server or a framework adapter that
 * needs the store, the retriever, the tools or the collector themselves. Most users want `createMemory`.
 */

export type { DrainTotals, EmbedderOption, Engine, EngineConfig } from './engine.js';
export { openEngine } from './engine.js';
export type { EngineStore } from './open-store.js';
export { chooseEngineEmbedder } from './open-store.js';
export { englishQueries, gatedRetriever } from './query-side.js';
