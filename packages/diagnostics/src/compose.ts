/**
 * Composite observers: fan one producer's reports out to several observers. Each member call is isolated:
 * a member that throws (or returns a rejected promise) affects neither the producer nor the other members.
 */
import type {
  MaintenanceObserver,
  ProviderObserver,
  RetrievalObserver,
  StoreObserver,
} from '@engram/contracts/observers';

/** Accepts an array only when it lists every member of `T` and nothing else. */
function exhaustive<T extends string>(): <const A extends readonly T[]>(
  values: A & ([T] extends [A[number]] ? unknown : never),
) => readonly T[] {
  return (values) => Object.freeze([...values]);
}

// Every method of each port, checked both ways by tsc: a method added to a port must be forwarded here.
const RETRIEVAL_METHODS = exhaustive<keyof RetrievalObserver>()(['onRetrieval', 'onCircuitState']);
const MAINTENANCE_METHODS = exhaustive<keyof MaintenanceObserver>()([
  'onDrainBatch',
  'onEmbeddingBacklog',
  'onExtraction',
  'onExtractionQueue',
  'onMaintenancePass',
]);
const PROVIDER_METHODS = exhaustive<keyof ProviderObserver>()(['onQueue', 'onAdmission', 'onRace']);
const STORE_METHODS = exhaustive<keyof StoreObserver>()(['onStatement', 'onVectorStores', 'onVectorWarmup']);

type AnyMethod = (...args: never[]) => unknown;

function callIsolated(observer: object, name: string, args: readonly unknown[]): void {
  try {
    const method = (observer as Record<string, unknown>)[name];
    if (typeof method !== 'function') return;
    const result: unknown = Reflect.apply(method as AnyMethod, observer, args);
    // An async member must not surface as an unhandled rejection in the producer's process.
    if (
      typeof result === 'object' &&
      result !== null &&
      typeof (result as PromiseLike<unknown>).then === 'function'
    ) {
      (result as PromiseLike<unknown>).then(undefined, () => {});
    }
  } catch {
    // Isolation is the contract: a failing observer never changes or delays a memory result.
  }
}

function compose<T extends object>(observers: readonly T[], methods: readonly string[]): T {
  const members = Object.freeze([...observers]);
  const composite: Record<string, (...args: unknown[]) => void> = {};
  for (const name of methods) {
    composite[name] = (...args: unknown[]): void => {
      for (const member of members) callIsolated(member, name, args);
    };
  }
  return Object.freeze(composite) as unknown as T;
}

/** A retrieval observer that forwards every call to each of `observers`, each call isolated. */
export function createCompositeRetrievalObserver(
  ...observers: readonly RetrievalObserver[]
): RetrievalObserver {
  return compose<RetrievalObserver>(observers, RETRIEVAL_METHODS);
}

/** A maintenance observer that forwards every call to each of `observers`, each call isolated. */
export function createCompositeMaintenanceObserver(
  ...observers: readonly MaintenanceObserver[]
): MaintenanceObserver {
  return compose<MaintenanceObserver>(observers, MAINTENANCE_METHODS);
}

/** A provider observer that forwards every call to each of `observers`, each call isolated. */
export function createCompositeProviderObserver(...observers: readonly ProviderObserver[]): ProviderObserver {
  return compose<ProviderObserver>(observers, PROVIDER_METHODS);
}

/** A store observer that forwards every call to each of `observers`, each call isolated. */
export function createCompositeStoreObserver(...observers: readonly StoreObserver[]): StoreObserver {
  return compose<StoreObserver>(observers, STORE_METHODS);
}
