/**
 * The worker thread of {@link UseEmbedderPool}: one model instance of its own, fed batches of texts by the pool.
 * Never started directly. It answers each request with the same `id`: the vectors of a batch (one
 * `Float32Array` of `texts.length × 512` floats, its buffer transferred) or an error code and the package's
 * own message (never input text).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { UseEmbedder } from './embedder.js';
import { isEngramEmbedderUseError } from './errors.js';
import { USE_DIMENSIONS, type UseBackend } from './model.js';

/** What the pool passes to each worker at start. */
export interface UseWorkerData {
  readonly backend: UseBackend;
  readonly modelDirectory?: string;
}

/** A request of the pool: load the model, or embed one batch. */
export type UseWorkerRequest =
  | { readonly id: number; readonly kind: 'load' }
  | { readonly id: number; readonly kind: 'embed'; readonly texts: readonly string[] };

/** The answer to one request. */
export type UseWorkerReply =
  | { readonly id: number; readonly ok: true; readonly vectors: Float32Array }
  | { readonly id: number; readonly ok: false; readonly code: string; readonly message: string };

const port = parentPort;
if (port !== null) {
  const data = workerData as UseWorkerData;
  // One model call per batch: the pool sends at most 128 texts, grouped by length.
  const embedder = new UseEmbedder({
    backend: data.backend,
    maxBatchSize: 128,
    ...(data.modelDirectory === undefined ? {} : { modelDirectory: data.modelDirectory }),
  });
  port.on('message', (request: UseWorkerRequest) => {
    const work =
      request.kind === 'load'
        ? // The first inference after a load is slow too: one runs here, so the first real batch is not.
          embedder
            .load()
            .then(() => embedder.embed(['warm up']))
            .then(() => new Float32Array(0))
        : embedder.embed(request.texts).then((vectors) => {
            const out = new Float32Array(vectors.length * USE_DIMENSIONS);
            vectors.forEach((vector, row) => {
              out.set(vector, row * USE_DIMENSIONS);
            });
            return out;
          });
    work.then(
      (vectors) => {
        const reply: UseWorkerReply = { id: request.id, ok: true, vectors };
        port.postMessage(reply, [vectors.buffer]);
      },
      (error: unknown) => {
        const reply: UseWorkerReply = isEngramEmbedderUseError(error)
          ? { id: request.id, ok: false, code: error.code, message: error.message }
          : {
              id: request.id,
              ok: false,
              code: 'ENGRAM_EMBEDDER_USE_INFERENCE_FAILED',
              message: 'The model failed to embed a batch.',
            };
        port.postMessage(reply);
      },
    );
  });
}
