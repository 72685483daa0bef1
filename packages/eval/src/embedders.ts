import { availableParallelism } from 'node:os';
import { contentHash } from '@engram/contracts';
import { createDeterministicEmbedder } from '@engram/embedder-deterministic';
import { configFromEnv, createOpenAICompatibleEmbedder, type EnvSource } from '@engram/provider-openai';
import { EngramEvalError } from './errors.js';
import type { VectorCache } from './vector-cache.js';

/** The embedder port an evaluation runs with (structurally the retriever's and the drain's port). */
export interface EvalEmbedder {
  readonly profile: { readonly id: string; readonly dimensions: number };
  embed(texts: readonly string[], options?: { readonly signal?: AbortSignal }): Promise<Float32Array[]>;
}

/** The embedders `--embedder` names. */
export const EVAL_EMBEDDER_NAMES: readonly ['deterministic', 'use', 'openai'] = [
  'deterministic',
  'use',
  'openai',
] as const;
/** One embedder name. */
export type EvalEmbedderName = (typeof EVAL_EMBEDDER_NAMES)[number];

/** True when `name` is one of {@link EVAL_EMBEDDER_NAMES}. */
export function isEvalEmbedderName(name: string): name is EvalEmbedderName {
  return (EVAL_EMBEDDER_NAMES as readonly string[]).includes(name);
}

/** A created embedder with the id its cached vectors are filed under. */
export interface NamedEvalEmbedder {
  readonly name: EvalEmbedderName;
  readonly embedder: EvalEmbedder;
  /**
   * The cache key's profile id: the profile id, plus `+no-concepts` for the deterministic ablation (same
   * profile id, other vectors).
   */
  readonly cacheId: string;
}

/** Options of {@link createEvalEmbedder}. */
export interface CreateEvalEmbedderOptions {
  /** The deterministic embedder's concept features (default `true`). */
  readonly conceptFeatures?: boolean;
  /** Environment for `openai` (the CLI's `ENGRAM_OPENAI_*` variables; default `process.env`). */
  readonly env?: EnvSource;
  /**
   * Worker threads of `use` (default: one per core — an evaluation's own thread only waits while they embed);
   * `0` embeds on the calling thread.
   */
  readonly threads?: number;
}

// Kept in a variable so that TypeScript does not resolve it: the package is optional and loaded on demand.
const USE_PACKAGE = '@engram/embedder-use';

function isEmbedder(value: unknown): value is EvalEmbedder {
  if (typeof value !== 'object' || value === null) return false;
  const { profile, embed } = value as { profile?: unknown; embed?: unknown };
  if (typeof embed !== 'function' || typeof profile !== 'object' || profile === null) return false;
  const { id, dimensions } = profile as { id?: unknown; dimensions?: unknown };
  return typeof id === 'string' && id !== '' && Number.isInteger(dimensions) && (dimensions as number) > 0;
}

async function loadUseEmbedder(threads: number | undefined): Promise<EvalEmbedder> {
  let mod: { createUseEmbedder?: unknown; createUseEmbedderPool?: unknown };
  try {
    mod = (await import(USE_PACKAGE)) as { createUseEmbedder?: unknown; createUseEmbedderPool?: unknown };
  } catch (error) {
    throw new EngramEvalError(
      'ENGRAM_EVAL_EMBEDDER_UNAVAILABLE',
      `--embedder use needs the package ${USE_PACKAGE}, installed and built.`,
      { cause: error },
    );
  }
  // Worker threads when the package has them (and threads are not 0), else the calling thread.
  const factory =
    threads !== 0 && typeof mod.createUseEmbedderPool === 'function'
      ? (mod.createUseEmbedderPool as (config: { threads?: number }) => unknown)
      : mod.createUseEmbedder;
  if (typeof factory !== 'function') {
    throw new EngramEvalError(
      'ENGRAM_EVAL_EMBEDDER_UNAVAILABLE',
      `${USE_PACKAGE} does not export createUseEmbedder.`,
    );
  }
  const embedder: unknown = await (factory as (config: { threads?: number }) => unknown)(
    threads === 0 ? {} : { threads: threads ?? Math.min(64, availableParallelism()) },
  );
  if (!isEmbedder(embedder)) {
    throw new EngramEvalError(
      'ENGRAM_EVAL_EMBEDDER_UNAVAILABLE',
      `${USE_PACKAGE}'s createUseEmbedder() did not return an embedder with a profile.`,
    );
  }
  return embedder;
}

/**
 * Creates the embedder `--embedder` names: `deterministic` (`@engram/embedder-deterministic`), `use`
 * (`@engram/embedder-use`, imported on demand) or `openai` (any OpenAI-compatible endpoint through
 * `@engram/provider-openai`, configured by the same `ENGRAM_OPENAI_*` variables as the CLI).
 */
export async function createEvalEmbedder(
  name: EvalEmbedderName,
  options: CreateEvalEmbedderOptions = {},
): Promise<NamedEvalEmbedder> {
  switch (name) {
    case 'deterministic': {
      const concepts = options.conceptFeatures ?? true;
      const embedder = createDeterministicEmbedder({ conceptFeatures: concepts });
      return { name, embedder, cacheId: `${embedder.profile.id}${concepts ? '' : '+no-concepts'}` };
    }
    case 'use': {
      const embedder = await loadUseEmbedder(options.threads);
      return { name, embedder, cacheId: embedder.profile.id };
    }
    case 'openai': {
      // Throws ENGRAM_PROVIDER_CONFIG naming the variable (never its value) when a value is invalid.
      const config = configFromEnv(options.env ?? process.env).embedder;
      if (config === null) {
        throw new EngramEvalError(
          'ENGRAM_EVAL_EMBEDDER_UNAVAILABLE',
          '--embedder openai needs ENGRAM_OPENAI_EMBEDDING_MODEL and ENGRAM_OPENAI_EMBEDDING_DIMENSIONS (and ENGRAM_OPENAI_BASE_URL or ENGRAM_OPENAI_API_KEY).',
        );
      }
      const embedder = createOpenAICompatibleEmbedder(config);
      return { name, embedder, cacheId: embedder.profile.id };
    }
  }
}

/** How many vectors of a run were computed and how many were read from the cache. */
export interface VectorCounts {
  /** Texts sent to the embedder. */
  readonly embedded: number;
  /** Texts answered from the on-disk cache. */
  readonly fromCache: number;
}

/**
 * The vectors of a run: each distinct content hash (the store's `contentHash`) is embedded at most once —
 * answered from memory, then from the on-disk cache, else embedded in batches and appended to the cache.
 */
export interface VectorSource {
  readonly profile: { readonly id: string; readonly dimensions: number };
  vectors(texts: readonly string[]): Promise<Float32Array[]>;
  counts(): VectorCounts;
  /** An embedder port serving the same vectors (the retriever's query embedder). */
  readonly port: EvalEmbedder;
}

/** Texts per `embed` call when filling misses. */
export const EMBED_BATCH = 64;

/** Wraps an embedder in a {@link VectorSource}, with an optional on-disk cache of the same profile. */
export function createVectorSource(embedder: EvalEmbedder, cache?: VectorCache): VectorSource {
  const { profile } = embedder;
  if (cache !== undefined && cache.profile.dimensions !== profile.dimensions) {
    throw new EngramEvalError(
      'ENGRAM_EVAL_INVALID_ARGUMENTS',
      'The vector cache belongs to another profile.',
    );
  }
  const memo = new Map<string, Float32Array>();
  let embedded = 0;
  let fromCache = 0;
  const vectors = async (texts: readonly string[]): Promise<Float32Array[]> => {
    const hashes = texts.map((t) => contentHash(t));
    const missing = new Map<string, string>();
    for (let i = 0; i < texts.length; i += 1) {
      const hash = hashes[i] as string;
      if (memo.has(hash) || missing.has(hash)) continue;
      const cached = cache?.get(hash);
      if (cached !== undefined) {
        memo.set(hash, cached);
        fromCache += 1;
      } else missing.set(hash, texts[i] as string);
    }
    const pending = [...missing];
    for (let start = 0; start < pending.length; start += EMBED_BATCH) {
      const batch = pending.slice(start, start + EMBED_BATCH);
      const out = await embedder.embed(batch.map(([, text]) => text));
      if (out.length !== batch.length) {
        throw new EngramEvalError(
          'ENGRAM_EVAL_RETRIEVAL_FAILED',
          `The embedder returned ${out.length} vectors for ${batch.length} texts.`,
        );
      }
      const entries = batch.map(([hash], i) => [hash, out[i] as Float32Array] as const);
      for (const [hash, vector] of entries) {
        if (vector.length !== profile.dimensions) {
          throw new EngramEvalError(
            'ENGRAM_EVAL_RETRIEVAL_FAILED',
            `The embedder returned a vector of ${vector.length} dimensions; its profile says ${profile.dimensions}.`,
          );
        }
        memo.set(hash, vector);
      }
      embedded += batch.length;
      cache?.append(entries);
    }
    return hashes.map((hash) => memo.get(hash) as Float32Array);
  };
  return {
    profile,
    vectors,
    counts: () => ({ embedded, fromCache }),
    port: { profile, embed: (texts) => vectors(texts) },
  };
}
