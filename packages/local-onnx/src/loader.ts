/**
 * Finding and loading a model with `@huggingface/transformers`, offline unless told otherwise.
 *
 * A model is a directory (`config.json`, `tokenizer.json`, `onnx/model*.onnx`: the layout of the ONNX repositories
 * of the Hugging Face Hub, e.g. `Xenova/ms-marco-MiniLM-L-6-v2`) or a hub id looked up, in order, in the
 * transformers.js cache (`cacheDir/<id>`) and the Hugging Face cache (`$HF_HUB_CACHE`, else `$HF_HOME/hub`, else
 * `~/.cache/huggingface/hub`: `models--<org>--<name>/snapshots/<the revision refs/main names>`). Only with
 * `allowDownload` is a model not found there fetched from the hub (into `cacheDir`).
 *
 * transformers.js reads its settings from one global `env`; loads run one at a time here with the settings each
 * needs (remote models off unless downloading) and put back afterwards. A loaded model no longer reads them.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { EngramLocalModelError, invalidConfig } from './errors.js';

/** How to find and load a model (shared by the reranker and the embedder). */
export interface LocalModelSource {
  /**
   * A directory holding the model, or a hub id (`org/name`) to find in the caches. A value starting with `.`,
   * `/` or `~`, or naming an existing directory, is a directory.
   */
  readonly model: string;
  /**
   * Fetch the model from the Hugging Face Hub when it is found in no cache (default `false`: such a model is
   * `ENGRAM_LOCAL_MODEL_NOT_FOUND`, and nothing is fetched).
   */
  readonly allowDownload?: boolean;
  /** The transformers.js cache directory to read (and, with `allowDownload`, write) (default its own). */
  readonly cacheDir?: string;
  /** The ONNX weights to load: `fp32` (default, `onnx/model.onnx`), `q8` (`model_quantized.onnx`), `fp16`, … */
  readonly dtype?: 'fp32' | 'fp16' | 'q8' | 'int8' | 'uint8' | 'q4' | 'bnb4' | 'q4f16';
}

/** The transformers.js module (loaded on first use). */
export type Transformers = typeof import('@huggingface/transformers');

let transformers: Promise<Transformers> | undefined;
function loadTransformers(): Promise<Transformers> {
  transformers ??= import('@huggingface/transformers');
  return transformers;
}

let queue: Promise<unknown> = Promise.resolve();

/** Checks a source's settings; throws `ENGRAM_LOCAL_MODEL_INVALID_CONFIG` naming the setting. */
export function checkSource(source: LocalModelSource, what: string): void {
  if (typeof source !== 'object' || source === null) throw invalidConfig(what, 'config', 'must be an object');
  if (typeof source.model !== 'string' || source.model.trim() === '')
    throw invalidConfig(what, 'model', 'must be a directory or a hub id');
  if (source.allowDownload !== undefined && typeof source.allowDownload !== 'boolean')
    throw invalidConfig(what, 'allowDownload', 'must be a boolean');
  if (source.cacheDir !== undefined && (typeof source.cacheDir !== 'string' || source.cacheDir === ''))
    throw invalidConfig(what, 'cacheDir', 'must be a directory');
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function expandHome(path: string): string {
  return path === '~' || path.startsWith('~/') ? join(homedir(), path.slice(1)) : path;
}

/** The Hugging Face cache's snapshot of a hub id (the revision `refs/main` names), if there is one. */
function hubSnapshot(id: string, env: NodeJS.ProcessEnv): string | undefined {
  const hub =
    env.HF_HUB_CACHE ??
    (env.HF_HOME === undefined ? undefined : join(env.HF_HOME, 'hub')) ??
    join(homedir(), '.cache/huggingface/hub');
  const repo = join(hub, `models--${id.split('/').join('--')}`);
  try {
    const revision = readFileSync(join(repo, 'refs', 'main'), 'utf8').trim();
    const snapshot = join(repo, 'snapshots', revision);
    return isDirectory(snapshot) ? snapshot : undefined;
  } catch {
    return undefined;
  }
}

/** Where the model is on disk, or undefined when it is a hub id found in no cache. */
export function findModel(
  source: LocalModelSource,
  defaultCacheDir: string | null,
  env: NodeJS.ProcessEnv = process.env,
): string | undefined {
  const model = source.model.trim();
  const pathLike = model.startsWith('.') || isAbsolute(model) || model.startsWith('~');
  const asPath = resolve(expandHome(model));
  if (pathLike || isDirectory(asPath)) return isDirectory(asPath) ? asPath : undefined;
  const cacheDir = source.cacheDir ?? defaultCacheDir;
  if (cacheDir !== null) {
    const cached = join(resolve(expandHome(cacheDir)), model);
    if (existsSync(join(cached, 'config.json'))) return cached;
  }
  return hubSnapshot(model, env);
}

/**
 * Runs `load` with transformers.js set up for `source`, one load at a time: a model on disk is read from there
 * with remote models off; a hub id found in no cache is `ENGRAM_LOCAL_MODEL_NOT_FOUND` — naming the model and
 * `allowDownload` — unless `allowDownload` is set, when it is fetched into `cacheDir`.
 */
export function withModel<T>(
  source: LocalModelSource,
  what: string,
  load: (t: Transformers, id: string, options: Record<string, unknown>) => Promise<T>,
): Promise<T> {
  const run = queue.then(async () => {
    let t: Transformers;
    try {
      t = await loadTransformers();
    } catch (error) {
      throw new EngramLocalModelError(
        'ENGRAM_LOCAL_MODEL_LOAD_FAILED',
        `The ${what} needs @huggingface/transformers and onnxruntime-node, which did not load.`,
        { cause: error },
      );
    }
    const { env } = t;
    const saved = {
      allowRemoteModels: env.allowRemoteModels,
      allowLocalModels: env.allowLocalModels,
      localModelPath: env.localModelPath,
      cacheDir: env.cacheDir,
    };
    const dir = findModel(source, env.cacheDir);
    const options: Record<string, unknown> = { dtype: source.dtype ?? 'fp32', device: 'cpu' };
    try {
      if (dir !== undefined) {
        env.allowRemoteModels = false;
        env.allowLocalModels = true;
        env.localModelPath = `${dirname(dir)}/`;
        return await load(t, basename(dir), { ...options, local_files_only: true });
      }
      if (source.allowDownload !== true) {
        throw new EngramLocalModelError(
          'ENGRAM_LOCAL_MODEL_NOT_FOUND',
          `The ${what} model "${source.model}" is not a directory and is in no local cache; nothing was downloaded. Pass allowDownload: true to fetch it from the Hugging Face Hub, or give the directory that holds it.`,
        );
      }
      env.allowRemoteModels = true;
      if (source.cacheDir !== undefined) env.cacheDir = resolve(expandHome(source.cacheDir));
      return await load(t, source.model.trim(), options);
    } catch (error) {
      if (error instanceof EngramLocalModelError) throw error;
      throw new EngramLocalModelError(
        'ENGRAM_LOCAL_MODEL_LOAD_FAILED',
        `The ${what} model "${source.model}" could not be loaded (a missing file, or weights onnxruntime cannot run).`,
        { cause: error },
      );
    } finally {
      Object.assign(env, saved);
    }
  });
  queue = run.catch(() => undefined);
  return run;
}
