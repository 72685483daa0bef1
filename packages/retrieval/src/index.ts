/**
 * `@engram/retrieval`: hybrid lexical + vector retrieval over the Engram store — fused, explained, observable —
 * plus the agent-facing memory tools, context injection and tool-result deduplication. The closed enums, the
 * observer port and the shared input rules live in `@engram/contracts`.
 */

// The retriever.
export type { CircuitSnapshot, RetrievalExecution, RetrievalObserver } from '@engram/contracts/observers';
// Corrections (the same function as `memory_update`).
export type { Correction, CorrectionOptions } from './corrections.js';
export { correctMemory } from './corrections.js';
export type { DedupeOutcome, ToolResultDeduper, ToolResultDeduperConfig } from './dedupe.js';
export { createToolResultDeduper } from './dedupe.js';
// Errors.
export type { EngramRetrievalErrorCode } from './errors.js';
export { ENGRAM_RETRIEVAL_ERROR_CODES, EngramRetrievalError, isEngramRetrievalError } from './errors.js';
export type { RetrievalConflict, RetrievalExplanation, RetrievalResult } from './explanation.js';
// The fact-merge guard (maintenance merges facts by the same rule as `memory_remember`).
export type { FactMergeBlock, FactMergeVerdict } from './fact-merge.js';
export { canMergeFacts, contradiction } from './fact-merge.js';
export type { FusionCalibration, FusionMethod, FusionWeights, VectorEvidence } from './fusion.js';
// Context injection and tool-result deduplication.
export type { Injection, InjectionInput } from './injection.js';
export { buildInjection } from './injection.js';
// The query terms the lexical arm searches (benchmarks and explanations).
export type { KeywordExtraction, KeywordKind } from './keywords.js';
export { extractKeywords } from './keywords.js';
// Ports the caller provides.
export type {
  CorrectionStore,
  InjectionStore,
  QueryEmbedder,
  RetrievalStore,
  ToolStore,
} from './ports.js';
export type {
  RetrievalArms,
  RetrievalResponse,
  RetrieveFunction,
  RetrieveOptions,
  Retriever,
  RetrieverConfig,
  RetrieverSettings,
} from './retriever.js';
export { createRetriever } from './retriever.js';
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
