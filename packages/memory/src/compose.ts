/**
 * `@engram/memory/compose`: the composition root under the facade, for a CLI, a server or a framework adapter
 * that needs the store, the retriever, the tools or the collector themselves — `openEngine` wires them all, from
 * options or from the environment (`env`: `ENGRAM_EMBEDDER` and an OpenAI-compatible provider). Most users want
 * `createMemory`. The types and helpers such a caller prints or parses with are re-exported here, so it needs
 * no package underneath.
 */

export type { HealthDto } from '@engram/diagnostics';
export type { EmbedderPort, MaintenancePassResult, ModelPort } from '@engram/maintenance';
export type {
  RetrievalExecution,
  RetrievalExplanation,
  RetrievalResult,
  Retriever,
} from '@engram/retrieval';
export { buildInjection } from '@engram/retrieval';
export type {
  EventInput,
  EventRecord,
  ExportRecord,
  ImportSummary,
  MemoryRecord,
  VectorIndexProgress,
} from '@engram/store';
export { formatExportLine, parseExportLine } from '@engram/store';
export type { ToolHandler } from '@engram/tools';
export { correctMemory, MEMORY_TOOL_DEFINITIONS, MEMORY_TOOL_NAMES } from '@engram/tools';
export { embedNow } from './background.js';
export type { EmbedderChoice, EmbedderProfile } from './embedder-choice.js';
export {
  BUILT_IN_PROFILES,
  EMBEDDER_CHOICES,
  EMBEDDER_ENV_VAR,
  embedderChoiceFromEnv,
  profileLabel,
} from './embedder-choice.js';
export type {
  DrainOptions,
  DrainProgress,
  DrainSummary,
  DrainTotals,
  EmbedderOption,
  Engine,
  EngineConfig,
} from './engine.js';
export { openEngine } from './engine.js';
export type { EngineStore } from './open-store.js';
export { chooseEngineEmbedder, probeStore } from './open-store.js';
export { displayPath } from './postgres-module.js';
export { englishQueries, gatedRetriever } from './query-side.js';
export { exportForUser } from './scope.js';
