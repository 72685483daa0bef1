import { type MaintenanceObserver, noopMaintenanceObserver } from '@engram/contracts';
import type { Clock } from './clock.js';
import { abortedError, EngramMaintenanceError } from './errors.js';
import { safeNotify } from './safe-observer.js';

/** Construction of the process-wide extraction queue. */
export interface ExtractionQueueConfig {
  /** The clock of the oldest-age gauge (`{ now() }`). */
  readonly now?: () => number;
  readonly clock?: Clock;
  readonly observer?: MaintenanceObserver;
  /** Chunks of different sessions that may run at once (default 1). */
  readonly concurrency?: number;
  /** Most chunks waiting or running; more are rejected with `ENGRAM_MAINTENANCE_CAPACITY` (default 1,000). */
  readonly maxDepth?: number;
}

/** Which session a chunk belongs to: chunks of one session run one at a time, in order. */
export interface ExtractionQueueKey {
  readonly agentId: string;
  readonly sessionId: string;
}

/**
 * The process-wide queue of extraction work. Chunks of one session run strictly one at a time in
 * submission order; chunks of different sessions run up to `concurrency` at once. Depth (waiting + running)
 * and the age of the oldest chunk are reported as an absolute gauge on every change.
 */
export interface ExtractionQueue {
  /** Runs `task` when its turn comes; rejects with `ENGRAM_MAINTENANCE_CAPACITY` when full, `_ABORTED` when cancelled before it ran. */
  submit<T>(
    key: ExtractionQueueKey,
    task: (signal: AbortSignal) => Promise<T>,
    options?: { readonly signal?: AbortSignal },
  ): Promise<T>;
  /** Waiting + running chunks. */
  readonly depth: number;
  /** Age in ms of the oldest waiting or running chunk (0 when empty). */
  oldestAgeMs(): number;
  /** Aborts every waiting and running chunk; later submissions are rejected with `ENGRAM_MAINTENANCE_CLOSED`. */
  close(): void;
}

interface Entry {
  readonly sessionKey: string;
  readonly enqueuedAt: number;
  readonly controller: AbortController;
  readonly run: (signal: AbortSignal) => Promise<void>;
  readonly reject: (error: unknown) => void;
  started: boolean;
  detach: () => void;
}

/** Creates the process-wide extraction queue. */
export function createExtractionQueue(config: ExtractionQueueConfig = {}): ExtractionQueue {
  const clock = config.clock;
  const now = config.now ?? (clock === undefined ? (): number => Date.now() : (): number => clock.now());
  const observer = config.observer ?? noopMaintenanceObserver;
  const concurrency = config.concurrency ?? 1;
  const maxDepth = config.maxDepth ?? 1000;
  if (!Number.isInteger(concurrency) || concurrency < 1 || !Number.isInteger(maxDepth) || maxDepth < 1) {
    throw new EngramMaintenanceError(
      'ENGRAM_MAINTENANCE_INVALID_CONFIG',
      'Invalid extraction queue setting.',
    );
  }
  // Insertion order is submission order: the first entry is the oldest.
  const entries = new Set<Entry>();
  const runningSessions = new Set<string>();
  let running = 0;
  let closed = false;

  function oldestAgeMs(): number {
    for (const e of entries) return Math.max(0, now() - e.enqueuedAt);
    return 0;
  }

  function report(): void {
    const gauge = { depth: entries.size, oldestAgeMs: oldestAgeMs() };
    safeNotify(() => observer.onExtractionQueue?.(gauge));
  }

  function pump(): void {
    for (const e of entries) {
      if (running >= concurrency) return;
      if (e.started || runningSessions.has(e.sessionKey)) continue;
      e.started = true;
      running += 1;
      runningSessions.add(e.sessionKey);
      void e.run(e.controller.signal).finally(() => {
        running -= 1;
        runningSessions.delete(e.sessionKey);
        entries.delete(e);
        e.detach();
        report();
        pump();
      });
    }
  }

  return {
    submit<T>(
      key: ExtractionQueueKey,
      task: (signal: AbortSignal) => Promise<T>,
      options: { readonly signal?: AbortSignal } = {},
    ): Promise<T> {
      if (closed) {
        return Promise.reject(
          new EngramMaintenanceError('ENGRAM_MAINTENANCE_CLOSED', 'The extraction queue is closed.'),
        );
      }
      if (options.signal?.aborted === true) return Promise.reject(abortedError(options.signal));
      if (entries.size >= maxDepth) {
        return Promise.reject(
          new EngramMaintenanceError('ENGRAM_MAINTENANCE_CAPACITY', 'The extraction queue is full.'),
        );
      }
      return new Promise<T>((resolve, reject) => {
        const controller = new AbortController();
        const entry: Entry = {
          sessionKey: JSON.stringify([key.agentId, key.sessionId]),
          enqueuedAt: now(),
          controller,
          started: false,
          reject,
          detach: () => undefined,
          run: async (signal) => {
            try {
              resolve(await task(signal));
            } catch (error) {
              reject(error);
            }
          },
        };
        const outer = options.signal;
        if (outer !== undefined) {
          const onAbort = (): void => {
            controller.abort(outer.reason);
            if (!entry.started && entries.delete(entry)) {
              reject(abortedError(outer));
              report();
            }
          };
          outer.addEventListener('abort', onAbort, { once: true });
          entry.detach = () => outer.removeEventListener('abort', onAbort);
        }
        entries.add(entry);
        report();
        pump();
      });
    },
    get depth(): number {
      return entries.size;
    },
    oldestAgeMs,
    close(): void {
      closed = true;
      for (const e of [...entries]) {
        e.controller.abort();
        if (!e.started) {
          entries.delete(e);
          e.detach();
          e.reject(abortedError(e.controller.signal));
        }
      }
      report();
    },
  };
}
