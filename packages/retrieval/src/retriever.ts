import type { EmbeddingProfile, LexicalHit, MemoryKind, MemoryRecord, VectorHit } from '@engram/store';
import {
  type CircuitBreaker,
  createCircuitBreaker,
  DEFAULT_COOLDOWN_MS,
  DEFAULT_FAILURE_THRESHOLD,
} from './circuit.js';
import { EngramRetrievalError } from './errors.js';
import {
  type CircuitSnapshot,
  DEGRADATION_CAUSES,
  type DegradationCause,
  noopRetrievalObserver,
  RETRIEVAL_ARMS,
  RETRIEVAL_PURPOSES,
  type RetrievalArm,
  type RetrievalExecution,
  type RetrievalObserver,
  type RetrievalOutcome,
  type RetrievalPurpose,
  type RetrievalStage,
} from './execution.js';
import {
  DEFAULT_FUSION_WEIGHTS,
  DEFAULT_VECTOR_EVIDENCE,
  type FusionCandidate,
  type FusionWeights,
  fuseCandidates,
  type RetrievalResult,
  type VectorEvidence,
  vectorConfidence,
} from './fusion.js';
import { DEFAULT_MAX_TERMS, extractKeywords, MAX_QUERY_SCAN_CHARS } from './keywords.js';
import type { QueryEmbedder, RetrievalStore, RetrievalTimers } from './ports.js';
import { classifyStoreError, type StoreFailureCause } from './store-errors.js';

/** Memory kinds a call may filter on (mirrors the store's `MEMORY_KINDS`; type-checked against it). */
const KNOWN_KINDS = [
  'event',
  'fact',
  'semantic',
  'episodic',
  'reflection',
  'persona',
  'skill',
] as const satisfies readonly MemoryKind[];
/** Kinds searched when a call names none: `persona` and `skill` are managed records, never recalled. */
export const DEFAULT_RECALL_KINDS: readonly MemoryKind[] = Object.freeze([
  'event',
  'fact',
  'semantic',
  'episodic',
  'reflection',
] as const satisfies readonly MemoryKind[]);

/** Default number of results. */
export const DEFAULT_LIMIT = 10;
/** Largest number of results a call may ask for; a larger `limit` is clamped to it. */
export const MAX_LIMIT = 100;
/** The store's tag shape: a lower-case prefix, a colon, a value without control characters. */
const TAG_FILTER = /^[a-z][a-z0-9_-]{0,31}:[^\u0000-\u001f\u007f]{1,512}$/;
/** Most tag filters per call. */
export const MAX_TAG_FILTERS = 16;

/** Which arms run; both by default. Evaluation runs FTS-only, vector-only and hybrid through this switch. */
export interface RetrievalArms {
  readonly lexical: boolean;
  readonly vector: boolean;
}

/** Configuration of {@link createRetriever}; frozen at construction. */
export interface RetrieverConfig {
  /** The store slice the pipeline reads. */
  readonly store: RetrievalStore;
  /** The query embedder; without one, every call is FTS-only and carries the `vectorCold` degradation. */
  readonly embedder?: QueryEmbedder;
  /** Observer of every call and circuit transition (no-op default). */
  readonly observer?: RetrievalObserver;
  /** Arms to run (default both). With both off every call is `disabled`. */
  readonly arms?: RetrievalArms;
  /** Wall clock in epoch ms: `startedAt`, recency, circuit cool-down (default `Date.now`). */
  readonly now?: () => number;
  /** Monotonic clock in ms for stage latencies (default `performance.now`). */
  readonly monotonicNow?: () => number;
  /** Timers for the embedding deadline (default the global ones). */
  readonly timers?: RetrievalTimers;
  /** Deadline of the query embedding in ms (default 2,000). */
  readonly embeddingDeadlineMs?: number;
  /** Query embeddings in flight per agent; a call over the cap degrades at once, it never waits (default 4). */
  readonly maxInFlightEmbeddingsPerAgent?: number;
  /** Circuit breaker of the query embedder (defaults: 5 consecutive failures, 30 s cool-down). */
  readonly circuit?: { readonly failureThreshold?: number; readonly cooldownMs?: number };
  /** Vector hits below this cosine similarity are not evidence and are dropped (default 0.2). */
  readonly similarityThreshold?: number;
  /** Candidates asked from each arm, independent of `limit` so top-k stays monotonic (default 128, at most 1,000). */
  readonly candidateBudget?: number;
  /**
   * A saturated arm left with fewer valid candidates than this after revalidation is re-queried with a doubled
   * budget (default 100, the largest limit; at most `candidateBudget`). It does not depend on the call's limit,
   * so refill never breaks top-k monotonicity.
   */
  readonly refillTarget?: number;
  /** Hard cap of a refilled arm's budget (default 1,000, the store's maximum). */
  readonly refillMaxBudget?: number;
  /** Bound on extracted query terms (default 32). */
  readonly maxTerms?: number;
  /** Fusion weights (see {@link FusionWeights}); missing fields take the defaults. */
  readonly fusion?: Partial<FusionWeights>;
  /**
   * Calibration of the vector arm's per-call weight (see {@link VectorEvidence}); `false` gives the arm its full
   * weight on every call. Calibrate it for your embedder: the defaults suit cosine similarities in 0..1.
   */
  readonly vectorEvidence?: Partial<VectorEvidence> | false;
  /**
   * Record what `recall`, `search` and `injection` return — `lastAccessedAt` and `accessCount`, through the
   * store's optional `recordAccess` — after the call has settled and off its path (default true). Maintenance
   * decays rows by their last access, so a memory that keeps being recalled is not archived. `decision` (the
   * extraction's neighbour lookup) never records access.
   */
  readonly trackAccess?: boolean;
  /**
   * Runs a deferred access write outside the call (default `setImmediate`, so the write never delays the answer
   * nor counts in its latencies). The task never throws.
   */
  readonly defer?: (task: () => void) => void;
}

/** The resolved numeric settings of a retriever (no ports). */
export interface RetrieverSettings {
  readonly arms: RetrievalArms;
  readonly embeddingDeadlineMs: number;
  readonly maxInFlightEmbeddingsPerAgent: number;
  readonly failureThreshold: number;
  readonly cooldownMs: number;
  readonly similarityThreshold: number;
  readonly candidateBudget: number;
  readonly refillTarget: number;
  readonly refillMaxBudget: number;
  readonly maxTerms: number;
  readonly fusion: FusionWeights;
  readonly vectorEvidence: VectorEvidence | false;
  readonly trackAccess: boolean;
}

/** Options of one retrieval call. */
export interface RetrieveOptions {
  /** Results wanted, an integer ≥ 1 (default 10); values above 100 are clamped to 100. */
  readonly limit?: number;
  /** Kinds to search (default: event, fact, semantic, episodic, reflection). */
  readonly kinds?: readonly MemoryKind[];
  /** Exact tags every result must carry, e.g. `file:src/a.ts`, `tool:bash` (at most 16). */
  readonly tags?: readonly string[];
  /** Cancels the call: the answer is `cancelled` with no results. */
  readonly signal?: AbortSignal;
}

/** The answer of a retrieval call: fused results (empty unless `completed`) and the settled execution. */
export interface RetrievalResponse {
  readonly results: readonly RetrievalResult[];
  readonly execution: RetrievalExecution;
}

/** A retrieval call of one purpose. */
export type RetrieveFunction = (
  agentId: string,
  query: string,
  options?: RetrieveOptions,
) => Promise<RetrievalResponse>;

/**
 * Hybrid retriever: one entry point per purpose, all running the same pipeline.
 *
 * Every call resolves (never rejects) with an execution context settled exactly once and reported to the
 * observer exactly once: degradations keep the answer `completed` (FTS-only after an embedding failure), a
 * store failure gives `failed` with a cause and no results, an aborted signal gives `cancelled`. Only a
 * programmer error (empty agent id, invalid limit, kinds or tags) throws an `EngramRetrievalError`, before
 * anything is read or reported. `recall`, `search` and `injection` record access to what they return after
 * settling (see {@link RetrieverConfig.trackAccess}); `decision` is read-only.
 */
export interface Retriever {
  readonly recall: RetrieveFunction;
  readonly search: RetrieveFunction;
  readonly decision: RetrieveFunction;
  readonly injection: RetrieveFunction;
  /** The same pipeline with the purpose as a parameter. */
  retrieve(
    purpose: RetrievalPurpose,
    agentId: string,
    query: string,
    options?: RetrieveOptions,
  ): Promise<RetrievalResponse>;
  /** The query-embedding circuit breaker's state and lifetime counters. */
  circuit(): CircuitSnapshot;
  /** Resolved, frozen settings. */
  readonly settings: RetrieverSettings;
}

const CANCELLED: unique symbol = Symbol('cancelled');

class StoreFailure {
  readonly cause: StoreFailureCause;
  constructor(cause: StoreFailureCause) {
    this.cause = cause;
  }
}

type EmbedOutcome =
  | { readonly ok: true; readonly vector: Float32Array | null; readonly ms: number }
  | { readonly ok: false; readonly cause: DegradationCause | typeof CANCELLED; readonly ms?: number };

interface ArmHit {
  readonly id: string;
  readonly revision?: number;
  readonly score?: number;
  readonly similarity?: number;
}

interface ArmState {
  budget: number;
  hits: ArmHit[];
  /** The store returned as many hits as asked (above the threshold for the vector arm): more may exist. */
  saturated: boolean;
}

const defaultTimers: RetrievalTimers = {
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

const defaultDefer = (task: () => void): void => {
  if (typeof setImmediate === 'function') setImmediate(task);
  else setTimeout(task, 0);
};

function invalidConfig(field: string, rule: string): EngramRetrievalError {
  return new EngramRetrievalError(
    'ENGRAM_RETRIEVAL_INVALID_CONFIG',
    `Retriever config "${field}" must be ${rule}.`,
  );
}

function invalidInput(message: string): EngramRetrievalError {
  return new EngramRetrievalError('ENGRAM_RETRIEVAL_INVALID_INPUT', message);
}

function intSetting(
  value: number | undefined,
  fallback: number,
  field: string,
  min: number,
  max: number,
): number {
  const v = value ?? fallback;
  if (!Number.isInteger(v) || v < min || v > max) throw invalidConfig(field, `an integer in ${min}..${max}`);
  return v;
}

function numberSetting(
  value: number | undefined,
  fallback: number,
  field: string,
  min: number,
  max: number,
): number {
  const v = value ?? fallback;
  if (!Number.isFinite(v) || v < min || v > max)
    throw invalidConfig(field, `a finite number in ${min}..${max}`);
  return v;
}

function resolveSettings(config: RetrieverConfig): RetrieverSettings {
  if (
    typeof config !== 'object' ||
    config === null ||
    typeof config.store !== 'object' ||
    config.store === null
  ) {
    throw invalidConfig('store', 'a store');
  }
  const arms = config.arms ?? { lexical: true, vector: true };
  if (typeof arms.lexical !== 'boolean' || typeof arms.vector !== 'boolean') {
    throw invalidConfig('arms', '{ lexical: boolean; vector: boolean }');
  }
  const trackAccess = config.trackAccess ?? true;
  if (typeof trackAccess !== 'boolean') throw invalidConfig('trackAccess', 'a boolean');
  if (config.defer !== undefined && typeof config.defer !== 'function')
    throw invalidConfig('defer', 'a function');
  const candidateBudget = intSetting(config.candidateBudget, 128, 'candidateBudget', 1, 1000);
  const refillTarget = intSetting(
    config.refillTarget,
    Math.min(MAX_LIMIT, candidateBudget),
    'refillTarget',
    1,
    candidateBudget,
  );
  const fusionInput = config.fusion ?? {};
  const fusion: FusionWeights = Object.freeze({
    k: numberSetting(fusionInput.k, DEFAULT_FUSION_WEIGHTS.k, 'fusion.k', 0, 1e6),
    lexical: numberSetting(fusionInput.lexical, DEFAULT_FUSION_WEIGHTS.lexical, 'fusion.lexical', 0, 1e6),
    vector: numberSetting(fusionInput.vector, DEFAULT_FUSION_WEIGHTS.vector, 'fusion.vector', 0, 1e6),
    importance: numberSetting(
      fusionInput.importance,
      DEFAULT_FUSION_WEIGHTS.importance,
      'fusion.importance',
      0,
      1e6,
    ),
    recency: numberSetting(fusionInput.recency, DEFAULT_FUSION_WEIGHTS.recency, 'fusion.recency', 0, 1e6),
    recencyHalfLifeMs: numberSetting(
      fusionInput.recencyHalfLifeMs,
      DEFAULT_FUSION_WEIGHTS.recencyHalfLifeMs,
      'fusion.recencyHalfLifeMs',
      1,
      Number.MAX_SAFE_INTEGER,
    ),
  });
  return Object.freeze({
    arms: Object.freeze({ lexical: arms.lexical, vector: arms.vector }),
    embeddingDeadlineMs: intSetting(config.embeddingDeadlineMs, 2000, 'embeddingDeadlineMs', 1, 600_000),
    maxInFlightEmbeddingsPerAgent: intSetting(
      config.maxInFlightEmbeddingsPerAgent,
      4,
      'maxInFlightEmbeddingsPerAgent',
      1,
      1024,
    ),
    failureThreshold: intSetting(
      config.circuit?.failureThreshold,
      DEFAULT_FAILURE_THRESHOLD,
      'circuit.failureThreshold',
      1,
      1000,
    ),
    cooldownMs: intSetting(
      config.circuit?.cooldownMs,
      DEFAULT_COOLDOWN_MS,
      'circuit.cooldownMs',
      0,
      86_400_000,
    ),
    similarityThreshold: numberSetting(config.similarityThreshold, 0.2, 'similarityThreshold', -1, 1),
    candidateBudget,
    refillTarget,
    refillMaxBudget: intSetting(config.refillMaxBudget, 1000, 'refillMaxBudget', candidateBudget, 1000),
    maxTerms: intSetting(config.maxTerms, DEFAULT_MAX_TERMS, 'maxTerms', 1, 64),
    fusion,
    vectorEvidence: resolveVectorEvidence(config.vectorEvidence),
    trackAccess,
  });
}

function resolveVectorEvidence(input: Partial<VectorEvidence> | false | undefined): VectorEvidence | false {
  if (input === false) return false;
  const noiseMargin = numberSetting(
    input?.noiseMargin,
    DEFAULT_VECTOR_EVIDENCE.noiseMargin,
    'vectorEvidence.noiseMargin',
    0,
    2,
  );
  const fullMargin = numberSetting(
    input?.fullMargin,
    DEFAULT_VECTOR_EVIDENCE.fullMargin,
    'vectorEvidence.fullMargin',
    noiseMargin,
    2,
  );
  const depth = intSetting(input?.depth, DEFAULT_VECTOR_EVIDENCE.depth, 'vectorEvidence.depth', 2, 100);
  return Object.freeze({ noiseMargin, fullMargin, depth });
}

interface ValidatedCall {
  readonly limit: number;
  readonly kinds: readonly MemoryKind[];
  readonly tags: readonly string[];
  readonly signal: AbortSignal | undefined;
}

function validateCall(
  purpose: RetrievalPurpose,
  agentId: unknown,
  query: unknown,
  options: unknown,
): ValidatedCall {
  if (!(RETRIEVAL_PURPOSES as readonly string[]).includes(purpose))
    throw invalidInput('Unknown retrieval purpose.');
  if (typeof agentId !== 'string' || agentId.trim() === '')
    throw invalidInput('agentId must be a non-empty string.');
  if (typeof query !== 'string') throw invalidInput('query must be a string.');
  if (options !== undefined && (typeof options !== 'object' || options === null)) {
    throw invalidInput('options must be an object.');
  }
  const o = (options ?? {}) as RetrieveOptions;
  const rawLimit = o.limit ?? DEFAULT_LIMIT;
  if (!Number.isInteger(rawLimit) || rawLimit < 1) throw invalidInput('limit must be a positive integer.');
  let kinds: readonly MemoryKind[] = DEFAULT_RECALL_KINDS;
  if (o.kinds !== undefined) {
    if (!Array.isArray(o.kinds) || o.kinds.length === 0)
      throw invalidInput('kinds must be a non-empty array.');
    for (const kind of o.kinds) {
      if (!(KNOWN_KINDS as readonly unknown[]).includes(kind))
        throw invalidInput('kinds contains an unknown kind.');
    }
    kinds = [...new Set(o.kinds)];
  }
  let tags: readonly string[] = [];
  if (o.tags !== undefined) {
    if (!Array.isArray(o.tags) || o.tags.length > MAX_TAG_FILTERS) {
      throw invalidInput(`tags must be an array of at most ${MAX_TAG_FILTERS} strings.`);
    }
    for (const tag of o.tags) {
      if (typeof tag !== 'string' || !TAG_FILTER.test(tag) || tag.length > 560) {
        throw invalidInput('tags must be prefix:value strings without control characters.');
      }
    }
    tags = [...new Set(o.tags)];
  }
  if (o.signal !== undefined && !(o.signal instanceof AbortSignal))
    throw invalidInput('signal must be an AbortSignal.');
  return { limit: Math.min(rawLimit, MAX_LIMIT), kinds, tags, signal: o.signal };
}

/** Mutable state of one call, settled once into a frozen {@link RetrievalExecution}. */
class ExecutionRecorder {
  readonly purpose: RetrievalPurpose;
  readonly agentId: string;
  readonly startedAt: number;
  readonly startedMono: number;
  readonly latencies: Partial<Record<RetrievalStage, number>> = {};
  readonly degradations = new Set<DegradationCause>();
  readonly arms = new Set<RetrievalArm>();
  outcome: RetrievalOutcome = 'failed';
  fts = 0;
  vector = 0;
  selected = 0;

  constructor(purpose: RetrievalPurpose, agentId: string, startedAt: number, startedMono: number) {
    this.purpose = purpose;
    this.agentId = agentId;
    this.startedAt = startedAt;
    this.startedMono = startedMono;
  }

  stage(stage: RetrievalStage, ms: number): void {
    this.latencies[stage] = Math.max(0, ms);
  }

  settle(endMono: number): RetrievalExecution {
    this.stage('total', endMono - this.startedMono);
    const arms = RETRIEVAL_ARMS.filter((arm) => this.arms.has(arm));
    return Object.freeze({
      purpose: this.purpose,
      agentId: this.agentId,
      startedAt: this.startedAt,
      latencies: Object.freeze({ ...this.latencies }),
      candidates: Object.freeze({ fts: this.fts, vector: this.vector, selected: this.selected }),
      outcome: this.outcome,
      degradations: Object.freeze(DEGRADATION_CAUSES.filter((cause) => this.degradations.has(cause))),
      ...(arms.length > 0 ? { arms: Object.freeze(arms) } : {}),
    });
  }
}

function isValidVector(value: unknown, dimensions: number | undefined): value is Float32Array {
  if (!(value instanceof Float32Array) || value.length === 0) return false;
  if (dimensions !== undefined && value.length !== dimensions) return false;
  for (const x of value) if (!Number.isFinite(x)) return false;
  return true;
}

function isZero(vector: Float32Array): boolean {
  for (const x of vector) if (x !== 0) return false;
  return true;
}

/**
 * Creates the hybrid retriever (DESIGN.md, "Retrieval"). Pipeline per call: keyword extraction and the FTS
 * arm (`keyword` stage) while the query is embedded under a deadline, a per-agent in-flight cap and a circuit
 * breaker (`queryEmbedding`); the agent-partitioned vector arm with a similarity threshold (`vector`);
 * authoritative revalidation, kind/tag filtering and refill of starved arms (`authoritativeRevalidation`);
 * fusion and explanation (`assembly`). After the call has settled, a deferred, fire-and-forget access write.
 */
export function createRetriever(config: RetrieverConfig): Retriever {
  const settings = resolveSettings(config);
  const store = config.store;
  const embedder = config.embedder;
  const observer = config.observer ?? noopRetrievalObserver;
  const now = config.now ?? Date.now;
  const mono = config.monotonicNow ?? (() => performance.now());
  const timers = config.timers ?? defaultTimers;
  const defer = config.defer ?? defaultDefer;
  const inFlight = new Map<string, number>();
  const breaker: CircuitBreaker = createCircuitBreaker({
    failureThreshold: settings.failureThreshold,
    cooldownMs: settings.cooldownMs,
    now,
    onTransition: (snapshot) => observer.onCircuitState?.(snapshot),
  });
  // The starting state is reported too, so a health page shows `closed` before the first transition.
  if (embedder !== undefined && settings.arms.vector) {
    try {
      observer.onCircuitState?.(breaker.snapshot());
    } catch {
      // An observer failure must never change the retriever.
    }
  }

  /**
   * Whether the vector arm can run, and the query vector's required length. Null (the answer is `vectorCold`,
   * and the query is not embedded) without an embedder, for a store without a vector index, or when the store's
   * profile and the embedder's differ. A store that does not expose its profile trusts the embedder's.
   */
  const vectorPlan = (): { readonly dimensions: number | undefined } | null => {
    if (embedder === undefined) return null;
    let profile: EmbeddingProfile | null | undefined;
    try {
      profile = store.embeddingProfile;
    } catch {
      profile = undefined;
    }
    if (profile === null) return null;
    const own = embedder.profile;
    if (profile === undefined) return { dimensions: own?.dimensions };
    if (own !== undefined && (own.id !== profile.id || own.dimensions !== profile.dimensions)) return null;
    return { dimensions: profile.dimensions };
  };

  /** Fire-and-forget: a failed access write changes nothing (access times are advisory). */
  const recordAccess = (agentId: string, ids: readonly string[]): void => {
    try {
      const write = store.recordAccess;
      if (typeof write !== 'function') return;
      const at = now();
      defer((): void => {
        try {
          Promise.resolve(write.call(store, agentId, ids, at)).then(undefined, () => {});
        } catch {
          // Swallowed: see above.
        }
      });
    } catch {
      // A failing clock or scheduler must not change the answer either.
    }
  };

  const storeCall = async <T>(call: () => Promise<T>): Promise<T> => {
    try {
      return await call();
    } catch (error) {
      throw new StoreFailure(classifyStoreError(error));
    }
  };

  // `stop` is aborted when the call settles: an embedding still running then is released, not counted.
  const embedQuery = (
    agentId: string,
    query: string,
    dimensions: number | undefined,
    signal: AbortSignal | undefined,
    stop: AbortSignal,
  ): Promise<EmbedOutcome> => {
    if (embedder === undefined) return Promise.resolve({ ok: false, cause: 'vectorCold' });
    const current = inFlight.get(agentId) ?? 0;
    // Over the cap the embedder is not keeping up: degrade at once (reported like a timeout), never queue.
    if (current >= settings.maxInFlightEmbeddingsPerAgent)
      return Promise.resolve({ ok: false, cause: 'embeddingTimeout' });
    const permit = breaker.acquire();
    if (permit === null) return Promise.resolve({ ok: false, cause: 'embeddingCircuitOpen' });
    inFlight.set(agentId, current + 1);
    const controller = new AbortController();
    const started = mono();
    return new Promise<EmbedOutcome>((resolve) => {
      let done = false;
      let timer: unknown;
      const onAbort = (): void => finish({ ok: false, cause: CANCELLED }, 'release');
      const finish = (outcome: EmbedOutcome, verdict: 'success' | 'failure' | 'release'): void => {
        if (done) return;
        done = true;
        if (timer !== undefined) timers.clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        stop.removeEventListener('abort', onAbort);
        const left = (inFlight.get(agentId) ?? 1) - 1;
        if (left <= 0) inFlight.delete(agentId);
        else inFlight.set(agentId, left);
        permit[verdict]();
        if (verdict !== 'success') controller.abort();
        resolve(outcome.ok || outcome.cause === CANCELLED ? outcome : { ...outcome, ms: mono() - started });
      };
      if (signal?.aborted === true || stop.aborted) {
        onAbort();
        return;
      }
      signal?.addEventListener('abort', onAbort, { once: true });
      stop.addEventListener('abort', onAbort, { once: true });
      timer = timers.setTimeout(
        () => finish({ ok: false, cause: 'embeddingTimeout' }, 'failure'),
        settings.embeddingDeadlineMs,
      );
      let pending: Promise<Float32Array[]>;
      try {
        pending = embedder.embed([query.slice(0, MAX_QUERY_SCAN_CHARS)], { signal: controller.signal });
      } catch {
        finish({ ok: false, cause: 'embeddingError' }, 'failure');
        return;
      }
      Promise.resolve(pending).then(
        (vectors) => {
          const vector = Array.isArray(vectors) ? vectors[0] : undefined;
          // A vector of the wrong length is never searched: the store would refuse it, or worse, mis-rank.
          if (!isValidVector(vector, dimensions)) {
            finish({ ok: false, cause: 'embeddingError' }, 'failure');
            return;
          }
          // An all-zero vector (a text without features) carries no signal: no vector search, no failure.
          finish({ ok: true, vector: isZero(vector) ? null : vector, ms: mono() - started }, 'success');
        },
        () => finish({ ok: false, cause: 'embeddingError' }, 'failure'),
      );
    });
  };

  const run = async (
    recorder: ExecutionRecorder,
    call: ValidatedCall,
    agentId: string,
    query: string,
    stop: AbortSignal,
  ): Promise<RetrievalResult[]> => {
    const { signal } = call;
    const checkAbort = (): void => {
      if (signal?.aborted === true) throw CANCELLED;
    };
    if (!settings.arms.lexical && !settings.arms.vector) {
      recorder.outcome = 'disabled';
      return [];
    }
    checkAbort();

    // 1. Keywords and the FTS arm, while the query embedding runs.
    const keywordStart = mono();
    const { terms } = extractKeywords(query, { maxTerms: settings.maxTerms });
    if (terms.length === 0) {
      recorder.stage('keyword', mono() - keywordStart);
      recorder.outcome = 'emptyQuery';
      return [];
    }
    let embedding: Promise<EmbedOutcome> | undefined;
    if (settings.arms.vector) {
      const plan = vectorPlan();
      if (plan === null) recorder.degradations.add('vectorCold');
      else embedding = embedQuery(agentId, query, plan.dimensions, signal, stop);
    }

    let lexicalOn = settings.arms.lexical;
    const lexical: ArmState = { budget: settings.candidateBudget, hits: [], saturated: false };
    const searchLexical = async (budget: number): Promise<void> => {
      const result = await storeCall(() =>
        store.searchLexical({
          agentId,
          terms,
          mode: 'any',
          limit: budget,
          kinds: call.kinds,
          ...(call.tags.length > 0 ? { tags: call.tags } : {}),
        }),
      );
      lexical.budget = budget;
      lexical.hits = result.hits.map((hit: LexicalHit) => ({
        id: hit.id,
        revision: hit.revision,
        score: hit.score,
      }));
      lexical.saturated = result.hits.length >= budget;
      recorder.fts = lexical.hits.length;
    };
    if (lexicalOn) {
      try {
        await searchLexical(lexical.budget);
        recorder.arms.add('lexical');
      } catch (error) {
        if (!(error instanceof StoreFailure) || error.cause !== 'ftsUnavailable') throw error;
        recorder.degradations.add('ftsUnavailable');
        lexicalOn = false;
      }
    }
    recorder.stage('keyword', mono() - keywordStart);
    checkAbort();

    // 2. The query embedding (already running) and 3. the vector arm.
    let queryVector: Float32Array | null = null;
    if (embedding !== undefined) {
      const outcome = await embedding;
      if (!outcome.ok && outcome.cause === CANCELLED) throw CANCELLED;
      if (outcome.ms !== undefined) recorder.stage('queryEmbedding', outcome.ms);
      if (outcome.ok) queryVector = outcome.vector;
      else recorder.degradations.add(outcome.cause as DegradationCause);
    }
    checkAbort();

    const vector: ArmState = { budget: settings.candidateBudget, hits: [], saturated: false };
    let vectorOn = queryVector !== null;
    // The arm's confidence comes from its first hits, before the threshold: the same for every budget ≥ depth.
    let vectorWeight = settings.fusion.vector;
    const searchVector = async (budget: number): Promise<void> => {
      const raw = await storeCall(() =>
        store.searchVector({ agentId, vector: queryVector as Float32Array, k: budget }),
      );
      vector.budget = budget;
      if (settings.vectorEvidence !== false) {
        const top = raw.slice(0, settings.vectorEvidence.depth).map((hit: VectorHit) => hit.similarity);
        vectorWeight = settings.fusion.vector * vectorConfidence(top, settings.vectorEvidence);
      }
      vector.hits = raw
        .filter((hit: VectorHit) => hit.similarity >= settings.similarityThreshold)
        .map((hit: VectorHit) => ({ id: hit.id, similarity: hit.similarity }));
      // Deeper hits can only be less similar: refilling helps only when every hit cleared the threshold.
      vector.saturated = raw.length >= budget && vector.hits.length === raw.length;
      recorder.vector = vector.hits.length;
    };
    // A failing vector arm degrades the answer to FTS-only; it never fails it.
    const vectorFailed = (error: unknown): void => {
      if (!(error instanceof StoreFailure)) throw error;
      recorder.degradations.add(error.cause);
      vectorOn = false;
      vector.hits = [];
      recorder.vector = 0;
    };
    if (vectorOn) {
      const vectorStart = mono();
      try {
        await searchVector(vector.budget);
        recorder.arms.add('vector');
      } catch (error) {
        vectorFailed(error);
      }
      recorder.stage('vector', mono() - vectorStart);
      checkAbort();
    }

    // 4. Authoritative revalidation, filtering, and 6. refill of starved arms, up to the hard cap.
    const revalidationStart = mono();
    const checked = new Map<string, MemoryRecord | null>();
    const kindSet = new Set<MemoryKind>(call.kinds);
    const passes = (record: MemoryRecord): boolean =>
      kindSet.has(record.kind) && call.tags.every((tag) => record.tags.includes(tag));
    const revalidate = async (): Promise<void> => {
      const wanted = new Map<string, number | undefined>();
      for (const hit of lexical.hits) if (!checked.has(hit.id)) wanted.set(hit.id, hit.revision);
      for (const hit of vector.hits)
        if (!checked.has(hit.id) && !wanted.has(hit.id)) wanted.set(hit.id, undefined);
      if (wanted.size === 0) return;
      const rows = await storeCall(() =>
        store.revalidate(
          agentId,
          [...wanted].map(([id, revision]) => (revision === undefined ? { id } : { id, revision })),
        ),
      );
      for (const row of rows) checked.set(row.id, row);
      // A lexical candidate dropped at its revision may still be active at a newer one: a concurrent edit.
      const stale = [...wanted]
        .filter(([id, revision]) => revision !== undefined && !checked.has(id))
        .map(([id]) => id);
      if (stale.length > 0) {
        const current = await storeCall(() =>
          store.revalidate(
            agentId,
            stale.map((id) => ({ id })),
          ),
        );
        for (const row of current) checked.set(row.id, row);
      }
      for (const id of wanted.keys()) if (!checked.has(id)) checked.set(id, null);
    };
    const validLexical = (): { hit: ArmHit; record: MemoryRecord }[] => {
      const valid: { hit: ArmHit; record: MemoryRecord }[] = [];
      for (const hit of lexical.hits) {
        const record = checked.get(hit.id);
        if (record === undefined || record === null) continue;
        if (hit.revision !== undefined && record.revision !== hit.revision) {
          recorder.degradations.add('revisionChanged');
          continue;
        }
        if (passes(record)) valid.push({ hit, record });
      }
      return valid;
    };
    const validVector = (): { hit: ArmHit; record: MemoryRecord }[] => {
      const valid: { hit: ArmHit; record: MemoryRecord }[] = [];
      for (const hit of vector.hits) {
        const record = checked.get(hit.id);
        if (record !== undefined && record !== null && passes(record)) valid.push({ hit, record });
      }
      return valid;
    };
    const needsRefill = (arm: ArmState, validCount: number): 'no' | 'yes' | 'capped' => {
      if (validCount >= settings.refillTarget || validCount >= arm.hits.length || !arm.saturated) return 'no';
      return arm.budget >= settings.refillMaxBudget ? 'capped' : 'yes';
    };

    await revalidate();
    let lexicalValid = validLexical();
    let vectorValid = validVector();
    for (;;) {
      checkAbort();
      const lexicalNeed = lexicalOn ? needsRefill(lexical, lexicalValid.length) : 'no';
      const vectorNeed = vectorOn ? needsRefill(vector, vectorValid.length) : 'no';
      if (lexicalNeed === 'capped' || vectorNeed === 'capped')
        recorder.degradations.add('candidateBudgetExhausted');
      if (lexicalNeed !== 'yes' && vectorNeed !== 'yes') break;
      if (lexicalNeed === 'yes') {
        await searchLexical(Math.min(settings.refillMaxBudget, lexical.budget * 2));
      }
      if (vectorNeed === 'yes') {
        try {
          await searchVector(Math.min(settings.refillMaxBudget, vector.budget * 2));
        } catch (error) {
          vectorFailed(error);
        }
      }
      await revalidate();
      lexicalValid = validLexical();
      vectorValid = validVector();
    }
    recorder.stage('authoritativeRevalidation', mono() - revalidationStart);
    checkAbort();

    // 5. Fusion, 7. explanation.
    const assemblyStart = mono();
    const candidates = new Map<string, FusionCandidate>();
    lexicalValid.forEach(({ hit, record }, index) => {
      candidates.set(record.id, {
        record,
        lexicalRank: index + 1,
        ...(hit.score === undefined ? {} : { lexicalScore: hit.score }),
      });
    });
    vectorValid.forEach(({ hit, record }, index) => {
      const existing = candidates.get(record.id);
      candidates.set(record.id, {
        ...(existing ?? { record }),
        vectorRank: index + 1,
        ...(hit.similarity === undefined ? {} : { similarity: hit.similarity }),
      });
    });
    const results = fuseCandidates([...candidates.values()], settings.fusion, now(), vectorWeight).slice(
      0,
      call.limit,
    );
    recorder.selected = results.length;
    recorder.stage('assembly', mono() - assemblyStart);
    recorder.outcome = 'completed';
    return results;
  };

  const retrieve = async (
    purpose: RetrievalPurpose,
    agentId: string,
    query: string,
    options?: RetrieveOptions,
  ): Promise<RetrievalResponse> => {
    const call = validateCall(purpose, agentId, query, options);
    const recorder = new ExecutionRecorder(purpose, agentId, now(), mono());
    const stop = new AbortController();
    let results: readonly RetrievalResult[] = [];
    let execution: RetrievalExecution | undefined;
    try {
      results = await run(recorder, call, agentId, query, stop.signal);
    } catch (error) {
      results = [];
      if (error === CANCELLED || call.signal?.aborted === true) {
        recorder.outcome = 'cancelled';
      } else {
        recorder.outcome = 'failed';
        recorder.degradations.add(error instanceof StoreFailure ? error.cause : 'unknown');
      }
    } finally {
      stop.abort();
      execution = recorder.settle(mono());
      try {
        observer.onRetrieval(execution);
      } catch {
        // An observer failure must never change or delay a result.
      }
    }
    if (settings.trackAccess && purpose !== 'decision' && results.length > 0) {
      recordAccess(
        agentId,
        results.map((result) => result.record.id),
      );
    }
    return { results, execution };
  };

  const bind =
    (purpose: RetrievalPurpose): RetrieveFunction =>
    (agentId, query, options) =>
      retrieve(purpose, agentId, query, options);

  return Object.freeze({
    recall: bind('recall'),
    search: bind('search'),
    decision: bind('decision'),
    injection: bind('injection'),
    retrieve,
    circuit: () => breaker.snapshot(),
    settings,
  });
}
