import { createHttpReranker, type HttpRerankerFlavor } from '@engram/provider-openai';
import type { Reranker } from '@engram/retrieval';
import { localModelSource } from './embedders.js';
import { EngramEvalError } from './errors.js';

/** The rerankers `--rerank` names. */
export const EVAL_RERANKER_NAMES: readonly ['http', 'local'] = ['http', 'local'] as const;
/** One reranker name. */
export type EvalRerankerName = (typeof EVAL_RERANKER_NAMES)[number];

/** True when `name` is one of {@link EVAL_RERANKER_NAMES}. */
export function isEvalRerankerName(name: string): name is EvalRerankerName {
  return (EVAL_RERANKER_NAMES as readonly string[]).includes(name);
}

/** The variables `--rerank` reads (names only; values never enter a message). */
export const ENGRAM_RERANK_ENV_VARS: readonly [
  'ENGRAM_RERANK_BASE_URL',
  'ENGRAM_RERANK_MODEL',
  'ENGRAM_RERANK_API_KEY',
  'ENGRAM_RERANK_FLAVOR',
  'ENGRAM_RERANK_ALLOW_DOWNLOAD',
] = [
  'ENGRAM_RERANK_BASE_URL',
  'ENGRAM_RERANK_MODEL',
  'ENGRAM_RERANK_API_KEY',
  'ENGRAM_RERANK_FLAVOR',
  'ENGRAM_RERANK_ALLOW_DOWNLOAD',
] as const;

/** A created reranker, its `--rerank` name and the id reports show. */
export interface NamedEvalReranker {
  readonly name: EvalRerankerName;
  readonly id: string;
  readonly reranker: Reranker;
}

function unavailable(message: string, cause?: unknown): EngramEvalError {
  return new EngramEvalError('ENGRAM_EVAL_RERANKER_UNAVAILABLE', message, { cause });
}

// Kept in a variable so that TypeScript does not resolve it: the package is optional and loaded on demand.
const LOCAL_PACKAGE = '@engram/local-onnx';

interface LocalRerankerModule {
  createLocalReranker(config: {
    model: string;
    allowDownload?: boolean;
  }): Reranker & { readonly id: string; load(): Promise<void> };
}

async function localReranker(model: string, allowDownload: boolean): Promise<NamedEvalReranker> {
  let mod: Partial<LocalRerankerModule>;
  try {
    mod = (await import(LOCAL_PACKAGE)) as Partial<LocalRerankerModule>;
  } catch (error) {
    throw unavailable(`--rerank local needs the package ${LOCAL_PACKAGE}, installed and built.`, error);
  }
  if (typeof mod.createLocalReranker !== 'function') {
    throw unavailable(`${LOCAL_PACKAGE} does not export createLocalReranker.`);
  }
  const reranker = mod.createLocalReranker({ model, allowDownload });
  // Loaded now: a model found nowhere fails here, with its own error (ENGRAM_LOCAL_MODEL_NOT_FOUND), not as a
  // rerank error on the first query.
  try {
    await reranker.load();
  } catch (error) {
    // The package's messages name the model and the option to change, never user content.
    throw unavailable(
      `--rerank local: ${error instanceof Error ? error.message : 'the model did not load'}`,
      error,
    );
  }
  return { name: 'local', id: reranker.id, reranker };
}

/**
 * Creates the reranker `--rerank` names, configured by the `ENGRAM_RERANK_*` variables:
 * - `http`: a `/rerank` endpoint (Cohere, Jina, Voyage, TEI, vLLM) through `@engram/provider-openai`'s
 *   `createHttpReranker`: `ENGRAM_RERANK_BASE_URL`, `ENGRAM_RERANK_MODEL`, optionally `ENGRAM_RERANK_API_KEY` and
 *   `ENGRAM_RERANK_FLAVOR` (`cohere`, `voyage` or `tei`);
 * - `local`: a cross-encoder run by `@engram/local-onnx` (an optional peer, imported on demand):
 *   `ENGRAM_RERANK_MODEL` is its directory or hub id; it is never downloaded unless
 *   `ENGRAM_RERANK_ALLOW_DOWNLOAD` is `true`.
 */
export async function createEvalReranker(
  name: EvalRerankerName,
  env: Readonly<Record<string, string | undefined>> = process.env,
): Promise<NamedEvalReranker> {
  const value = (key: (typeof ENGRAM_RERANK_ENV_VARS)[number]): string | undefined => {
    const v = env[key]?.trim();
    return v === undefined || v === '' ? undefined : v;
  };
  const model = value('ENGRAM_RERANK_MODEL');
  if (name === 'local') {
    if (model === undefined)
      throw unavailable('--rerank local needs ENGRAM_RERANK_MODEL (a directory or a hub id).');
    const allow = value('ENGRAM_RERANK_ALLOW_DOWNLOAD');
    if (allow !== undefined && allow !== 'true' && allow !== 'false') {
      throw unavailable('ENGRAM_RERANK_ALLOW_DOWNLOAD must be true or false.');
    }
    return localReranker(localModelSource(model, env), allow === 'true');
  }
  const baseUrl = value('ENGRAM_RERANK_BASE_URL');
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
