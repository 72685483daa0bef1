import { createHash } from 'node:crypto';
import { statSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { isAbsolute, resolve } from 'node:path';
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
export const EVAL_EMBEDDER_NAMES: readonly ['deterministic', 'use', 'openai', 'local'] = [
  'deterministic',
  'use',
  'openai',
  'local',
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
   * The cache key's profile id: the profile id, plus what changes the vectors but not the profile id —
   * `+no-concepts` for the deterministic ablation, `+cls` and `+prefix-<hash>` for a local model's pooling and
   * prefix.
   */
  readonly cacheId: string;
}

/** Options of {@link createEvalEmbedder}. */
export interface CreateEvalEmbedderOptions {
  /** The deterministic embedder's concept features (default `true`). */
  readonly conceptFeatures?: boolean;
  /**
   * Environment for `openai` (the CLI's `ENGRAM_OPENAI_*` variables) and `local` (the
   * {@link ENGRAM_LOCAL_EMBEDDING_ENV_VARS}); default `process.env`.
   */
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

/** The variables `--embedder local` reads (names only; values never enter a message). */
export const ENGRAM_LOCAL_EMBEDDING_ENV_VARS: readonly [
  'ENGRAM_LOCAL_EMBEDDING_MODEL',
  'ENGRAM_LOCAL_EMBEDDING_DIMENSIONS',
  'ENGRAM_LOCAL_EMBEDDING_POOLING',
  'ENGRAM_LOCAL_EMBEDDING_PREFIX',
  'ENGRAM_LOCAL_EMBEDDING_ALLOW_DOWNLOAD',
] = [
  'ENGRAM_LOCAL_EMBEDDING_MODEL',
  'ENGRAM_LOCAL_EMBEDDING_DIMENSIONS',
  'ENGRAM_LOCAL_EMBEDDING_POOLING',
  'ENGRAM_LOCAL_EMBEDDING_PREFIX',
  'ENGRAM_LOCAL_EMBEDDING_ALLOW_DOWNLOAD',
] as const;

type LocalEmbeddingVar = (typeof ENGRAM_LOCAL_EMBEDDING_ENV_VARS)[number];

// Kept in a variable so that TypeScript does not resolve it: the package is optional and loaded on demand.
const LOCAL_PACKAGE = '@engram/local-onnx';

/** The settings of `--embedder local`, read from the environment. */
interface LocalEmbeddingSettings {
  /** The model as the user gave it (the profile id's part). */
  readonly model: string;
  /** Where to load it from: a relative directory resolved against where pnpm ran. */
  readonly source: string;
  readonly dimensions: number;
  readonly pooling?: 'mean' | 'cls';
  readonly prefix?: string;
  readonly allowDownload: boolean;
}

function localUnavailable(message: string, cause?: unknown): EngramEvalError {
  return new EngramEvalError('ENGRAM_EVAL_EMBEDDER_UNAVAILABLE', message, { cause });
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** Reads and checks the `ENGRAM_LOCAL_EMBEDDING_*` variables; a message names the variable, never its value. */
function localSettings(env: EnvSource): LocalEmbeddingSettings {
  const read = (key: LocalEmbeddingVar): string | undefined => {
    const v = env[key]?.trim();
    return v === undefined || v === '' ? undefined : v;
  };
  const model = read('ENGRAM_LOCAL_EMBEDDING_MODEL');
  const rawDimensions = read('ENGRAM_LOCAL_EMBEDDING_DIMENSIONS');
  const missing = [
    ...(model === undefined ? ['ENGRAM_LOCAL_EMBEDDING_MODEL (a directory or a hub id)'] : []),
    ...(rawDimensions === undefined ? ['ENGRAM_LOCAL_EMBEDDING_DIMENSIONS (the vector length)'] : []),
  ];
  if (model === undefined || rawDimensions === undefined)
    throw localUnavailable(`--embedder local needs ${missing.join(' and ')}.`);
  const dimensions = Number(rawDimensions);
  if (
    !/^[0-9]+$/.test(rawDimensions) ||
    !Number.isInteger(dimensions) ||
    dimensions < 1 ||
    dimensions > 65_536
  )
    throw localUnavailable('ENGRAM_LOCAL_EMBEDDING_DIMENSIONS must be an integer in 1..65536.');
  const pooling = read('ENGRAM_LOCAL_EMBEDDING_POOLING');
  if (pooling !== undefined && pooling !== 'mean' && pooling !== 'cls')
    throw localUnavailable('ENGRAM_LOCAL_EMBEDDING_POOLING must be mean or cls.');
  const allow = read('ENGRAM_LOCAL_EMBEDDING_ALLOW_DOWNLOAD');
  if (allow !== undefined && allow !== 'true' && allow !== 'false')
    throw localUnavailable('ENGRAM_LOCAL_EMBEDDING_ALLOW_DOWNLOAD must be true or false.');
  // Not trimmed: a prefix usually ends in a space (`query: `).
  const prefix = env.ENGRAM_LOCAL_EMBEDDING_PREFIX;
  const source = localModelSource(model, env);
  return {
    model,
    source,
    dimensions,
    ...(pooling === undefined ? {} : { pooling }),
    ...(prefix === undefined || prefix === '' ? {} : { prefix }),
    allowDownload: allow === 'true',
  };
}

interface LocalEmbedderModule {
  createLocalEmbedder(config: {
    model: string;
    dimensions: number;
    profileId: string;
    pooling?: 'mean' | 'cls';
    prefix?: string;
    allowDownload: boolean;
  }): EvalEmbedder & { load(): Promise<void> };
}

/**
 * Where a local model named by a variable is loaded from: pnpm runs the eval in its package directory, so a
 * relative directory means one where the user ran pnpm (`INIT_CWD`); anything else (a hub id, an absolute path)
 * is passed on as it is.
 */
export function localModelSource(model: string, env: EnvSource): string {
  const base = env.INIT_CWD !== undefined && env.INIT_CWD !== '' ? env.INIT_CWD : process.cwd();
  const relative = resolve(base, model);
  const asIs = isAbsolute(model) || model.startsWith('~');
  return !asIs && (model.startsWith('.') || isDirectory(relative)) ? relative : model;
}

/** What the package's error says, plus the variable to change for the codes that have one. */
function localFailure(error: unknown): EngramEvalError {
  const { code, message } = (typeof error === 'object' && error !== null ? error : {}) as {
    code?: unknown;
    message?: unknown;
  };
  const hint =
    code === 'ENGRAM_LOCAL_MODEL_NOT_FOUND'
      ? ' Here: ENGRAM_LOCAL_EMBEDDING_ALLOW_DOWNLOAD=true, or ENGRAM_LOCAL_EMBEDDING_MODEL naming the directory.'
      : code === 'ENGRAM_LOCAL_MODEL_DIMENSIONS'
        ? ' Set ENGRAM_LOCAL_EMBEDDING_DIMENSIONS to the width the model gives.'
        : '';
  // The package's messages name the model and the option to change, never user content.
  const text = typeof message === 'string' && message !== '' ? message : 'the model did not load.';
  return localUnavailable(`--embedder local: ${text}${hint}`, error);
}

// A fixed text (never user content) embedded once at load, so a wrong width fails before the run starts.
const PROBE_TEXT = 'engram';

async function loadLocalEmbedder(env: EnvSource): Promise<NamedEvalEmbedder> {
  const settings = localSettings(env);
  let mod: Partial<LocalEmbedderModule>;
  try {
    mod = (await import(LOCAL_PACKAGE)) as Partial<LocalEmbedderModule>;
  } catch (error) {
    throw localUnavailable(
      `--embedder local needs the package ${LOCAL_PACKAGE}, installed and built.`,
      error,
    );
  }
  if (typeof mod.createLocalEmbedder !== 'function')
    throw localUnavailable(`${LOCAL_PACKAGE} does not export createLocalEmbedder.`);
  let embedder: EvalEmbedder & { load(): Promise<void> };
  try {
    embedder = mod.createLocalEmbedder({
      model: settings.source,
      dimensions: settings.dimensions,
      // The model as given, so the id (in the report and the cache) does not depend on where pnpm ran.
      profileId: `local:${settings.model}`,
      ...(settings.pooling === undefined ? {} : { pooling: settings.pooling }),
      ...(settings.prefix === undefined ? {} : { prefix: settings.prefix }),
      allowDownload: settings.allowDownload,
    });
    // Loaded now: a model found nowhere fails here with its own error (ENGRAM_LOCAL_MODEL_NOT_FOUND), not on
    // the first batch of the run; the probe checks the width.
    await embedder.load();
    await embedder.embed([PROBE_TEXT]);
  } catch (error) {
    throw localFailure(error);
  }
  if (!isEmbedder(embedder))
    throw localUnavailable(
      `${LOCAL_PACKAGE}'s createLocalEmbedder() did not return an embedder with a profile.`,
    );
  // Pooling and prefix change the vectors, not the profile id: the cache keeps them apart.
  const pooling = settings.pooling === 'cls' ? '+cls' : '';
  const prefix =
    settings.prefix === undefined
      ? ''
      : `+prefix-${createHash('sha256').update(settings.prefix, 'utf8').digest('hex').slice(0, 12)}`;
  return { name: 'local', embedder, cacheId: `${embedder.profile.id}${pooling}${prefix}` };
}

/**
 * Creates the embedder `--embedder` names: `deterministic` (`@engram/embedder-deterministic`), `use`
 * (`@engram/embedder-use`, imported on demand), `openai` (any OpenAI-compatible endpoint through
 * `@engram/provider-openai`, configured by the same `ENGRAM_OPENAI_*` variables as the CLI) or `local` (a
 * sentence-embedding model run by `@engram/local-onnx`, an optional peer imported on demand, configured by the
 * {@link ENGRAM_LOCAL_EMBEDDING_ENV_VARS}: `ENGRAM_LOCAL_EMBEDDING_MODEL` (a directory or a hub id),
 * `ENGRAM_LOCAL_EMBEDDING_DIMENSIONS`, optionally `ENGRAM_LOCAL_EMBEDDING_POOLING` (`mean` or `cls`) and
 * `ENGRAM_LOCAL_EMBEDDING_PREFIX`; the model is loaded before this returns and never downloaded unless
 * `ENGRAM_LOCAL_EMBEDDING_ALLOW_DOWNLOAD` is `true`).
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
    case 'local':
      return loadLocalEmbedder(options.env ?? process.env);
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
