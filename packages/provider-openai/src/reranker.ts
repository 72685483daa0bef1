/**
 * A reranker served over HTTP by the `/rerank` endpoints of Cohere, Jina, Voyage, Hugging Face TEI and vLLM:
 * one POST per call, the transport's deadline, retries and typed, content-free errors.
 */
import { z } from 'zod';
import { malformed, malformedFrom, postJson } from './http.js';
import {
  configErrorFrom,
  createTransport,
  type OpenAICompatibleHttpConfig,
  once,
  type Transport,
} from './transport.js';

/**
 * The request shape of the server: `cohere` (Cohere, Jina, vLLM: `{ model, query, documents, top_n }`),
 * `voyage` (`{ model, query, documents, top_k }`) or `tei` (Hugging Face Text Embeddings Inference:
 * `{ query, texts }`). Every shape's answer is read: `{ results: [{ index, relevance_score }] }`,
 * `{ data: [...] }` or a bare array of `{ index, score }`.
 */
export type HttpRerankerFlavor = 'cohere' | 'voyage' | 'tei';

/** Construction settings of {@link createHttpReranker}. */
export interface HttpRerankerConfig extends OpenAICompatibleHttpConfig {
  /** The reranking model, e.g. `rerank-v3.5`, `jina-reranker-v2-base-multilingual`, `BAAI/bge-reranker-v2-m3`. */
  readonly model: string;
  /** The request shape (default `cohere`). */
  readonly flavor?: HttpRerankerFlavor;
  /** The endpoint path after `baseUrl` (default `rerank`). */
  readonly endpoint?: string;
  /** Most documents per call; more is `ENGRAM_PROVIDER_CONFIG`-free but split into sequential requests (default 100). */
  readonly batchSize?: number;
}

/** Per-call options of {@link HttpReranker.rerank}. */
export interface HttpRerankOptions {
  /** Aborts the call; it then rejects with `ENGRAM_PROVIDER_ABORTED` (`name === 'AbortError'`). */
  readonly signal?: AbortSignal;
}

/**
 * A reranker port served by a `/rerank` endpoint (structurally the retriever's `Reranker`).
 *
 * Contract: `rerank` resolves with one finite score per document, in the documents' order (the server's
 * relevance scores), or rejects with an `EngramProviderError`; it never resolves with partial output and never
 * throws synchronously. An empty input resolves with `[]` without a request. Only the query and the documents
 * are sent; errors never carry them.
 */
export interface HttpReranker {
  /** `rerank:<model>`, for reports. */
  readonly id: string;
  rerank(query: string, documents: readonly string[], options?: HttpRerankOptions): Promise<number[]>;
}

const rerankerConfigSchema = once(() =>
  z.object({
    model: z.string({ error: 'must be a string' }).trim().min(1, { error: 'must not be empty' }),
    flavor: z.enum(['cohere', 'voyage', 'tei'], { error: 'must be "cohere", "voyage" or "tei"' }).optional(),
    endpoint: z
      .string({ error: 'must be a string' })
      .regex(/^[A-Za-z0-9_\-/.]{1,200}$/, { error: 'must be a relative path such as "rerank"' })
      .refine((p) => !p.split('/').includes('..'), { error: 'must not contain ".."' })
      .optional(),
    batchSize: z
      .number({ error: 'must be a number' })
      .int({ error: 'must be an integer' })
      .min(1, { error: 'must be at least 1' })
      .max(1000, { error: 'must be at most 1000' })
      .optional(),
  }),
);

const scored = () =>
  z.array(
    z.object({
      index: z.number().int().min(0),
      relevance_score: z.number().optional(),
      score: z.number().optional(),
    }),
  );

const rerankResponseSchema = once(() =>
  z.union([scored(), z.object({ results: scored() }), z.object({ data: scored() })]),
);

const DEFAULT_TIMEOUT_MS = 10_000;
const DEFAULT_BATCH_SIZE = 100;
const WHAT = 'HTTP reranker';

class HttpRerankerImpl implements HttpReranker {
  readonly id: string;
  readonly #transport: Transport;
  readonly #model: string;
  readonly #flavor: HttpRerankerFlavor;
  readonly #batchSize: number;

  constructor(config: HttpRerankerConfig) {
    const parsed = rerankerConfigSchema().safeParse(config);
    if (!parsed.success) throw configErrorFrom(parsed.error, WHAT);
    const endpoint = (parsed.data.endpoint ?? 'rerank').replace(/^\/+/, '');
    this.#transport = createTransport(config, 'rerank', endpoint, DEFAULT_TIMEOUT_MS, WHAT);
    this.#model = parsed.data.model;
    this.#flavor = parsed.data.flavor ?? 'cohere';
    this.#batchSize = parsed.data.batchSize ?? DEFAULT_BATCH_SIZE;
    this.id = `rerank:${parsed.data.model}`;
  }

  async rerank(
    query: string,
    documents: readonly string[],
    options: HttpRerankOptions = {},
  ): Promise<number[]> {
    const scores: number[] = [];
    for (let start = 0; start < documents.length; start += this.#batchSize) {
      const batch = documents.slice(start, start + this.#batchSize);
      scores.push(...(await this.#rerankBatch(query, batch, options.signal)));
    }
    return scores;
  }

  #payload(query: string, batch: readonly string[]): Record<string, unknown> {
    switch (this.#flavor) {
      case 'tei':
        return { query, texts: batch };
      case 'voyage':
        return { model: this.#model, query, documents: batch, top_k: batch.length };
      default:
        return { model: this.#model, query, documents: batch, top_n: batch.length };
    }
  }

  async #rerankBatch(
    query: string,
    batch: readonly string[],
    signal: AbortSignal | undefined,
  ): Promise<number[]> {
    const transport = this.#transport;
    const { json, attempts } = await postJson(transport, this.#payload(query, batch), signal);
    const parsed = rerankResponseSchema().safeParse(json);
    if (!parsed.success)
      throw malformedFrom(transport, attempts, parsed.error, 'a body that is not a rerank list');
    const body = parsed.data;
    const items = Array.isArray(body) ? body : 'results' in body ? body.results : body.data;
    const out: (number | undefined)[] = new Array(batch.length).fill(undefined);
    for (const item of items) {
      const score = item.relevance_score ?? item.score;
      if (item.index >= batch.length || out[item.index] !== undefined) {
        throw malformed(transport, attempts, 'rerank indexes that are duplicated or out of range');
      }
      if (score === undefined || !Number.isFinite(score)) {
        throw malformed(transport, attempts, 'a rerank result without a finite score');
      }
      out[item.index] = score;
    }
    if (out.some((s) => s === undefined)) {
      throw malformed(transport, attempts, `${items.length} rerank scores for ${batch.length} documents`);
    }
    return out as number[];
  }
}

/**
 * Creates a reranker that calls `POST {baseUrl}/rerank` of Cohere, Jina, Voyage, Hugging Face TEI, vLLM or
 * any compatible server (see {@link HttpRerankerFlavor}).
 *
 * Throws `ENGRAM_PROVIDER_CONFIG` synchronously on invalid settings (the message names the setting, never its
 * value).
 */
export function createHttpReranker(config: HttpRerankerConfig): HttpReranker {
  return new HttpRerankerImpl(config);
}
