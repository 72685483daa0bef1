import { EngramLocalModelError, invalidConfig, throwIfAborted } from './errors.js';
import { checkSource, type LocalModelSource, withModel } from './loader.js';

/** Construction settings of {@link createLocalReranker}. */
export interface LocalRerankerConfig extends LocalModelSource {
  /** Most (query, document) pairs per inference (default 16). */
  readonly batchSize?: number;
  /** Tokens per pair; longer pairs are truncated (default 512). */
  readonly maxLength?: number;
}

/** Per-call options of {@link LocalReranker.rerank}. */
export interface LocalRerankOptions {
  /** Checked between batches; an aborted call rejects with `ENGRAM_LOCAL_MODEL_ABORTED` (`AbortError`). */
  readonly signal?: AbortSignal;
}

/**
 * A cross-encoder run locally (structurally the retriever's `Reranker`): `rerank` resolves with one score per
 * document in their order — the model's relevance logit (the last label's for a model with several) — or
 * rejects with an `EngramLocalModelError`. The model loads on the first call (or `load()`), offline unless
 * `allowDownload`.
 */
export interface LocalReranker {
  /** `local:<model>`, for reports. */
  readonly id: string;
  rerank(query: string, documents: readonly string[], options?: LocalRerankOptions): Promise<number[]>;
  /** Loads the model now (later calls share it); rejects like a first `rerank` would. */
  load(): Promise<void>;
}

const WHAT = 'local reranker';

interface Loaded {
  readonly tokenizer: (text: string[], options: Record<string, unknown>) => Record<string, unknown>;
  readonly model: (
    inputs: Record<string, unknown>,
  ) => Promise<{ logits: { dims: number[]; data: ArrayLike<number> } }>;
}

function positiveInt(value: number | undefined, fallback: number, setting: string, max: number): number {
  const v = value ?? fallback;
  if (!Number.isInteger(v) || v < 1 || v > max)
    throw invalidConfig(WHAT, setting, `must be an integer in 1..${max}`);
  return v;
}

/**
 * Creates a cross-encoder reranker over a local ONNX model (e.g. `Xenova/ms-marco-MiniLM-L-6-v2`,
 * `jinaai/jina-reranker-v1-tiny-en`, `BAAI/bge-reranker-base` in their ONNX exports). Throws
 * `ENGRAM_LOCAL_MODEL_INVALID_CONFIG` naming the setting on invalid settings; loads nothing until used.
 */
export function createLocalReranker(config: LocalRerankerConfig): LocalReranker {
  checkSource(config, WHAT);
  const batchSize = positiveInt(config.batchSize, 16, 'batchSize', 1024);
  const maxLength = positiveInt(config.maxLength, 512, 'maxLength', 8192);
  let loading: Promise<Loaded> | undefined;
  const load = (): Promise<Loaded> => {
    loading ??= withModel(config, WHAT, async (t, id, options) => {
      const tokenizer = await t.AutoTokenizer.from_pretrained(id, options);
      const model = await t.AutoModelForSequenceClassification.from_pretrained(id, options);
      return {
        tokenizer: (text, opts) => tokenizer(text, opts) as Record<string, unknown>,
        model: (inputs) => model(inputs) as Promise<{ logits: { dims: number[]; data: ArrayLike<number> } }>,
      };
    });
    // A failed load is retried by the next call.
    loading.catch(() => {
      loading = undefined;
    });
    return loading;
  };

  const rerank = async (
    query: string,
    documents: readonly string[],
    options: LocalRerankOptions = {},
  ): Promise<number[]> => {
    const { signal } = options;
    throwIfAborted(signal, WHAT);
    if (documents.length === 0) return [];
    const loaded = await load();
    const scores: number[] = [];
    for (let start = 0; start < documents.length; start += batchSize) {
      throwIfAborted(signal, WHAT);
      const batch = documents.slice(start, start + batchSize);
      let logits: { dims: number[]; data: ArrayLike<number> };
      try {
        const inputs = loaded.tokenizer(
          batch.map(() => query),
          { text_pair: [...batch], padding: true, truncation: true, max_length: maxLength },
        );
        ({ logits } = await loaded.model(inputs));
      } catch {
        // The runtime's error may quote the input: none of it is kept.
        throw new EngramLocalModelError(
          'ENGRAM_LOCAL_MODEL_INFERENCE_FAILED',
          `The ${WHAT} failed to score a batch.`,
        );
      }
      const labels = logits.dims[1] ?? 1;
      for (let i = 0; i < batch.length; i += 1) {
        const score = Number(logits.data[i * labels + labels - 1]);
        if (!Number.isFinite(score)) {
          throw new EngramLocalModelError(
            'ENGRAM_LOCAL_MODEL_INFERENCE_FAILED',
            `The ${WHAT} gave a score that is not finite.`,
          );
        }
        scores.push(score);
      }
    }
    throwIfAborted(signal, WHAT);
    return scores;
  };

  return Object.freeze({
    id: `local:${config.model.trim()}`,
    rerank,
    load: async () => {
      await load();
    },
  });
}
