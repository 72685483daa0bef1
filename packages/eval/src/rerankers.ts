import { createHttpReranker, type HttpRerankerFlavor } from '@engram/provider-openai';
import type { Reranker } from '@engram/retrieval';
import { EngramEvalError } from './errors.js';

/** The rerankers `--rerank` names. */
export const EVAL_RERANKER_NAMES: readonly ['http'] = ['http'] as const;
/** One reranker name. */
export type EvalRerankerName = (typeof EVAL_RERANKER_NAMES)[number];

/** True when `name` is one of {@link EVAL_RERANKER_NAMES}. */
export function isEvalRerankerName(name: string): name is EvalRerankerName {
  return (EVAL_RERANKER_NAMES as readonly string[]).includes(name);
}

/** The variables `--rerank http` reads (names only; values never enter a message). */
export const ENGRAM_RERANK_ENV_VARS: readonly [
  'ENGRAM_RERANK_BASE_URL',
  'ENGRAM_RERANK_MODEL',
  'ENGRAM_RERANK_API_KEY',
  'ENGRAM_RERANK_FLAVOR',
] = [
  'ENGRAM_RERANK_BASE_URL',
  'ENGRAM_RERANK_MODEL',
  'ENGRAM_RERANK_API_KEY',
  'ENGRAM_RERANK_FLAVOR',
] as const;

/** A created reranker, its `--rerank` name and the id reports show. */
export interface NamedEvalReranker {
  readonly name: EvalRerankerName;
  readonly id: string;
  readonly reranker: Reranker;
}

function unavailable(message: string): EngramEvalError {
  return new EngramEvalError('ENGRAM_EVAL_RERANKER_UNAVAILABLE', message);
}

/**
 * Creates the reranker `--rerank` names: `http`, a `/rerank` endpoint (Cohere, Jina, Voyage, TEI, vLLM) through
 * `@engram/provider-openai`'s `createHttpReranker`, configured by `ENGRAM_RERANK_BASE_URL`, `ENGRAM_RERANK_MODEL`,
 * and optionally `ENGRAM_RERANK_API_KEY` and `ENGRAM_RERANK_FLAVOR` (`cohere`, `voyage` or `tei`).
 */
export function createEvalReranker(
  name: EvalRerankerName,
  env: Readonly<Record<string, string | undefined>> = process.env,
): NamedEvalReranker {
  const value = (key: (typeof ENGRAM_RERANK_ENV_VARS)[number]): string | undefined => {
    const v = env[key]?.trim();
    return v === undefined || v === '' ? undefined : v;
  };
  const baseUrl = value('ENGRAM_RERANK_BASE_URL');
  const model = value('ENGRAM_RERANK_MODEL');
  if (baseUrl === undefined || model === undefined) {
    throw unavailable(`--rerank ${name} needs ENGRAM_RERANK_BASE_URL and ENGRAM_RERANK_MODEL.`);
  }
  const flavor = value('ENGRAM_RERANK_FLAVOR');
  if (flavor !== undefined && flavor !== 'cohere' && flavor !== 'voyage' && flavor !== 'tei') {
    throw unavailable('ENGRAM_RERANK_FLAVOR must be cohere, voyage or tei.');
  }
  const apiKey = value('ENGRAM_RERANK_API_KEY');
  // Throws ENGRAM_PROVIDER_CONFIG naming the setting (never its value) on an invalid URL.
  const reranker = createHttpReranker({
    baseUrl,
    model,
    ...(apiKey === undefined ? {} : { apiKey }),
    ...(flavor === undefined ? {} : { flavor: flavor as HttpRerankerFlavor }),
  });
  return { name, id: reranker.id, reranker };
}
