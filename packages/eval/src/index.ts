/**
 * `@engram/eval`: measure retrieval on your own data — the versioned fixture format and its validator, exact
 * IR metrics, the runner that drives the production store and retriever three ways (FTS-only, vector-only,
 * hybrid), its report, the gate, and the embedders and vector cache a run uses.
 *
 * The dataset adapters (LoCoMo, SciFact, CMRC and their zip / CSV readers), the BM25 reference and the
 * benchmark are the internals of the `eval:dataset` and `bench` commands, not part of this surface.
 */

export type {
  CreateEvalEmbedderOptions,
  EvalEmbedder,
  EvalEmbedderName,
  NamedEvalEmbedder,
} from './embedders.js';
export {
  createEvalEmbedder,
  ENGRAM_LOCAL_EMBEDDING_ENV_VARS,
  EVAL_EMBEDDER_NAMES,
  isEvalEmbedderName,
} from './embedders.js';
export type { EngramEvalErrorCode } from './errors.js';
export { ENGRAM_EVAL_ERROR_CODES, EngramEvalError, isEngramEvalError } from './errors.js';
export type {
  FixtureMemory,
  FixtureQuery,
  FixtureValidation,
  FixtureVectorProfile,
  RetrievalFixture,
  RetrievalSubset,
} from './fixture.js';
export {
  FIXTURE_KINDS,
  fixtureSubsets,
  parseFixture,
  RETRIEVAL_SUBSETS,
  validateFixture,
} from './fixture.js';
export type { GateFailure, GateResult } from './gate.js';
export { evaluateGate, GATE_THRESHOLDS } from './gate.js';
export type { QueryScores } from './metrics.js';
export { mrrAt, ndcgAt, recallAt, scoreRanking } from './metrics.js';
export type {
  MetricSummary,
  QueryReport,
  ReportEmbedder,
  ReportVectors,
  RetrievalReport,
  RetrieverVariantName,
  VariantName,
  VariantReport,
} from './report.js';
export { formatReportTable, REPORT_VERSION, RETRIEVER_VARIANTS, VARIANTS } from './report.js';
export type { EvalRerankerName, NamedEvalReranker } from './rerankers.js';
export {
  createEvalReranker,
  ENGRAM_RERANK_ENV_VARS,
  EVAL_RERANKER_NAMES,
  isEvalRerankerName,
} from './rerankers.js';
export type { RunFixtureConfig, RunProgress, RunRetrieverOptions } from './runner.js';
export { loadFixture, RANKING_DEPTH, runFixture } from './runner.js';
export type { VectorCache, VectorCacheProfile } from './vector-cache.js';
export { openVectorCache } from './vector-cache.js';
