import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import {
  DEFAULT_USE_BATCH_SIZE,
  MAX_USE_BATCH_SIZE,
  USE_LITE_PROFILE,
  type UseEmbedOptions,
  type UseLiteProfile,
} from './embedder.js';
import {
  abortError,
  ENGRAM_EMBEDDER_USE_ERROR_CODES,
  EngramEmbedderUseError,
  type EngramEmbedderUseErrorCode,
} from './errors.js';
import { MAX_RAW_INPUT_UNITS } from './input.js';
import { USE_DIMENSIONS, type UseBackend } from './model.js';
import type { UseWorkerData, UseWorkerReply, UseWorkerRequest } from './use-worker.js';

/** Most worker threads of one pool. */
export const MAX_USE_THREADS = 64;

/** Characters of text per batch unless configured (32 sentences of about 80 characters; 8 long chunks). */
export const DEFAULT_USE_BATCH_CHARS = 8_192;

/**
 * The characters one text counts for in a batch's budget: its length, at most 1,024 (about what the model reads:
 * it stops at 128 tokens), at least 16 (a tiny text still costs a row).
 */
export function textCost(text: string): number {
  return Math.max(16, Math.min(text.length, 1_024));
}

/** Worker threads by default: the machine's cores less one (for the caller's own thread), at least one. */
export function defaultUseThreads(): number {
  return Math.max(1, Math.min(MAX_USE_THREADS, availableParallelism() - 1));
}

/** Construction options of {@link UseEmbedderPool}. */
export interface UseEmbedderPoolConfig {
  /** Worker threads, each with its own model instance (default: cores less one, at least 1; at most 64). */
  readonly threads?: number;
  /** TensorFlow.js backend of every worker (default `'wasm'`). Each worker has its own engine. */
  readonly backend?: UseBackend;
  /** Most texts per batch, 1–128 (default 32). */
  readonly maxBatchSize?: number;
  /** Characters per batch (each text counts for its length, 16–1,024; default 8,192, at least 1,024). */
  readonly maxBatchChars?: number;
  /** Folder with `model.json`, the weight shards and `vocab.json` (default: the model package). */
  readonly modelDirectory?: string;
}

/** Per-call options of {@link UseEmbedderPool.embed}. */
export interface UsePoolEmbedOptions extends UseEmbedOptions {
  /** Queue ahead of other calls (a search query): it waits for at most one running batch per worker. */
  readonly urgent?: boolean;
}

/** One call of `embed`: its vectors so far and how to settle it. */
interface Call {
  readonly vectors: Float32Array[];
  remaining: number;
  settled: boolean;
  readonly resolve: (vectors: Float32Array[]) => void;
  readonly reject: (error: unknown) => void;
  readonly detach: () => void;
}

/** One text waiting for a worker. */
interface Item {
  readonly call: Call;
  readonly index: number;
  readonly text: string;
  readonly cost: number;
}

/** A worker thread and the request it is running. */
interface Slot {
  readonly worker: Worker;
  task: Task | null;
  dead: boolean;
  /** The model load sent to this worker (kept once done; cleared when it failed, so a later load retries). */
  loading: Promise<void> | null;
}

type Task =
  | { readonly kind: 'load'; readonly done: (error: unknown) => void }
  | { readonly kind: 'embed'; readonly items: readonly Item[] };

function invalidConfig(message: string): EngramEmbedderUseError {
  return new EngramEmbedderUseError('ENGRAM_EMBEDDER_USE_INVALID_CONFIG', message);
}

function intIn(name: string, value: number, min: number, max: number): number {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw invalidConfig(`${name} must be an integer from ${min} to ${max}.`);
  }
  return value;
}

function workerFailed(): EngramEmbedderUseError {
  return new EngramEmbedderUseError(
    'ENGRAM_EMBEDDER_USE_WORKER_FAILED',
    'An embedding worker thread stopped before it answered; the batch was not embedded.',
  );
}

function closedError(): EngramEmbedderUseError {
  return new EngramEmbedderUseError('ENGRAM_EMBEDDER_USE_CLOSED', 'The embedder pool is closed.');
}

const CODES: ReadonlySet<string> = new Set(ENGRAM_EMBEDDER_USE_ERROR_CODES);

/** The worker's error as this package's error (its code and the package's own message). */
function fromReply(code: string, message: string): EngramEmbedderUseError {
  return CODES.has(code)
    ? new EngramEmbedderUseError(code as EngramEmbedderUseErrorCode, message)
    : new EngramEmbedderUseError(
        'ENGRAM_EMBEDDER_USE_INFERENCE_FAILED',
        'The model failed to embed a batch.',
      );
}

/** The compiled worker entry: next to this module in `dist`, or `dist` of the package when run from `src`. */
function workerEntry(): URL {
  const here = new URL('./use-worker.js', import.meta.url);
  if (existsSync(fileURLToPath(here))) return here;
  return new URL('../dist/use-worker.js', import.meta.url);
}

/** The workers of live pools, for tests that stop one mid-batch (not exported from the package). */
const slotsOf = new WeakMap<UseEmbedderPool, () => readonly Worker[]>();

/** The running worker threads of `pool` (internal; for tests). */
export function poolWorkers(pool: UseEmbedderPool): readonly Worker[] {
  return slotsOf.get(pool)?.() ?? [];
}

/**
 * The `use-lite-512-v1` embedder on worker threads: each worker loads its own model instance and embeds one
 * batch at a time; the caller's thread only queues texts and copies vectors. Same vectors as
 * {@link UseEmbedder} (within 1e-5, as batched and one-by-one agree), in input order.
 *
 * Batching: every call's texts join one queue, sorted by length within the call. A free worker takes the next
 * batch from the queue: at most `maxBatchSize` texts and `maxBatchChars` characters, and no more than its share
 * when several workers are free. Calls that arrive while the workers are busy are coalesced into the next
 * batches, so sixteen concurrent one-text calls cost a couple of model calls, not sixteen. `urgent` calls (a
 * search query) are queued first.
 *
 * Failures: a worker that crashes or is stopped fails the calls of its batch with
 * `ENGRAM_EMBEDDER_USE_WORKER_FAILED` (their other texts are not embedded either) and is replaced by a new one
 * on the next batch. Workers never keep the process alive (they are unreferenced while idle) and `close()`
 * stops them. Nothing is downloaded: each worker reads the model from the installed package.
 */
export class UseEmbedderPool {
  /** The embedding profile (id and dimensions), the same as the single-thread embedder's. */
  readonly profile: UseLiteProfile = USE_LITE_PROFILE;
  /** Worker threads this pool runs at most. */
  readonly threads: number;
  /** The TensorFlow.js backend of the workers. */
  readonly backend: UseBackend;
  /** Most texts per batch. */
  readonly maxBatchSize: number;
  /** Characters per batch. */
  readonly maxBatchChars: number;
  readonly #data: UseWorkerData;
  readonly #slots: Slot[] = [];
  readonly #urgent: Item[] = [];
  readonly #normal: Item[] = [];
  readonly #pending = new Map<number, Slot>();
  #nextId = 1;
  #pumpScheduled = false;
  #closed = false;

  constructor(config: UseEmbedderPoolConfig = {}) {
    const backend = config.backend ?? 'wasm';
    if (backend !== 'wasm' && backend !== 'cpu') throw invalidConfig('backend must be "wasm" or "cpu".');
    this.threads = intIn('threads', config.threads ?? defaultUseThreads(), 1, MAX_USE_THREADS);
    this.maxBatchSize = intIn(
      'maxBatchSize',
      config.maxBatchSize ?? DEFAULT_USE_BATCH_SIZE,
      1,
      MAX_USE_BATCH_SIZE,
    );
    this.maxBatchChars = intIn(
      'maxBatchChars',
      config.maxBatchChars ?? DEFAULT_USE_BATCH_CHARS,
      1_024,
      1_048_576,
    );
    if (
      config.modelDirectory !== undefined &&
      (typeof config.modelDirectory !== 'string' || config.modelDirectory === '')
    ) {
      throw invalidConfig('modelDirectory must be a non-empty path.');
    }
    this.backend = backend;
    this.#data = {
      backend,
      ...(config.modelDirectory === undefined ? {} : { modelDirectory: config.modelDirectory }),
    };
    slotsOf.set(this, () => this.#slots.filter((s) => !s.dead).map((s) => s.worker));
  }

  /** Worker threads running now (started on first use, up to `threads`). */
  get running(): number {
    return this.#slots.filter((s) => !s.dead).length;
  }

  /**
   * Starts `threads` workers (default: all of them) and loads their models, each with one warm-up inference, so
   * the first batches do not pay for it; the others start when batches wait for them. Rejects with the first
   * worker's error (`MODEL_LOAD_FAILED`, `WORKER_FAILED`); an abort stops the wait, not the loads.
   */
  async load(options: UseEmbedOptions & { readonly threads?: number } = {}): Promise<void> {
    const { signal } = options;
    if (signal?.aborted === true) throw abortError(signal);
    if (this.#closed) throw closedError();
    const wanted = Math.min(this.threads, Math.max(1, Math.floor(options.threads ?? this.threads)));
    while (this.#slots.length < wanted) this.#spawn();
    const loads = this.#slots.slice(0, wanted).map((slot) => {
      if (slot.loading !== null) return slot.loading;
      // Busy with a batch: that batch loads its model.
      if (slot.task !== null) return Promise.resolve();
      const loading = new Promise<void>((resolve, reject) => {
        const done = (error: unknown): void => (error === null ? resolve() : reject(error));
        this.#send(slot, { kind: 'load', done });
      });
      slot.loading = loading;
      loading.catch(() => {
        slot.loading = null;
      });
      return loading;
    });
    const all = Promise.all(loads).then(() => undefined);
    if (signal === undefined) return all;
    return new Promise<void>((resolve, reject) => {
      const onAbort = (): void => reject(abortError(signal));
      signal.addEventListener('abort', onAbort, { once: true });
      all.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
    });
  }

  /** Embeds texts, one unit vector (or the zero vector for a blank text) per text in the same order. */
  embed(texts: readonly string[], options: UsePoolEmbedOptions = {}): Promise<Float32Array[]> {
    const { signal } = options;
    if (signal?.aborted === true) return Promise.reject(abortError(signal));
    if (!Array.isArray(texts) || texts.some((text) => typeof text !== 'string')) {
      return Promise.reject(
        new EngramEmbedderUseError('ENGRAM_EMBEDDER_USE_INVALID_INPUT', 'Expected an array of strings.'),
      );
    }
    if (this.#closed) return Promise.reject(closedError());
    const vectors: Float32Array[] = texts.map(() => new Float32Array(USE_DIMENSIONS));
    const blank = /^\s*$/u;
    const order = texts
      .map((text, index) => ({ text, index }))
      .filter((entry) => !blank.test(entry.text))
      .sort((a, b) => a.text.length - b.text.length || a.index - b.index);
    if (order.length === 0) return Promise.resolve(vectors);
    return new Promise<Float32Array[]>((resolve, reject) => {
      const onAbort = (): void => {
        if (signal !== undefined) this.#fail(call, abortError(signal));
      };
      const call: Call = {
        vectors,
        remaining: order.length,
        settled: false,
        resolve,
        reject,
        detach: () => signal?.removeEventListener('abort', onAbort),
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      const lane = options.urgent === true ? this.#urgent : this.#normal;
      for (const { text, index } of order) {
        // The worker cuts the same way (input preparation); sending less saves copying a huge text.
        const sent = text.length > MAX_RAW_INPUT_UNITS ? text.slice(0, MAX_RAW_INPUT_UNITS + 1) : text;
        lane.push({ call, index, text: sent, cost: textCost(text) });
      }
      this.#schedule();
    });
  }

  /** Stops every worker; waiting and running calls reject with `ENGRAM_EMBEDDER_USE_CLOSED`. Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const error = closedError();
    for (const item of [...this.#urgent, ...this.#normal]) this.#fail(item.call, error);
    this.#urgent.length = 0;
    this.#normal.length = 0;
    const slots = this.#slots.splice(0);
    for (const slot of slots) {
      slot.dead = true;
      this.#finish(slot, error);
    }
    this.#pending.clear();
    await Promise.all(slots.map((slot) => slot.worker.terminate().catch(() => undefined)));
  }

  /** Settles `call` with `error` unless it is settled; its queued texts are dropped when batches are taken. */
  #fail(call: Call, error: unknown): void {
    if (call.settled) return;
    call.settled = true;
    call.detach();
    call.reject(error);
  }

  #schedule(): void {
    if (this.#pumpScheduled) return;
    this.#pumpScheduled = true;
    // Calls made in the same turn of the event loop (concurrent adds) are batched together.
    setImmediate(() => {
      this.#pumpScheduled = false;
      this.#pump();
    });
  }

  #queued(): number {
    return this.#urgent.length + this.#normal.length;
  }

  #pump(): void {
    if (this.#closed) return;
    for (const lane of [this.#urgent, this.#normal]) {
      // Texts of settled calls (aborted, failed) are dropped.
      for (let i = lane.length - 1; i >= 0; i -= 1) if ((lane[i] as Item).call.settled) lane.splice(i, 1);
    }
    while (this.#queued() > 0) {
      let idle = this.#slots.filter((s) => s.task === null && !s.dead);
      if (idle.length === 0) {
        if (this.#slots.length >= this.threads) return;
        idle = [this.#spawn()];
      }
      // Free workers share the queue: each takes its part, so one call of many texts runs on all of them.
      const free = idle.length + Math.max(0, this.threads - this.#slots.length);
      const share = Math.ceil(this.#queued() / free);
      const slot = idle[0] as Slot;
      this.#send(slot, { kind: 'embed', items: this.#take(Math.min(this.maxBatchSize, share)) });
    }
  }

  /** The next batch: urgent texts first, at most `count` texts and `maxBatchChars` characters (at least one). */
  #take(count: number): Item[] {
    const batch: Item[] = [];
    let chars = 0;
    for (const lane of [this.#urgent, this.#normal]) {
      while (lane.length > 0 && batch.length < count) {
        const next = lane[0] as Item;
        if (batch.length > 0 && chars + next.cost > this.maxBatchChars) return batch;
        lane.shift();
        batch.push(next);
        chars += next.cost;
      }
    }
    return batch;
  }

  #spawn(): Slot {
    // No flags of the caller's process (`--input-type`, loaders): the worker runs compiled JavaScript only.
    const worker = new Worker(workerEntry(), { workerData: this.#data, execArgv: [] });
    // Idle workers never keep the process alive; a worker running a request is referenced until it answers.
    worker.unref();
    const slot: Slot = { worker, task: null, dead: false, loading: null };
    this.#slots.push(slot);
    worker.on('message', (reply: UseWorkerReply) => this.#onReply(slot, reply));
    const lost = (): void => {
      if (slot.dead) return;
      slot.dead = true;
      const at = this.#slots.indexOf(slot);
      if (at >= 0) this.#slots.splice(at, 1);
      this.#finish(slot, workerFailed());
      void worker.terminate().catch(() => undefined);
      // A new worker takes the queue's next batch.
      if (this.#queued() > 0) this.#schedule();
    };
    worker.on('error', lost);
    worker.on('exit', lost);
    worker.on('messageerror', lost);
    return slot;
  }

  #send(slot: Slot, task: Task): void {
    const id = this.#nextId;
    this.#nextId += 1;
    slot.task = task;
    this.#pending.set(id, slot);
    slot.worker.ref();
    const request: UseWorkerRequest =
      task.kind === 'load'
        ? { id, kind: 'load' }
        : { id, kind: 'embed', texts: task.items.map((i) => i.text) };
    slot.worker.postMessage(request);
  }

  /** Ends the slot's task: with `error`, or with the vectors of a reply. */
  #finish(slot: Slot, error: unknown, vectors?: Float32Array): void {
    const task = slot.task;
    slot.task = null;
    for (const [id, owner] of this.#pending) if (owner === slot) this.#pending.delete(id);
    if (!slot.dead) slot.worker.unref();
    if (task === null) return;
    if (task.kind === 'load') {
      task.done(error);
      return;
    }
    task.items.forEach((item, row) => {
      const { call } = item;
      if (call.settled) return;
      if (vectors === undefined || vectors.length !== task.items.length * USE_DIMENSIONS) {
        this.#fail(call, error ?? workerFailed());
        return;
      }
      call.vectors[item.index] = vectors.slice(row * USE_DIMENSIONS, (row + 1) * USE_DIMENSIONS);
      call.remaining -= 1;
      if (call.remaining === 0) {
        call.settled = true;
        call.detach();
        call.resolve(call.vectors);
      }
    });
  }

  #onReply(slot: Slot, reply: UseWorkerReply): void {
    if (this.#pending.get(reply.id) !== slot) return;
    if (reply.ok) this.#finish(slot, null, reply.vectors);
    else this.#finish(slot, fromReply(reply.code, reply.message));
    this.#pump();
  }
}

/** Creates a {@link UseEmbedderPool}; throws `ENGRAM_EMBEDDER_USE_INVALID_CONFIG` on a bad option. Starts nothing. */
export function createUseEmbedderPool(config: UseEmbedderPoolConfig = {}): UseEmbedderPool {
  return new UseEmbedderPool(config);
}
