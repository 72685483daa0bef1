/**
 * `@engram/retrieval`: hybrid lexical + vector retrieval over the Engram store — fused, explained, observable —
 * plus context injection and tool-result deduplication. The agent-facing memory tools and corrections (the
 * write path) live in `@engram/tools`; the closed enums, the observer port and the shared input rules in
 * `@engram/contracts`.
 */

// The retriever.
export type { CircuitSnapshot, RetrievalExecution, RetrievalObserver } from '@engram/contracts/observers';
export type { DedupeOutcome, ToolResultDeduper, ToolResultDeduperConfig } from './dedupe.js';
export { createToolResultDeduper } from './dedupe.js';
// Errors.
export type { EngramRetrievalErrorCode } from './errors.js';
export { ENGRAM_RETRIEVAL_ERROR_CODES, EngramRetrievalError, isEngramRetrievalError } from './errors.js';
export type {
  RerankEvidence,
  RetrievalConflict,
  RetrievalExplanation,
  RetrievalResult,
} from './explanation.js';
export type { FusionCalibration, FusionMethod, FusionWeights, VectorEvidence } from './fusion.js';
// Context injection and tool-result deduplication.
export type { Injection, InjectionInput } from './injection.js';
export {
  buildInjection,
  CONFLICT_MARK,
  CORE_BLOCK_HEADER,
  isoDay,
  isoInstant,
  memoryPointer,
  memoryProvenance,
  RECALL_BLOCK_HEADER,
} from './injection.js';
// The query terms the lexical arm searches (benchmarks and explanations).
export type { KeywordExtraction, KeywordKind } from './keywords.js';
export { extractKeywords } from './keywords.js';
// Ports the caller provides.
export type { InjectionStore, QueryEmbedder, Reranker, RetrievalStore } from './ports.js';
export type {
  RerankConfig,
  RetrievalArms,
  RetrievalResponse,
  RetrieveFunction,
  RetrieveOptions,
  Retriever,
  RetrieverConfig,
  RetrieverSettings,
} from './retriever.js';
export { createRetriever } from './retriever.js';
// Windows of chunked memories: the pointer `memory/<id>#<start>-<end>` results and injection print.
export type { MemoryWindow } from './window.js';
export { formatMemoryWindow, MEMORY_WINDOW_PATTERN, parseMemoryWindow, resultText } from './window.js';
