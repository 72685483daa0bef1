import type { RetrievalPurpose } from '@engram/contracts/enums';
import {
  type CircuitSnapshot,
  noopRetrievalObserver,
  type RetrievalExecution,
} from '@engram/contracts/observers';
import { systemTimers } from '@engram/contracts/rules';
import { type CircuitBreaker, createCircuitBreaker } from './circuit.js';
import type { RetrievalResult } from './explanation.js';
import { defaultDefer, recordAccess } from './pipeline/access.js';
import { assemblyStage } from './pipeline/assembly.js';
import { conflictStage } from './pipeline/conflicts.js';
import { keywordStage } from './pipeline/lexical.js';
import { neighbourStage } from './pipeline/neighbours.js';
import { awaitQueryEmbedding, createQueryEmbeddingGuard } from './pipeline/query-embedding.js';
import { ExecutionRecorder } from './pipeline/recorder.js';
import { rerankStage } from './pipeline/rerank.js';
import { revalidateLexicalEarly, revalidationStage } from './pipeline/revalidation.js';
import { type RetrieverConfig, type RetrieverSettings, resolveSettings } from './pipeline/settings.js';
import {
  CANCELLED,
  type CallState,
  checkAbort,
  createCallState,
  type PipelineContext,
  StoreFailure,
} from './pipeline/state.js';
import { type RetrieveOptions, validateCall } from './pipeline/validate.js';
import { vectorStage } from './pipeline/vector.js';

export type { RerankConfig, RetrievalArms, RetrieverConfig, RetrieverSettings } from './pipeline/settings.js';
export type { RetrieveOptions } from './pipeline/validate.js';

/** The reason the call's internal stop signal carries once the call has settled. */
const SETTLED: unique symbol = Symbol('settled');

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
 * programmer error (an agent id the store's rule refuses — blank, too long, a control character, a lone
 * surrogate —, an invalid limit, kinds or tags) throws an `EngramRetrievalError`, before anything is read or
 * reported: a caller's mistake is never counted as a store error. `recall`, `search` and `injection` record access to what they return after
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

/**
 * The pipeline: each stage reads the context and advances the call's state; the call ends at the last stage,
 * or earlier when both arms are off (`disabled`) or the query has no terms (`emptyQuery`).
 */
async function runPipeline(ctx: PipelineContext, state: CallState): Promise<void> {
  if (!ctx.settings.arms.lexical && !ctx.settings.arms.vector) {
    state.recorder.outcome = 'disabled';
    return;
  }
  checkAbort(state);
  // 1. Keywords and the FTS arm, while the query embedding runs.
  if (!(await keywordStage(ctx, state))) return;
  // The lexical candidates are revalidated while the k-NN still runs elsewhere.
  await revalidateLexicalEarly(ctx, state);
  // 2. The query embedding (already running) and 3. the vector arm.
  await awaitQueryEmbedding(ctx, state);
  await vectorStage(ctx, state);
  // 4. Authoritative revalidation, filtering, and refill of starved arms, up to the hard cap.
  await revalidationStage(ctx, state);
  // Conversation scoring: the lexical candidates' neighbours in their sessions join as candidates.
  await neighbourStage(ctx, state);
  // 5. Fusion and explanation, 6. the rerank of the fused head (when configured), 7. open contradictions
  // marked in the explanations.
  await assemblyStage(ctx, state);
  await rerankStage(ctx, state);
  await conflictStage(ctx, state);
}

/**
 * Creates the hybrid retriever. Pipeline per call: keyword extraction and the FTS arm (`keyword` stage) while
 * the query is embedded under a deadline, a per-agent in-flight cap and a circuit breaker (`queryEmbedding`);
 * the agent-partitioned vector arm with a similarity threshold (`vector`); authoritative revalidation,
 * kind/tag filtering and refill of starved arms (`authoritativeRevalidation`); fusion and explanation
 * (`assembly`). After the call has settled, a deferred, fire-and-forget access write.
 */
export function createRetriever(config: RetrieverConfig): Retriever {
  const settings = resolveSettings(config);
  const store = config.store;
  const embedder = config.embedder;
  const observer = config.observer ?? noopRetrievalObserver;
  const now = config.now ?? Date.now;
  const mono = config.monotonicNow ?? (() => performance.now());
  const defer = config.defer ?? defaultDefer;
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
  const timers = config.timers ?? systemTimers;
  const guard = createQueryEmbeddingGuard({ embedder, store, settings, breaker, timers, mono });
  const reranker = settings.rerank === null ? undefined : config.rerank?.model;
  const ctx: PipelineContext = { settings, store, guard, reranker, timers, now, mono };

  const retrieve = async (
    purpose: RetrievalPurpose,
    agentId: string,
    query: string,
    options?: RetrieveOptions,
  ): Promise<RetrievalResponse> => {
    const call = validateCall(purpose, agentId, query, options);
    const recorder = new ExecutionRecorder(purpose, agentId, now(), mono());
    const stop = new AbortController();
    const state = createCallState(ctx, { agentId, query, call, stop: stop.signal, recorder });
    let results: readonly RetrievalResult[] = [];
    let execution: RetrievalExecution | undefined;
    try {
      await runPipeline(ctx, state);
      results = state.results;
    } catch (error) {
      results = [];
      if (error === CANCELLED || call.signal?.aborted === true) {
        recorder.outcome = 'cancelled';
      } else {
        recorder.outcome = 'failed';
        recorder.degradations.add(error instanceof StoreFailure ? error.cause : 'unknown');
      }
    } finally {
      // With a reason: `abort()` without one builds a DOMException (a stack trace) on every call.
      stop.abort(SETTLED);
      execution = recorder.settle(mono());
      try {
        observer.onRetrieval(execution);
      } catch {
        // An observer failure must never change or delay a result.
      }
    }
    if (settings.trackAccess && purpose !== 'decision' && results.length > 0) {
      recordAccess(
        store,
        now,
        defer,
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
