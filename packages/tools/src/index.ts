/**
 * `@engram/tools`: the agent-facing write path of Engram — the memory tools a model calls (`memory_search`,
 * `memory_remember`, `memory_get`, `memory_update`, `memory_forget` and the skill tools), their schemas,
 * corrections, and the fact-merge guard that decides when two facts are one. Searching is
 * `@engram/retrieval`'s: the tools are given a retriever.
 */

// Corrections (the same function as `memory_update`).
export type { Correction, CorrectionOptions } from './corrections.js';
export { checkStoredRevision, correctMemory } from './corrections.js';
// The fact-merge guard (maintenance merges facts by the same rule as `memory_remember`).
export type { FactMergeBlock, FactMergeVerdict } from './fact-merge.js';
export { canMergeFacts, contradiction } from './fact-merge.js';
// Ports the caller provides.
export type { CorrectionStore, ToolStore } from './ports.js';
// The agent-facing tools.
export type {
  MemoryToolName,
  ToolCallContext,
  ToolCallResult,
  ToolDefinition,
  ToolHandler,
  ToolHandlerConfig,
  ToolResultData,
  ToolSearchHit,
} from './tools.js';
export { createToolHandler, MEMORY_TOOL_DEFINITIONS, MEMORY_TOOL_NAMES } from './tools.js';
