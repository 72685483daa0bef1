import { EngramLocalModelError, invalidConfig, throwIfAborted } from './errors.js';
import { checkSource, type LocalModelSource, withModel } from './loader.js';

/** Construction settings of {@link createLocalEmbedder}. */
export interface LocalEmbedderConfig extends LocalModelSource {
  /** The vector length the model gives (e.g. 384 for MiniLM-L6 and bge-small); checked on every answer. */
  readonly dimensions: number;
  /** The profile id recorded in the store (default `local:<model>`). */
  readonly profileId?: string;
  /** How token vectors become one vector: `mean` (default; MiniLM, E5) or `cls` (BGE). */
  readonly pooling?: 'mean' | 'cls';
  /** Scale each vector to length 1 (default `true`). */
  readonly normalize?: boolean;
  /** Text put before every input, e.g. `query: ` for the E5 models (default none). */
  readonly prefix?: string;
  /** Most texts per inference (default 32). */
  readonly batchSize?: number;
}

/** Per-call options of {@link LocalEmbedder.embed}. */
export interface LocalEmbedOptions {
  /** Checked between batches; an aborted call rejects with `ENGRAM_LOCAL_MODEL_ABORTED` (`AbortError`). */
  readonly signal?: AbortSignal;
}

/**
 * A sentence embedder run locally (structurally Engram's embedder port): one `Float32Array` of
 * `profile.dimensions` finite numbers per text, in order, or an `EngramLocalModelError`. The model loads on the
 * first call (or `load()`), offline unless `allowDownload`.
 */
export interface LocalEmbedder {
  readonly profile: { readonly id: string; readonly dimensions: number };
  embed(texts: readonly string[], options?: LocalEmbedOptions): Promise<Float32Array[]>;
  /** Loads the model now (later calls share it); rejects like a first `embed` would. */
  load(): Promise<void>;
}

const WHAT = 'local embedder';

type Extractor = (
  texts: string[],
  options: Record<string, unknown>,
) => Promise<{ dims: number[]; data: ArrayLike<number> }>;

/**
 * Creates a sentence embedder over a local ONNX model (e.g. `Xenova/all-MiniLM-L6-v2`, `Xenova/bge-small-en-v1.5`,
 * `Xenova/multilingual-e5-small`). Throws `ENGRAM_LOCAL_MODEL_INVALID_CONFIG` naming the setting on invalid
 * settings; loads nothing until used.
 */
export function createLocalEmbedder(config: LocalEmbedderConfig): LocalEmbedder {
  checkSource(config, WHAT);
  const { dimensions } = config;
  if (!Number.isInteger(dimensions) || dimensions < 1 || dimensions > 65_536)
    throw invalidConfig(WHAT, 'dimensions', 'must be an integer in 1..65536');
  const pooling = config.pooling ?? 'mean';
  if (pooling !== 'mean' && pooling !== 'cls')
    throw invalidConfig(WHAT, 'pooling', 'must be "mean" or "cls"');
  const normalize = config.normalize ?? true;
  if (typeof normalize !== 'boolean') throw invalidConfig(WHAT, 'normalize', 'must be a boolean');
  const prefix = config.prefix ?? '';
  if (typeof prefix !== 'string') throw invalidConfig(WHAT, 'prefix', 'must be a string');
  const batchSize = config.batchSize ?? 32;
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 4096)
    throw invalidConfig(WHAT, 'batchSize', 'must be an integer in 1..4096');
  const profileId = config.profileId ?? `local:${config.model.trim()}`;
  if (typeof profileId !== 'string' || profileId.trim() === '')
    throw invalidConfig(WHAT, 'profileId', 'must not be empty');

  let loading: Promise<Extractor> | undefined;
  const load = (): Promise<Extractor> => {
    loading ??= withModel(config, WHAT, async (t, id, options) => {
      const extractor = await t.pipeline('feature-extraction', id, options);
      return (texts, opts) => extractor(texts, opts) as Promise<{ dims: number[]; data: ArrayLike<number> }>;
    });
    loading.catch(() => {
      loading = undefined;
    });
    return loading;
  };

  const embed = async (
    texts: readonly string[],
    options: LocalEmbedOptions = {},
  ): Promise<Float32Array[]> => {
    const { signal } = options;
    throwIfAborted(signal, WHAT);
    if (texts.length === 0) return [];
    const extract = await load();
    const out: Float32Array[] = [];
    for (let start = 0; start < texts.length; start += batchSize) {
      throwIfAborted(signal, WHAT);
      const batch = texts.slice(start, start + batchSize).map((t) => prefix + t);
      let result: { dims: number[]; data: ArrayLike<number> };
      try {
        result = await extract(batch, { pooling, normalize });
      } catch {
        throw new EngramLocalModelError(
          'ENGRAM_LOCAL_MODEL_INFERENCE_FAILED',
          `The ${WHAT} failed to embed a batch.`,
        );
      }
      const width = result.dims[result.dims.length - 1] ?? 0;
      if (width !== dimensions) {
        throw new EngramLocalModelError(
          'ENGRAM_LOCAL_MODEL_DIMENSIONS',
          `The ${WHAT} model gives vectors of ${width} dimensions; ${dimensions} are configured.`,
        );
      }
      for (let i = 0; i < batch.length; i += 1) {
        const vector = Float32Array.from(
          Array.prototype.slice.call(result.data, i * width, (i + 1) * width) as number[],
        );
        if (!vector.every(Number.isFinite)) {
          throw new EngramLocalModelError(
            'ENGRAM_LOCAL_MODEL_INFERENCE_FAILED',
            `The ${WHAT} gave a vector that is not finite.`,
          );
        }
        out.push(vector);
      }
    }
    throwIfAborted(signal, WHAT);
    return out;
  };

  return Object.freeze({
    profile: Object.freeze({ id: profileId, dimensions }),
    embed,
    load: async () => {
      await load();
    },
  });
}
