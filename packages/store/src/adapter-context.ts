/**
 * What every adapter's connection context holds besides its connection: the observer (each call isolated, so
 * an observer failure never changes a store result), the clock, the id factory, the validation limits, the
 * embedder binding with its once-per-binding warm-up report, and the open state. An adapter's context extends
 * it with its driver's handles.
 */
import type { StatementKind, StoreObserver, VectorWarmupOutcome } from '@engram/contracts';
import type { IntegrityResult } from './store-options.js';
import type { EmbeddingProfile } from './types.js';
import type { ValidationLimits } from './validate.js';

type ObserverCall = { [K in keyof StoreObserver]-?: NonNullable<StoreObserver[K]> };

/** Calls the observer's `key` hook when it has one; a throwing hook is ignored. */
export function notifyObserver<K extends keyof ObserverCall>(
  observer: StoreObserver,
  key: K,
  ...args: Parameters<ObserverCall[K]>
): void {
  const fn = observer[key];
  if (fn === undefined) return;
  try {
    Reflect.apply(fn, observer, args);
  } catch {
    // isolated: observer failures never change a store result
  }
}

/** What an adapter context is built from (besides the adapter's own handles). */
export interface AdapterContextInit {
  readonly observer: StoreObserver;
  readonly now: () => number;
  readonly idFactory: () => string;
  readonly limits: ValidationLimits;
}

/** The shared state of one open store that does not depend on the driver. */
export abstract class AdapterContext {
  readonly observer: StoreObserver;
  readonly now: () => number;
  readonly idFactory: () => string;
  readonly limits: ValidationLimits;
  /** The schema version the migration left the store at. */
  schemaVersion = 0;
  /** True once the store was closed. */
  closed = false;
  /** The last integrity check in this process (`notChecked` until one ran). */
  integrity: IntegrityResult = { state: 'notChecked', checkedAt: null };
  #profile: EmbeddingProfile | null = null;
  #fingerprint = 'none';
  #warmupReported = false;

  constructor(init: AdapterContextInit) {
    this.observer = init.observer;
    this.now = init.now;
    this.idFactory = init.idFactory;
    this.limits = init.limits;
  }

  /** The embedder profile the store is bound to (null: no vector index); set by `bindProfile`. */
  get profile(): EmbeddingProfile | null {
    return this.#profile;
  }

  /** The bound profile's fingerprint: `profileId:dimensions` or `none`. */
  get fingerprint(): string {
    return this.#fingerprint;
  }

  /** Binds the store to an embedder profile; the warm-up is reported again for the new binding. */
  bindProfile(profile: EmbeddingProfile | null, fingerprint: string): void {
    this.#profile = profile;
    this.#fingerprint = fingerprint;
    this.#warmupReported = false;
  }

  /** Reports one executed statement (bound: it may be handed on as a callback). */
  readonly count = (kind: StatementKind): void => {
    notifyObserver(this.observer, 'onStatement', kind);
  };

  /** Reports the vector index's warm-up outcome, once per binding. */
  emitWarmup(outcome: VectorWarmupOutcome): void {
    if (this.#warmupReported) return;
    this.#warmupReported = true;
    notifyObserver(this.observer, 'onVectorWarmup', outcome);
  }
}
