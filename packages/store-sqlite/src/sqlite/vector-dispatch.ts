/**
 * The vector worker (option `vectorWorker`): the k-NN of `searchVector` on a worker thread with its own
 * read-only connection to the store's file, so that a hybrid search's vector arm runs while the FTS arm runs on
 * the store's connection. Started lazily (the first search, like every search until the thread is
 * ready, runs on the store's connection; the thread starts with the second search, so a one-shot process never
 * starts it), unref'd while idle (it never keeps a process alive), closed by
 * `close()` after answering the requests already posted. A worker that fails or exits degrades to the store's
 * connection, never to a failed or changed search: its requests run there, it is restarted lazily up to
 * {@link MAX_RESTARTS} times, then it stays off. While the store's connection is inside a transaction the k-NN
 * runs there (the worker could not see the transaction's writes).
 *
 * Where each k-NN runs is chosen per request: an agent's k-NN is searched on the store's connection, without the thread, when its vectors are too few for the worker to pay
 * for its round trip (see {@link WORKER_MIN_SCAN_BYTES}).
 */
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { VectorHit } from '@engram/store/port-kit';
import type { StoreContext } from './context.js';
import type { VectorOffload, VectorPlan } from './search-vector.js';
import { PartitionSizes, WORKER_MIN_SCAN_BYTES } from './vector-partition.js';
import { searchIndex } from './vector-quant.js';
import type { VectorWorkerData, VectorWorkerReply } from './vector-worker.js';

/** How many times a worker that failed is started again before the store stays on its own connection. */
export const MAX_RESTARTS = 3;

/** What the worker is opened with: the store's file, its connection settings and, when encrypted, its key. */
export interface VectorWorkerOptions {
  readonly path: string;
  readonly busyTimeoutMs: number;
  readonly mmapSize: number;
  readonly vectorExtensionPath: string | undefined;
  /** The passphrase bytes (a private copy, zero-filled by `close()` or a later `rekeyed`). */
  readonly key: Buffer | undefined;
}

/** The state of a store's vector worker, for tests and tools (`@engram/store/raw`). */
export interface VectorWorkerProbe {
  /** `off`: not used (the option, `:memory:`, or failed too often); `idle`: not started; `starting`; `ready`. */
  readonly state: 'off' | 'idle' | 'starting' | 'ready';
  /** k-NN requests the worker answered. */
  readonly answered: number;
  /** Requests the worker did not answer, run on the store's connection instead. */
  readonly fallbacks: number;
  /** Workers that failed or exited unasked. */
  readonly failures: number;
  /** k-NN run on the store's connection because the agent's partition is small (see `WORKER_MIN_SCAN_BYTES`). */
  readonly local: number;
  /** Sets the fewest bytes of vectors a partition holds for its k-NN to go to the worker (0: every k-NN). */
  setMinScanBytes(bytes: number): void;
  /** Workers replaced because a request waited past its deadline (see `HANG_BASE_MS`). */
  readonly hangs: number;
  /** Sets every request's deadline in ms (tests), or null for the default derived from the partition's size. */
  setDeadlineMs(ms: number | null): void;
  /**
   * Makes the running thread hold (answer nothing) until the returned function is called, as a hung thread
   * would; requests posted meanwhile wait behind it.
   */
  hold(): () => void;
  /** Ends the worker thread as a crash would (its pending requests fall back). */
  crash(): Promise<void>;
}

type Pending = {
  readonly resolve: (hits: VectorHit[]) => void;
  readonly reject: () => void;
  /** When the request counts as hung (`performance.now()` time). */
  readonly deadline: number;
};

/**
 * How long a request may wait for the worker's answer before the worker counts as hung: a fixed 10 s, plus
 * 10 ns per byte of vectors the k-NN scans (about twenty times the rate measured on a 2-core machine, 0.45 ns
 * a byte at 1,536-d, 1.1 at 128-d). A hung thread's requests then run on the store's connection and the
 * thread is replaced (counted as a failure). Generous on purpose: a k-NN that is merely slow (a loaded
 * machine, a big partition) must never be run twice. At most {@link HANG_MAX_MS}.
 */
export const HANG_BASE_MS = 10_000;
/** The longest deadline (10 minutes), whatever the partition's size. */
const HANG_MAX_MS = 600_000;

const HANG_NS_PER_BYTE = 10;

/** The hits of a reply's columns: the objects `runVectorPlan` built on the worker, key for key. */
function hitsOf(reply: Extract<VectorWorkerReply, { ok: true }>): VectorHit[] {
  const { ids, distances, chunks } = reply;
  const hits: VectorHit[] = new Array(ids.length);
  for (let i = 0; i < ids.length; i += 1) {
    const distance = distances[i] as number;
    const chunk = chunks?.[i];
    hits[i] =
      chunk === undefined
        ? { id: ids[i] as string, distance, similarity: 1 - distance }
        : { id: ids[i] as string, distance, similarity: 1 - distance, chunk };
  }
  return hits;
}

/** Where the worker's compiled entry is: next to this module, or, when this runs from source, in `dist/`. */
function workerUrl(): URL {
  const here = new URL('./vector-worker.js', import.meta.url);
  if (existsSync(fileURLToPath(here))) return here;
  return new URL('../../dist/sqlite/vector-worker.js', import.meta.url);
}

/** True when the option's default (on) applies on this machine: a second core for the thread. */
export function defaultVectorWorker(): boolean {
  return availableParallelism() >= 2;
}

/** One store's vector worker: the offload `searchVector` is given, and its lifecycle. */
export class VectorWorker {
  readonly #ctx: StoreContext;
  readonly #options: VectorWorkerOptions;
  #key: Buffer | undefined;
  #worker: Worker | null = null;
  #ready = false;
  #off = false;
  #closed = false;
  #pending = new Map<number, Pending>();
  #nextId = 0;
  #answered = 0;
  #fallbacks = 0;
  #failures = 0;
  #local = 0;
  #hangs = 0;
  /** The deadline of every request, when set (tests); otherwise derived from the partition's size. */
  #deadlineMs: number | null = null;
  /** One timer for all pending requests: armed for the earliest deadline, checked when it fires. */
  #watchdog: ReturnType<typeof setTimeout> | null = null;
  #minScanBytes = WORKER_MIN_SCAN_BYTES;
  /** Per agent: the capacity of its vec0 chunks, and how many more searches may use it before it is counted again. */
  readonly #sizes = new PartitionSizes();
  #stopping: Promise<void> | null = null;
  /** True once a search ran: the thread starts with the next one. */
  #seen = false;
  /** The running thread's start-up flag (see `VectorWorkerData.state`). */
  #state: Int32Array | null = null;

  constructor(ctx: StoreContext, options: VectorWorkerOptions) {
    this.#ctx = ctx;
    this.#options = options;
    this.#key = options.key;
  }

  /** The offload of `searchVector`: a worker's answer, or undefined to run on the store's connection. */
  readonly offload: VectorOffload = (ctx: StoreContext, plan: VectorPlan) => {
    if (this.#closed || this.#off || this.#stopping !== null || ctx.db.inTransaction) return undefined;
    const bytes = this.#sizes.scanBytes(ctx, plan.agentId, this.#minScanBytes, plan.k, plan.scope !== null);
    if (bytes.estimate < this.#minScanBytes) {
      this.#local += 1;
      return undefined;
    }
    const worker = this.#worker;
    if (worker === null) {
      // A one-shot process (a CLI search) never pays for a thread: it starts with the second search.
      if (this.#seen) this.#start();
      this.#seen = true;
      return undefined;
    }
    if (!this.#ready) {
      // The thread's `ready` message needs the event loop; a caller whose searches never yield to it (each
      // awaits only settled promises) would never see it, so the shared flag is read directly.
      if (this.#state === null || Atomics.load(this.#state, 0) !== 1) return undefined;
      this.#ready = true;
    }
    this.#nextId += 1;
    const id = this.#nextId;
    return new Promise<VectorHit[]>((resolve, reject) => {
      if (this.#pending.size === 0) worker.ref();
      const wait =
        this.#deadlineMs ?? Math.min(HANG_MAX_MS, HANG_BASE_MS + (bytes.bound * HANG_NS_PER_BYTE) / 1e6);
      this.#pending.set(id, {
        resolve,
        reject: () => {
          this.#fallbacks += 1;
          reject(new Error('vector worker request failed'));
        },
        deadline: performance.now() + wait,
      });
      this.#arm();
      try {
        worker.postMessage({ id, plan, index: searchIndex(ctx) });
      } catch {
        this.#settle(id)?.reject();
      }
    });
  };

  get probe(): VectorWorkerProbe {
    const state =
      this.#off || this.#closed ? 'off' : this.#worker === null ? 'idle' : this.#ready ? 'ready' : 'starting';
    return {
      state,
      answered: this.#answered,
      fallbacks: this.#fallbacks,
      failures: this.#failures,
      local: this.#local,
      hangs: this.#hangs,
      setDeadlineMs: (ms: number | null) => {
        this.#deadlineMs = ms;
      },
      hold: () => {
        const flag = new Int32Array(new SharedArrayBuffer(4));
        try {
          this.#worker?.postMessage({ hold: flag.buffer });
        } catch {
          // No thread to hold.
        }
        return () => {
          Atomics.store(flag, 0, 1);
          Atomics.notify(flag, 0);
        };
      },
      setMinScanBytes: (bytes: number) => {
        this.#minScanBytes = bytes;
      },
      crash: async () => {
        const worker = this.#worker;
        if (worker !== null) await worker.terminate();
      },
    };
  }

  /** Arms the watchdog for the earliest pending deadline, unless it is armed (it re-arms itself when it fires). */
  #arm(): void {
    if (this.#watchdog !== null || this.#pending.size === 0) return;
    let earliest = Number.POSITIVE_INFINITY;
    for (const p of this.#pending.values()) if (p.deadline < earliest) earliest = p.deadline;
    const timer = setTimeout(() => this.#check(), Math.max(0, earliest - performance.now()));
    // Never keeps a process alive (a pending request refs the worker itself).
    timer.unref();
    this.#watchdog = timer;
  }

  /** The watchdog fired: a request past its deadline means a hung thread, replaced like a failed one. */
  #check(): void {
    this.#watchdog = null;
    const now = performance.now();
    for (const p of this.#pending.values()) {
      if (p.deadline <= now) {
        this.#hangs += 1;
        this.#failed();
        return;
      }
    }
    this.#arm();
  }

  /** Replays the worker's statement counts on the store's observer, then resolves the request. */
  #reply(reply: VectorWorkerReply): void {
    const pending = this.#settle(reply.id);
    if (pending === undefined) return;
    if (!reply.ok) {
      pending.reject();
      return;
    }
    for (const kind of reply.kinds) this.#ctx.count(kind);
    this.#answered += 1;
    pending.resolve(hitsOf(reply));
  }

  #settle(id: number): Pending | undefined {
    const pending = this.#pending.get(id);
    if (pending === undefined) return undefined;
    this.#pending.delete(id);
    if (this.#pending.size === 0) this.#worker?.unref();
    return pending;
  }

  #start(): void {
    const { path, busyTimeoutMs, mmapSize, vectorExtensionPath } = this.#options;
    const key = this.#key;
    const data: VectorWorkerData = {
      path,
      busyTimeoutMs,
      mmapSize,
      vectorExtensionPath,
      key: key === undefined ? undefined : new Uint8Array(key),
      state: new SharedArrayBuffer(4),
    };
    let worker: Worker;
    try {
      // No inherited flags: the process's own (`--input-type`, a loader, …) may not apply to a worker.
      worker = new Worker(workerUrl(), { workerData: data, execArgv: [] });
    } catch {
      this.#failed();
      return;
    } finally {
      // The clone the thread got is its own; this copy is not needed any more.
      data.key?.fill(0);
    }
    this.#worker = worker;
    this.#ready = false;
    this.#state = new Int32Array(data.state);
    worker.on('message', (m: VectorWorkerReply | { readonly ready: true } | { readonly failed: true }) => {
      if (worker !== this.#worker) return;
      if ('ready' in m) this.#ready = true;
      else if ('failed' in m) this.#failed();
      else this.#reply(m);
    });
    // The error event carries the thread's error: it is dropped (it may hold query text or paths).
    worker.on('error', () => {
      if (worker === this.#worker) this.#failed();
    });
    worker.on('exit', () => {
      if (worker === this.#worker) this.#failed();
    });
    // After the listeners: adding a `message` listener refs the worker again.
    worker.unref();
  }

  /** The worker failed or exited unasked: its requests fall back; a later search starts a new one, or not. */
  #failed(): void {
    const worker = this.#worker;
    this.#worker = null;
    this.#ready = false;
    this.#failures += 1;
    if (this.#failures > MAX_RESTARTS) this.#off = true;
    this.#rejectAll();
    if (worker !== null) void worker.terminate().catch(() => undefined);
  }

  #rejectAll(): void {
    const pending = [...this.#pending.values()];
    this.#pending.clear();
    for (const p of pending) p.reject();
  }

  /**
   * Ends the worker after the requests already posted are answered, and resolves once the thread has exited
   * (its connection closed). A later search starts a new one unless the store is closed.
   */
  stop(): Promise<void> {
    const worker = this.#worker;
    if (worker === null) return Promise.resolve();
    if (this.#stopping !== null) return this.#stopping;
    this.#worker = null;
    this.#ready = false;
    const stopped = new Promise<void>((resolve) => {
      worker.on('exit', () => resolve());
      worker.on('message', (m: VectorWorkerReply | { readonly ready: true } | { readonly failed: true }) => {
        if (!('ready' in m) && !('failed' in m)) this.#reply(m);
      });
    });
    // Adding listeners refs the worker: unref'd again unless requests are waiting for their answers.
    if (this.#pending.size === 0) worker.unref();
    try {
      worker.postMessage({ close: true });
    } catch {
      void worker.terminate().catch(() => undefined);
    }
    this.#stopping = stopped.finally(() => {
      this.#stopping = null;
      this.#rejectAll();
    });
    return this.#stopping;
  }

  /** Closes for good (the store's `close()`): stops the thread without waiting and forgets the key. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    void this.stop();
    this.#key?.fill(0);
  }

  /** After a key rotation (the worker was stopped first): the next worker opens the file with `key`. */
  rekeyed(key: Buffer): void {
    this.#key?.fill(0);
    this.#key = key;
  }
}
