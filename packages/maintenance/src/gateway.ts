import {
  ADMISSION_DECISIONS,
  type AdmissionDecision,
  backgroundTimers,
  createDeadline,
  type Deadline,
  type DeadlineExpiry,
  noopProviderObserver,
  PROVIDER_KINDS,
  PROVIDER_RACES,
  type ProviderKind,
  type ProviderObserver,
  type ProviderRace,
  type Timers,
} from '@engram/contracts';
import { type Clock, systemClock } from './clock.js';
import { abortedError, EngramMaintenanceError } from './errors.js';
import type { EmbedderPort, ModelPort } from './ports.js';
import { safeNotify } from './safe-observer.js';

/** Construction of a provider gateway. */
export interface ProviderGatewayConfig {
  readonly embedder?: EmbedderPort | null;
  readonly model?: ModelPort | null;
  readonly observer?: ProviderObserver;
  /** Concurrency slots per provider kind: in total and per key; `maxQueue` requests may wait (default 64). */
  readonly limits: { readonly global: number; readonly perKey: number; readonly maxQueue?: number };
  /** A token bucket per provider kind: `tokensPerInterval` requests per `intervalMs`, refilled continuously. */
  readonly rateLimit?: { readonly tokensPerInterval: number; readonly intervalMs: number } | null;
  /** Deadline of every request from its admission (queue wait included). */
  readonly deadlineMs: number;
  readonly clock?: Clock;
  readonly timers?: Timers;
}

/** Cumulative figures of a gateway (per provider kind), plus the current queue gauge. */
export interface ProviderGatewayStats {
  readonly decisions: Readonly<Record<ProviderKind, Readonly<Record<AdmissionDecision, number>>>>;
  readonly races: Readonly<Record<ProviderKind, Readonly<Record<ProviderRace, number>>>>;
  /**
   * Provider failures: the provider rejected a live request, or did not answer before the deadline.
   * Cancellation (the caller aborted), local rejection (rate limit, capacity) and a deadline that fired while
   * the request was still queued never count.
   */
  readonly failures: Readonly<Record<ProviderKind, number>>;
  readonly queued: Readonly<Record<ProviderKind, number>>;
  readonly active: Readonly<Record<ProviderKind, number>>;
}

/**
 * The provider gateway: wraps the embedder and model ports with per-key and global concurrency slots, a
 * bounded FIFO queue, a token-bucket rate limit and a deadline.
 *
 * Each request is first checked for capacity (a free slot, or room in the queue — else
 * `ENGRAM_MAINTENANCE_CAPACITY`, decision `capacityRejected`), then for a rate token (else
 * `ENGRAM_MAINTENANCE_RATE_LIMITED`, `rateLimited`), then `admitted`. From admission a deadline runs; when it
 * fires, or the caller aborts, the request rejects at once (`ENGRAM_MAINTENANCE_DEADLINE` — or
 * `ENGRAM_MAINTENANCE_QUEUE_TIMEOUT`, a local rejection, when it was still queued — / `_ABORTED`; race
 * `deadline` / `aborted`), its slot is freed and the provider call is aborted through its signal; an answer
 * that still arrives later is dropped and reported as `lateSettled`. A provider rejection is
 * rethrown as `ENGRAM_MAINTENANCE_PROVIDER_FAILED` with the original as `cause`.
 */
export interface ProviderGateway {
  /** The embedder seen through the gateway for one key (agent id or caller key); null without an embedder. */
  embedderFor(key: string): EmbedderPort | null;
  /** The model seen through the gateway for one key; null without a model. */
  modelFor(key: string): ModelPort | null;
  stats(): ProviderGatewayStats;
}

interface Entry {
  readonly key: string;
  readonly deadlineAt: number;
  readonly start: () => void;
  /** Ends the request at its deadline or on the caller's abort. */
  readonly deadline: Deadline;
}

interface Pool {
  active: number;
  readonly activeByKey: Map<string, number>;
  readonly queue: Entry[];
  tokens: number;
  refilledAt: number;
  readonly decisions: Record<AdmissionDecision, number>;
  readonly races: Record<ProviderRace, number>;
  failures: number;
}

function zeroRecord<K extends string>(keys: readonly K[]): Record<K, number> {
  const out = {} as Record<K, number>;
  for (const k of keys) out[k] = 0;
  return out;
}

function checkPositiveInt(name: string, value: number): void {
  if (!Number.isInteger(value) || value < 1) {
    throw new EngramMaintenanceError(
      'ENGRAM_MAINTENANCE_INVALID_CONFIG',
      `Invalid gateway setting: ${name}.`,
    );
  }
}

/** Creates a provider gateway. */
export function createProviderGateway(config: ProviderGatewayConfig): ProviderGateway {
  const observer = config.observer ?? noopProviderObserver;
  const clock = config.clock ?? systemClock;
  const timers = config.timers ?? backgroundTimers;
  const { global, perKey } = config.limits;
  const maxQueue = config.limits.maxQueue ?? 64;
  checkPositiveInt('limits.global', global);
  checkPositiveInt('limits.perKey', perKey);
  if (!Number.isInteger(maxQueue) || maxQueue < 0) checkPositiveInt('limits.maxQueue', maxQueue);
  checkPositiveInt('deadlineMs', config.deadlineMs);
  const rate = config.rateLimit ?? null;
  if (rate !== null) {
    checkPositiveInt('rateLimit.tokensPerInterval', rate.tokensPerInterval);
    checkPositiveInt('rateLimit.intervalMs', rate.intervalMs);
  }
  const deadlineMs = config.deadlineMs;

  const pools: Record<ProviderKind, Pool> = {
    embedding: newPool(),
    model: newPool(),
  };

  function newPool(): Pool {
    return {
      active: 0,
      activeByKey: new Map(),
      queue: [],
      tokens: rate?.tokensPerInterval ?? 0,
      refilledAt: clock.now(),
      decisions: zeroRecord(ADMISSION_DECISIONS),
      races: zeroRecord(PROVIDER_RACES),
      failures: 0,
    };
  }

  function gauge(kind: ProviderKind): void {
    const pool = pools[kind];
    const g = { kind, queued: pool.queue.length, active: pool.active };
    safeNotify(() => observer.onQueue?.(g));
  }

  function decide(kind: ProviderKind, decision: AdmissionDecision): void {
    pools[kind].decisions[decision] += 1;
    safeNotify(() => observer.onAdmission?.(kind, decision));
  }

  function race(kind: ProviderKind, r: ProviderRace): void {
    pools[kind].races[r] += 1;
    safeNotify(() => observer.onRace?.(kind, r));
  }

  function takeToken(pool: Pool): boolean {
    if (rate === null) return true;
    const now = clock.now();
    const elapsed = Math.max(0, now - pool.refilledAt);
    pool.tokens = Math.min(
      rate.tokensPerInterval,
      pool.tokens + (elapsed * rate.tokensPerInterval) / rate.intervalMs,
    );
    pool.refilledAt = now;
    if (pool.tokens < 1) return false;
    pool.tokens -= 1;
    return true;
  }

  function fits(pool: Pool, key: string): boolean {
    return pool.active < global && (pool.activeByKey.get(key) ?? 0) < perKey;
  }

  function pump(kind: ProviderKind): void {
    const pool = pools[kind];
    for (let i = 0; i < pool.queue.length && pool.active < global; ) {
      const entry = pool.queue[i];
      if (entry !== undefined && clock.now() >= entry.deadlineAt) {
        // Its deadline is due (its timer just has not fired yet): never start a request that is already late.
        entry.deadline.expire('deadline');
      } else if (entry !== undefined && fits(pool, entry.key)) {
        pool.queue.splice(i, 1);
        entry.start();
      } else {
        i += 1;
      }
    }
    gauge(kind);
  }

  function request<T>(
    kind: ProviderKind,
    key: string,
    call: (signal: AbortSignal) => Promise<T>,
    outer: AbortSignal | undefined,
  ): Promise<T> {
    const pool = pools[kind];
    if (outer?.aborted === true) {
      race(kind, 'aborted');
      return Promise.reject(abortedError(outer));
    }
    const fitsNow = fits(pool, key);
    if (!fitsNow && pool.queue.length >= maxQueue) {
      decide(kind, 'capacityRejected');
      return Promise.reject(
        new EngramMaintenanceError(
          'ENGRAM_MAINTENANCE_CAPACITY',
          'Provider capacity exhausted: no slot and the queue is full.',
        ),
      );
    }
    if (!takeToken(pool)) {
      decide(kind, 'rateLimited');
      return Promise.reject(
        new EngramMaintenanceError('ENGRAM_MAINTENANCE_RATE_LIMITED', 'Provider rate limit reached.'),
      );
    }
    decide(kind, 'admitted');
    return new Promise<T>((resolve, reject) => {
      // The deadline runs from admission (queue wait included); it aborts the provider call's signal when it
      // fires or the caller aborts, and `expire` settles the request at once. (The caller's signal is not
      // aborted here, so `onExpire` never runs before `entry` exists.)
      const deadline = createDeadline({
        ms: deadlineMs,
        timers,
        signals: [outer],
        onExpire: (expiry) => expire(expiry),
      });
      let state: 'queued' | 'running' | 'settled' = 'queued';
      let holdsSlot = false;
      const release = (): void => {
        if (!holdsSlot) return;
        holdsSlot = false;
        pool.active -= 1;
        const n = (pool.activeByKey.get(key) ?? 1) - 1;
        if (n <= 0) pool.activeByKey.delete(key);
        else pool.activeByKey.set(key, n);
      };
      const finish = (): void => {
        state = 'settled';
        deadline.settle();
        release();
        pump(kind);
      };
      // The deadline ended first (its timer, the caller's abort, or a queue that found it due by the clock).
      function expire(r: DeadlineExpiry): void {
        if (state === 'settled') return;
        const wasRunning = state === 'running';
        const idx = pool.queue.indexOf(entry);
        if (idx >= 0) pool.queue.splice(idx, 1);
        // Only a provider that was actually called and did not answer in time counts as failing.
        if (r === 'deadline' && wasRunning) pool.failures += 1;
        finish();
        race(kind, r);
        if (r === 'aborted') reject(abortedError(outer));
        else if (wasRunning) {
          reject(
            new EngramMaintenanceError(
              'ENGRAM_MAINTENANCE_DEADLINE',
              'The provider request exceeded its deadline.',
            ),
          );
        } else {
          // Never sent: a local rejection, so callers (the drain) defer instead of counting a failed attempt.
          reject(
            new EngramMaintenanceError(
              'ENGRAM_MAINTENANCE_QUEUE_TIMEOUT',
              'No provider slot became free before the deadline.',
            ),
          );
        }
      }
      const entry: Entry = {
        key,
        deadlineAt: clock.now() + deadlineMs,
        start: () => {
          if (state !== 'queued') return;
          state = 'running';
          holdsSlot = true;
          pool.active += 1;
          pool.activeByKey.set(key, (pool.activeByKey.get(key) ?? 0) + 1);
          let promise: Promise<T>;
          try {
            promise = call(deadline.signal);
          } catch (error) {
            promise = Promise.reject(error);
          }
          promise.then(
            (value) => {
              if (state !== 'running') {
                race(kind, 'lateSettled');
                return;
              }
              finish();
              resolve(value);
            },
            (error: unknown) => {
              if (state !== 'running') {
                race(kind, 'lateSettled');
                return;
              }
              pool.failures += 1;
              finish();
              reject(
                new EngramMaintenanceError(
                  'ENGRAM_MAINTENANCE_PROVIDER_FAILED',
                  'The provider request failed.',
                  {
                    cause: error,
                  },
                ),
              );
            },
          );
        },
        deadline,
      };
      if (fitsNow) {
        entry.start();
        gauge(kind);
      } else {
        pool.queue.push(entry);
        gauge(kind);
      }
    });
  }

  const embedder = config.embedder ?? null;
  const model = config.model ?? null;

  return {
    embedderFor(key: string): EmbedderPort | null {
      if (embedder === null) return null;
      return {
        profile: embedder.profile,
        embed: (texts, options) =>
          request('embedding', key, (signal) => embedder.embed(texts, { signal }), options?.signal),
      };
    },
    modelFor(key: string): ModelPort | null {
      if (model === null) return null;
      return {
        id: model.id,
        generate: (req) => request('model', key, (signal) => model.generate({ ...req, signal }), req.signal),
      };
    },
    stats(): ProviderGatewayStats {
      const per = <V>(f: (pool: Pool) => V): Record<ProviderKind, V> => {
        const out = {} as Record<ProviderKind, V>;
        for (const kind of PROVIDER_KINDS) out[kind] = f(pools[kind]);
        return out;
      };
      return {
        decisions: per((p) => ({ ...p.decisions })),
        races: per((p) => ({ ...p.races })),
        failures: per((p) => p.failures),
        queued: per((p) => p.queue.length),
        active: per((p) => p.active),
      };
    },
  };
}
