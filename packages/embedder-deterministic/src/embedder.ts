import { EngramEmbedderError } from './errors.js';
import { extractFeatures } from './features.js';
import { featureSlot } from './hash.js';

/** Identity of an embedding space: vectors from different profiles must never be mixed. */
export interface DeterministicProfile {
  /** Stable profile id; bumped on any change that alters a vector. */
  readonly id: 'deterministic-lexicon-v1';
  /** Number of vector components. */
  readonly dimensions: 128;
}

/** The profile of this embedder (structurally an `EmbeddingProfile` `{ id, dimensions }`). */
export const DETERMINISTIC_PROFILE: DeterministicProfile = Object.freeze({
  id: 'deterministic-lexicon-v1',
  dimensions: 128,
} as const);

/** Construction options of {@link DeterministicEmbedder}. */
export interface DeterministicEmbedderConfig {
  /** Add synonym-concept features (default `true`); `false` is the ablation switch for evaluation. */
  readonly conceptFeatures?: boolean;
}

/** Per-call options of {@link DeterministicEmbedder.embed}. */
export interface DeterministicEmbedOptions {
  /** An already aborted signal makes the call reject with an `AbortError`-named error. */
  readonly signal?: AbortSignal;
}

/**
 * The offline embedder `deterministic-lexicon-v1`: hashed lexical and concept features, 128 dimensions, L2-normalised.
 *
 * Contract: `embed` is async to fit the embedder port but computes synchronously; it returns one new
 * `Float32Array` per text in input order, bit-identical for the same text on every run and machine. A text
 * without any feature (empty, whitespace, punctuation only) yields the all-zero vector, which carries no
 * signal and must not be cosine-compared (see `isZeroVector`). It rejects only on an aborted signal or a
 * non-string input.
 */
export class DeterministicEmbedder {
  /** The embedding profile (id and dimensions). */
  readonly profile: DeterministicProfile = DETERMINISTIC_PROFILE;
  readonly #conceptFeatures: boolean;

  constructor(config: DeterministicEmbedderConfig = {}) {
    this.#conceptFeatures = config.conceptFeatures ?? true;
  }

  /** Whether synonym-concept features are on. */
  get conceptFeatures(): boolean {
    return this.#conceptFeatures;
  }

  /** Embeds texts asynchronously, one vector per text in the same order. */
  embed(texts: readonly string[], options: DeterministicEmbedOptions = {}): Promise<Float32Array[]> {
    try {
      if (options.signal?.aborted === true) {
        throw new EngramEmbedderError('ENGRAM_EMBEDDER_ABORTED', 'Embedding was aborted.', {
          cause: options.signal.reason,
        });
      }
      if (!Array.isArray(texts)) {
        throw new EngramEmbedderError('ENGRAM_EMBEDDER_INVALID_INPUT', 'Expected an array of strings.');
      }
      return Promise.resolve(texts.map((text) => this.embedSync(text)));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** Embeds one text synchronously. */
  embedSync(text: string): Float32Array {
    if (typeof text !== 'string') {
      throw new EngramEmbedderError('ENGRAM_EMBEDDER_INVALID_INPUT', 'Expected a string to embed.');
    }
    const { dimensions } = this.profile;
    const sums = new Float64Array(dimensions);
    for (const feature of extractFeatures(text, { conceptFeatures: this.#conceptFeatures })) {
      const { bucket, sign } = featureSlot(feature, dimensions);
      sums[bucket] = (sums[bucket] ?? 0) + sign;
    }
    let squares = 0;
    for (const value of sums) squares += value * value;
    const vector = new Float32Array(dimensions);
    if (squares === 0) return vector;
    const norm = Math.sqrt(squares);
    for (let i = 0; i < dimensions; i += 1) vector[i] = (sums[i] ?? 0) / norm;
    return vector;
  }
}

/** Creates a {@link DeterministicEmbedder}. */
export function createDeterministicEmbedder(config: DeterministicEmbedderConfig = {}): DeterministicEmbedder {
  return new DeterministicEmbedder(config);
}

/** True when every component is zero: such a vector carries no signal and cannot be cosine-compared. */
export function isZeroVector(vector: ArrayLike<number>): boolean {
  for (let i = 0; i < vector.length; i += 1) {
    if (vector[i] !== 0) return false;
  }
  return true;
}
