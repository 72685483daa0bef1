import type { RetrievalObserver } from '@engram/contracts/observers';
import type { Timers } from '@engram/contracts/rules';
import { DEFAULT_COOLDOWN_MS, DEFAULT_FAILURE_THRESHOLD } from '../circuit.js';
import {
  type ConversationScoring,
  DEFAULT_CONVERSATION_SCORING,
  NO_CONVERSATION_SCORING,
} from '../conversation.js';
import { EngramRetrievalError } from '../errors.js';
import {
  DEFAULT_FUSION_WEIGHTS,
  DEFAULT_VECTOR_EVIDENCE,
  type FusionWeights,
  type VectorEvidence,
} from '../fusion.js';
import { DEFAULT_MAX_TERMS } from '../keywords.js';
import {
  DEFAULT_LONG_MEMORY_SCORING,
  type LongMemoryScoring,
  NO_LONG_MEMORY_SCORING,
} from '../long-memory.js';
import type { QueryEmbedder, Reranker, RetrievalStore } from '../ports.js';
import { DEFAULT_TIME_SCORING, NO_TIME_SCORING, type TimeScoring } from '../time.js';

/** Default number of results. */
export const DEFAULT_LIMIT = 10;
/** Largest number of results a call may ask for; a larger `limit` is clamped to it. */
export const MAX_LIMIT = 100;
/** Most tag filters per call. */
export const MAX_TAG_FILTERS = 16;

/** Which arms run; both by default. Evaluation runs FTS-only, vector-only and hybrid through this switch. */
export interface RetrievalArms {
  readonly lexical: boolean;
  readonly vector: boolean;
}

/** Default number of fused results the reranker reorders. */
export const DEFAULT_RERANK_CANDIDATES = 20;
/** Default budget of one rerank call, in ms. */
export const DEFAULT_RERANK_TIMEOUT_MS = 1000;

/**
 * The rerank stage (off unless configured): after fusion, the first `candidates` results are scored by a
 * cross-encoder and reordered by its scores; the rest follow in the fused order, and the call then keeps its
 * `limit`. A call that takes longer than `timeoutMs`, rejects or answers malformed scores keeps the fused
 * order and is reported as degraded (`rerankTimeout`, `rerankError`). `decision` lookups (the extraction's
 * neighbour search) are never reranked.
 */
export interface RerankConfig {
  /** The reranker (a cross-encoder behind the {@link Reranker} port). */
  readonly model: Reranker;
  /** How many of the fused results are reranked (integer 1..100, default 20). */
  readonly candidates?: number;
  /** Budget of one rerank call in ms (integer 1..600,000, default 1,000). */
  readonly timeoutMs?: number;
}

/** Configuration of `createRetriever`; frozen at construction. */
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
  readonly timers?: Timers;
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
   * Conversation structure in the lexical arm (see {@link ConversationScoring}): a memory with a session and a
   * position gains a share of its best neighbour's score and its session's prior; `false` turns it off.
   * Memories without a session, and `decision` lookups, are never affected. Missing fields take the defaults.
   */
  readonly conversation?: Partial<ConversationScoring> | false;
  /**
   * Long memories in the lexical arm (see {@link LongMemoryScoring}): when the arm's answer holds a memory stored
   * in chunks, each memory gains a prior from its score as a whole memory; `false` scores every memory as its
   * best chunk. Missing fields take the defaults.
   */
  readonly longMemory?: Partial<LongMemoryScoring> | false;
  /**
   * Time in queries (see {@link TimeScoring}): a memory whose time falls in the window the query names ("last
   * week", "in March 2023") gains a share of its lexical score; `false` turns it off. `decision` lookups are
   * never affected.
   */
  readonly time?: Partial<TimeScoring> | false;
  /**
   * Calibration of the vector arm's per-call weight (see {@link VectorEvidence}); `false` gives the arm its full
   * weight on every call. The margins are relative to the first hit's similarity, so they hold when an
   * embedder's similarities are all a multiple of another's; an embedder whose unrelated texts sit far above 0
   * reads as a smaller margin, and may want lower margins.
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
  /** A rerank stage after fusion (see {@link RerankConfig}); off by default. */
  readonly rerank?: RerankConfig;
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
  readonly conversation: ConversationScoring;
  readonly longMemory: LongMemoryScoring;
  readonly time: TimeScoring;
  readonly vectorEvidence: VectorEvidence | false;
  readonly trackAccess: boolean;
  /** The rerank stage's budget, or null when no reranker is configured. */
  readonly rerank: { readonly candidates: number; readonly timeoutMs: number } | null;
}

function invalidConfig(field: string, rule: string): EngramRetrievalError {
  return new EngramRetrievalError(
    'ENGRAM_RETRIEVAL_INVALID_CONFIG',
    `Retriever config "${field}" must be ${rule}.`,
  );
}

/** A setting in `min..max` (default `fallback`): an integer, or any finite number. */
function rangedSetting(
  kind: 'integer' | 'finite',
  value: number | undefined,
  fallback: number,
  field: string,
  min: number,
  max: number,
): number {
  const v = value ?? fallback;
  const valid = kind === 'integer' ? Number.isInteger(v) : Number.isFinite(v);
  if (!valid || v < min || v > max) {
    throw invalidConfig(field, `${kind === 'integer' ? 'an integer' : 'a finite number'} in ${min}..${max}`);
  }
  return v;
}

type SettingReader = (
  value: number | undefined,
  fallback: number,
  field: string,
  min: number,
  max: number,
) => number;
const intSetting: SettingReader = (...args) => rangedSetting('integer', ...args);
const numberSetting: SettingReader = (...args) => rangedSetting('finite', ...args);

/** Validates a retriever configuration and resolves its defaults; throws `ENGRAM_RETRIEVAL_INVALID_CONFIG`. */
export function resolveSettings(config: RetrieverConfig): RetrieverSettings {
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
  const fusion = resolveFusionWeights(config.fusion ?? {});
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
    conversation: resolveConversation(config.conversation),
    longMemory: resolveLongMemory(config.longMemory),
    time: resolveTime(config.time),
    vectorEvidence: resolveVectorEvidence(config.vectorEvidence),
    trackAccess,
    rerank: resolveRerank(config.rerank),
  });
}

function resolveRerank(input: RerankConfig | undefined): RetrieverSettings['rerank'] {
  if (input === undefined) return null;
  if (typeof input !== 'object' || input === null) throw invalidConfig('rerank', 'an object');
  const model: unknown = input.model;
  if (typeof model !== 'object' || model === null || typeof (model as Reranker).rerank !== 'function') {
    throw invalidConfig('rerank.model', 'a reranker (an object with a rerank function)');
  }
  return Object.freeze({
    candidates: intSetting(input.candidates, DEFAULT_RERANK_CANDIDATES, 'rerank.candidates', 1, MAX_LIMIT),
    timeoutMs: intSetting(input.timeoutMs, DEFAULT_RERANK_TIMEOUT_MS, 'rerank.timeoutMs', 1, 600_000),
  });
}

function resolveFusionWeights(input: Partial<FusionWeights>): FusionWeights {
  const weight = (field: 'k' | 'lexical' | 'vector' | 'importance' | 'recency'): number =>
    numberSetting(input[field], DEFAULT_FUSION_WEIGHTS[field], `fusion.${field}`, 0, 1e6);
  const method = input.method ?? DEFAULT_FUSION_WEIGHTS.method;
  if (method !== 'calibrated' && method !== 'rrf')
    throw invalidConfig('fusion.method', '"calibrated" or "rrf"');
  return Object.freeze({
    method,
    alpha: numberSetting(input.alpha, DEFAULT_FUSION_WEIGHTS.alpha, 'fusion.alpha', 0, 1),
    agreementDepth: intSetting(
      input.agreementDepth,
      DEFAULT_FUSION_WEIGHTS.agreementDepth,
      'fusion.agreementDepth',
      1,
      100,
    ),
    agreementPower: numberSetting(
      input.agreementPower,
      DEFAULT_FUSION_WEIGHTS.agreementPower,
      'fusion.agreementPower',
      0,
      16,
    ),
    k: weight('k'),
    lexical: weight('lexical'),
    vector: weight('vector'),
    importance: weight('importance'),
    recency: weight('recency'),
    recencyHalfLifeMs: numberSetting(
      input.recencyHalfLifeMs,
      DEFAULT_FUSION_WEIGHTS.recencyHalfLifeMs,
      'fusion.recencyHalfLifeMs',
      1,
      Number.MAX_SAFE_INTEGER,
    ),
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

function resolveConversation(input: Partial<ConversationScoring> | false | undefined): ConversationScoring {
  if (input === false) return NO_CONVERSATION_SCORING;
  if (input !== undefined && (typeof input !== 'object' || input === null)) {
    throw invalidConfig('conversation', 'an object or false');
  }
  const d = DEFAULT_CONVERSATION_SCORING;
  return Object.freeze({
    neighbour: numberSetting(input?.neighbour, d.neighbour, 'conversation.neighbour', 0, 10),
    session: numberSetting(input?.session, d.session, 'conversation.session', 0, 10),
    depth: intSetting(input?.depth, d.depth, 'conversation.depth', 1, 1000),
  });
}

function resolveLongMemory(input: Partial<LongMemoryScoring> | false | undefined): LongMemoryScoring {
  if (input === false) return NO_LONG_MEMORY_SCORING;
  if (input !== undefined && (typeof input !== 'object' || input === null)) {
    throw invalidConfig('longMemory', 'an object or false');
  }
  return Object.freeze({
    weight: numberSetting(input?.weight, DEFAULT_LONG_MEMORY_SCORING.weight, 'longMemory.weight', 0, 4),
  });
}

function resolveTime(input: Partial<TimeScoring> | false | undefined): TimeScoring {
  if (input === false) return NO_TIME_SCORING;
  if (input !== undefined && (typeof input !== 'object' || input === null)) {
    throw invalidConfig('time', 'an object or false');
  }
  return Object.freeze({
    boost: numberSetting(input?.boost, DEFAULT_TIME_SCORING.boost, 'time.boost', 0, 10),
  });
}
