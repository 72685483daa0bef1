import { z } from 'zod';
import { EngramProviderError } from './errors.js';
import { malformed, malformedFrom, postJson } from './http.js';
import {
  configErrorFrom,
  createTransport,
  type OpenAICompatibleHttpConfig,
  once,
  type Transport,
} from './transport.js';

/** Construction settings of {@link createOpenAICompatibleEmbedder}. */
export interface OpenAICompatibleEmbedderConfig extends OpenAICompatibleHttpConfig {
  /** The embedding model, e.g. `text-embedding-3-small` or `nomic-embed-text`. */
  readonly model: string;
  /** The vector length every answer must have; part of the store's embedder fingerprint. */
  readonly dimensions: number;
  /** Send `dimensions` in the request, for models that can shorten their vectors (default `false`). */
  readonly sendDimensions?: boolean;
  /** The profile id recorded in the store (default `openai-compatible:<model>`). */
  readonly profileId?: string;
  /** Most texts per HTTP request; larger inputs are split into sequential batches (default 64). */
  readonly batchSize?: number;
}

/** Per-call options of {@link OpenAICompatibleEmbedder.embed}. */
export interface OpenAICompatibleEmbedOptions {
  /** Aborts the call; it then rejects with `ENGRAM_PROVIDER_ABORTED` (`name === 'AbortError'`). */
  readonly signal?: AbortSignal;
}

/** The embedding profile of an OpenAI-compatible embedder (structurally the store's `{ id, dimensions }`). */
export interface OpenAICompatibleEmbeddingProfile {
  /** Stable profile id, by default `openai-compatible:<model>`. */
  readonly id: string;
  /** Vector length. */
  readonly dimensions: number;
}

/**
 * An embedder port served by an OpenAI-compatible `POST /embeddings` endpoint.
 *
 * Contract: `embed` is async and resolves with exactly one `Float32Array` of `profile.dimensions` finite numbers per
 * text, in input order, or rejects with an `EngramProviderError`; it never resolves with partial output. It never
 * throws synchronously. An empty input resolves with `[]` without a request.
 */
export interface OpenAICompatibleEmbedder {
  /** The embedding profile (id and dimensions). */
  readonly profile: OpenAICompatibleEmbeddingProfile;
  /** Embeds texts, one vector per text in the same order. */
  embed(texts: readonly string[], options?: OpenAICompatibleEmbedOptions): Promise<Float32Array[]>;
}

const embedderConfigSchema = once(() =>
  z.object({
    model: z.string({ error: 'must be a string' }).trim().min(1, { error: 'must not be empty' }),
    dimensions: z
      .number({ error: 'must be a number' })
      .int({ error: 'must be an integer' })
      .min(1, { error: 'must be at least 1' })
      .max(65_536, { error: 'must be at most 65536' }),
    sendDimensions: z.boolean({ error: 'must be a boolean' }).optional(),
    profileId: z
      .string({ error: 'must be a string' })
      .trim()
      .min(1, { error: 'must not be empty' })
      .optional(),
    batchSize: z
      .number({ error: 'must be a number' })
      .int({ error: 'must be an integer' })
      .min(1, { error: 'must be at least 1' })
      .max(4096, { error: 'must be at most 4096' })
      .optional(),
  }),
);

const embeddingsResponseSchema = once(() =>
  z.object({
    data: z.array(
      z.object({
        index: z.number().int().min(0),
        embedding: z.array(z.number()),
      }),
    ),
  }),
);

const DEFAULT_BATCH_SIZE = 64;
const DEFAULT_TIMEOUT_MS = 30_000;
const WHAT = 'OpenAI-compatible embedder';

class HttpEmbedder implements OpenAICompatibleEmbedder {
  readonly profile: OpenAICompatibleEmbeddingProfile;
  readonly #transport: Transport;
  readonly #model: string;
  readonly #sendDimensions: boolean;
  readonly #batchSize: number;

  constructor(config: OpenAICompatibleEmbedderConfig) {
    const parsed = embedderConfigSchema().safeParse(config);
    if (!parsed.success) throw configErrorFrom(parsed.error, WHAT);
    this.#transport = createTransport(config, 'embeddings', 'embeddings', DEFAULT_TIMEOUT_MS, WHAT);
    this.#model = parsed.data.model;
    this.#sendDimensions = parsed.data.sendDimensions ?? false;
    this.#batchSize = parsed.data.batchSize ?? DEFAULT_BATCH_SIZE;
    this.profile = Object.freeze({
      id: parsed.data.profileId ?? `openai-compatible:${parsed.data.model}`,
      dimensions: parsed.data.dimensions,
    });
  }

  async embed(texts: readonly string[], options: OpenAICompatibleEmbedOptions = {}): Promise<Float32Array[]> {
    const vectors: Float32Array[] = [];
    for (let start = 0; start < texts.length; start += this.#batchSize) {
      const batch = texts.slice(start, start + this.#batchSize);
      vectors.push(...(await this.#embedBatch(batch, options.signal)));
    }
    return vectors;
  }

  async #embedBatch(batch: readonly string[], signal: AbortSignal | undefined): Promise<Float32Array[]> {
    const transport = this.#transport;
    const { dimensions } = this.profile;
    const payload = {
      model: this.#model,
      input: batch,
      ...(this.#sendDimensions ? { dimensions } : {}),
    };
    const { json, attempts } = await postJson(transport, payload, signal);
    const parsed = embeddingsResponseSchema().safeParse(json);
    if (!parsed.success)
      throw malformedFrom(transport, attempts, parsed.error, 'a body that is not an embeddings list');
    const { data } = parsed.data;
    if (data.length !== batch.length) {
      throw malformed(transport, attempts, `${data.length} embeddings for ${batch.length} inputs`);
    }
    const out: (Float32Array | undefined)[] = new Array(batch.length).fill(undefined);
    for (const item of data) {
      if (item.index >= batch.length || out[item.index] !== undefined) {
        throw malformed(transport, attempts, 'embedding indexes that are duplicated or out of range');
      }
      if (item.embedding.length !== dimensions) {
        throw new EngramProviderError(
          'ENGRAM_PROVIDER_DIMENSIONS',
          `The provider's embeddings endpoint returned vectors of ${item.embedding.length} dimensions; ${dimensions} are configured.`,
          {
            operation: 'embeddings',
            attempts,
            expectedDimensions: dimensions,
            receivedDimensions: item.embedding.length,
          },
        );
      }
      const vector = Float32Array.from(item.embedding);
      // A finite double can still overflow float32; such a vector is unusable for cosine distance.
      if (!vector.every(Number.isFinite)) {
        throw malformed(transport, attempts, 'vector components outside the float32 range');
      }
      out[item.index] = vector;
    }
    return out as Float32Array[];
  }
}

/**
 * Creates an embedder that calls `POST {baseUrl}/embeddings` of OpenAI, Ollama, vLLM, LM Studio or any compatible server.
 *
 * Throws `ENGRAM_PROVIDER_CONFIG` synchronously on invalid settings (the message names the setting, never its value).
 */
export function createOpenAICompatibleEmbedder(
  config: OpenAICompatibleEmbedderConfig,
): OpenAICompatibleEmbedder {
  return new HttpEmbedder(config);
}
