/**
 * `@engram/retrieval`: hybrid lexical + vector retrieval over the Engram store — fused, explained, observable —
 * plus the agent-facing memory tools, context injection and tool-result deduplication.
 */

export type { CircuitBreaker, CircuitBreakerConfig, CircuitPermit } from './circuit.js';
export { createCircuitBreaker, DEFAULT_COOLDOWN_MS, DEFAULT_FAILURE_THRESHOLD } from './circuit.js';
export { contentHash, normalizeContent } from './content-hash.js';
export type { DedupeOutcome, ToolResultDeduper, ToolResultDeduperConfig } from './dedupe.js';
export { createToolResultDeduper } from './dedupe.js';
export type { EngramRetrievalErrorCode } from './errors.js';
export { ENGRAM_RETRIEVAL_ERROR_CODES, EngramRetrievalError, isEngramRetrievalError } from './errors.js';
export type {
  CircuitSnapshot,
  CircuitState,
  DegradationCause,
  RetrievalArm,
  RetrievalCandidateCounts,
  RetrievalExecution,
  RetrievalObserver,
  RetrievalOutcome,
  RetrievalPurpose,
  RetrievalStage,
} from './execution.js';
export {
  CIRCUIT_STATES,
  DEGRADATION_CAUSES,
  noopRetrievalObserver,
  RETRIEVAL_ARMS,
  RETRIEVAL_OUTCOMES,
  RETRIEVAL_PURPOSES,
  RETRIEVAL_STAGES,
} from './execution.js';
export type { RetrievalExplanation, RetrievalResult } from './explanation.js';
export type { FactMergeBlock, FactMergeVerdict } from './fact-merge.js';
export { canMergeFacts, cosineSimilarity, similarityTokens, tokenJaccard } from './fact-merge.js';
export type { FusionCandidate, FusionWeights, VectorEvidence } from './fusion.js';
export {
  compareResults,
  DEFAULT_FUSION_WEIGHTS,
  DEFAULT_VECTOR_EVIDENCE,
  fuseCandidates,
  recencyFactor,
  vectorConfidence,
} from './fusion.js';
export type { CoreBlockOptions, Injection, InjectionInput } from './injection.js';
export {
  buildInjection,
  CORE_BLOCK_HEADER,
  MAX_CORE_FACTS,
  MAX_FACT_LINE_CHARS,
  MAX_RECALL_LINE_CHARS,
  memoryPointer,
  RECALL_BLOCK_HEADER,
  renderCoreBlock,
} from './injection.js';
export type { ExtractKeywordsOptions, KeywordExtraction, KeywordKind } from './keywords.js';
export { DEFAULT_MAX_TERMS, extractKeywords, KEYWORD_KINDS, MAX_QUERY_SCAN_CHARS } from './keywords.js';
export type { InjectionStore, QueryEmbedder, RetrievalStore, RetrievalTimers, ToolStore } from './ports.js';
export type {
  RetrievalArms,
  RetrievalResponse,
  RetrieveFunction,
  RetrieveOptions,
  Retriever,
  RetrieverConfig,
  RetrieverSettings,
} from './retriever.js';
export {
  createRetriever,
  DEFAULT_LIMIT,
  DEFAULT_RECALL_KINDS,
  MAX_LIMIT,
  MAX_TAG_FILTERS,
} from './retriever.js';
export type { StoreFailureCause } from './store-errors.js';
export { classifyStoreError } from './store-errors.js';
export { estimateTokens, tokenUnits } from './tokens.js';
export type {
  MemoryToolName,
  ParsedToolCall,
  ToolCallContext,
  ToolCallResult,
  ToolDefinition,
  ToolHandler,
  ToolHandlerConfig,
} from './tools.js';
export {
  createToolHandler,
  MAX_ARGUMENT_CHARS,
  MAX_POINTER_EVENTS,
  MEMORY_TOOL_DEFINITIONS,
  MEMORY_TOOL_NAMES,
  parseToolArguments,
  SEARCH_MAX_CHARS,
  TOPIC_TAG_PREFIX,
} from './tools.js';
