/**
 * `@engram/local-onnx`: local ONNX models on `@huggingface/transformers` — a cross-encoder reranker for the
 * retriever's rerank stage and a sentence embedder for any sentence-embedding model (MiniLM, BGE, multilingual
 * E5) — loaded from a directory or a local cache, and never downloaded unless `allowDownload` says so.
 */
export type { LocalEmbedder, LocalEmbedderConfig, LocalEmbedOptions } from './embedder.js';
export { createLocalEmbedder } from './embedder.js';
export type { EngramLocalModelErrorCode } from './errors.js';
export { ENGRAM_LOCAL_MODEL_ERROR_CODES, EngramLocalModelError, isEngramLocalModelError } from './errors.js';
export type { LocalModelSource } from './loader.js';
export type { LocalReranker, LocalRerankerConfig, LocalRerankOptions } from './reranker.js';
export { createLocalReranker } from './reranker.js';
