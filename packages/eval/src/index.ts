/**
 * `@engram/eval`: retrieval evaluation for Engram — the versioned fixture format and its validator, exact IR
 * metrics, the runner that drives the production store and retriever three ways (FTS-only, vector-only,
 * hybrid), the gate, and adapters that turn public datasets into fixtures.
 */

export { BM25_REFERENCE_PARAMETERS, bm25Rankings, bm25Terms } from './bm25.js';
export { CMRC_AGENT, cmrcToFixture } from './datasets/cmrc.js';
export type { DatasetFixture, DatasetName } from './datasets/common.js';
export { DATASET_NAMES, DETERMINISTIC_VECTOR_PROFILE } from './datasets/common.js';
export { parseCsv, parseCsvRecords } from './datasets/csv.js';
export { isDatasetName, loadDataset } from './datasets/load.js';
export { LOCOMO_SUBSETS, locomoToFixture, parseLocomoEvidence } from './datasets/locomo.js';
export { parsePythonStringList } from './datasets/python-literal.js';
export type { SciFactFiles } from './datasets/scifact.js';
export { readSciFactZip, SCIFACT_AGENT, scifactToFixture } from './datasets/scifact.js';
export type { ZipEntry } from './datasets/zip.js';
export { crc32, readZip } from './datasets/zip.js';
export type {
  CreateEvalEmbedderOptions,
  EvalEmbedder,
  EvalEmbedderName,
  NamedEvalEmbedder,
  VectorCounts,
  VectorSource,
} from './embedders.js';
export {
  createEvalEmbedder,
  createVectorSource,
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
  ScoredQuery,
  VariantName,
  VariantReport,
} from './report.js';
export {
  formatReportTable,
  meanScores,
  REPORT_VERSION,
  RETRIEVER_VARIANTS,
  summarizeVariant,
  VARIANTS,
} from './report.js';
export type { RunFixtureConfig, RunProgress, RunRetrieverOptions } from './runner.js';
export {
  DEFAULT_INSERT_BATCH,
  DEFAULT_RUN_EPOCH,
  loadFixture,
  RANKING_DEPTH,
  runFixture,
  VARIANT_ARMS,
} from './runner.js';
export type { VectorCache, VectorCacheProfile } from './vector-cache.js';
export { openVectorCache, VECTOR_CACHE_FORMAT, vectorCacheDirectoryName } from './vector-cache.js';
