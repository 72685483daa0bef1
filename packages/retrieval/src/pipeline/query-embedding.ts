import type { DegradationCause } from '@engram/contracts/enums';
import { createDeadline, type Timers } from '@engram/contracts/rules';
import type { EmbeddingProfile } from '@engram/store';
import type { CircuitBreaker } from '../circuit.js';
import { MAX_QUERY_SCAN_CHARS } from '../keywords.js';
import type { QueryEmbedder, RetrievalStore } from '../ports.js';
import type { RetrieverSettings } from './settings.js';
import { CANCELLED, type CallState, checkAbort, type EmbedOutcome, type PipelineContext } from './state.js';

/** Whether the vector arm can run, and the query vector's required length. */
export interface VectorPlan {
  readonly dimensions: number | undefined;
}

/** The query-embedding guard: a deadline, a per-agent in-flight cap and a circuit breaker around the embedder. */
export interface QueryEmbeddingGuard {
  /**
   * Null (the answer is `vectorCold`, and the query is not embedded) without an embedder, for a store without
   * a vector index, or when the store's profile and the embedder's differ. A store that does not expose its
   * profile trusts the embedder's.
   */
  plan(): VectorPlan | null;
  /** Embeds the query; never rejects. `stop` releases an embedding still running when the call settles. */
  embed(
    agentId: string,
    query: string,
    dimensions: number | undefined,
    signal: AbortSignal | undefined,
    stop: AbortSignal,
  ): Promise<EmbedOutcome>;
}

/** Ports of {@link createQueryEmbeddingGuard}. */
export interface QueryEmbeddingGuardConfig {
  readonly embedder: QueryEmbedder | undefined;
  readonly store: RetrievalStore;
  readonly settings: RetrieverSettings;
  readonly breaker: CircuitBreaker;
  readonly timers: Timers;
  readonly mono: () => number;
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

/** Creates the guard; its in-flight counts live as long as the retriever. */
export function createQueryEmbeddingGuard(config: QueryEmbeddingGuardConfig): QueryEmbeddingGuard {
  const { embedder, store, settings, breaker, timers, mono } = config;
  const inFlight = new Map<string, number>();

  const plan = (): VectorPlan | null => {
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

  const embed: QueryEmbeddingGuard['embed'] = (agentId, query, dimensions, signal, stop) => {
    if (embedder === undefined) return Promise.resolve({ ok: false, cause: 'vectorCold' });
    const current = inFlight.get(agentId) ?? 0;
    // Over the cap the embedder is not keeping up: degrade at once (reported like a timeout), never queue.
    if (current >= settings.maxInFlightEmbeddingsPerAgent)
      return Promise.resolve({ ok: false, cause: 'embeddingTimeout' });
    const permit = breaker.acquire();
    if (permit === null) return Promise.resolve({ ok: false, cause: 'embeddingCircuitOpen' });
    inFlight.set(agentId, current + 1);
    const started = mono();
    return new Promise<EmbedOutcome>((resolve) => {
      const finish = (outcome: EmbedOutcome, verdict: 'success' | 'failure' | 'release'): void => {
        const left = (inFlight.get(agentId) ?? 1) - 1;
        if (left <= 0) inFlight.delete(agentId);
        else inFlight.set(agentId, left);
        permit[verdict]();
        resolve(outcome.ok || outcome.cause === CANCELLED ? outcome : { ...outcome, ms: mono() - started });
      };
      // The deadline aborts the embedder's signal when it fires or the call is cancelled or settles (`stop`).
      const deadline = createDeadline({
        ms: settings.embeddingDeadlineMs,
        timers,
        signals: [signal, stop],
        onExpire: (expiry) =>
          expiry === 'deadline'
            ? finish({ ok: false, cause: 'embeddingTimeout' }, 'failure')
            : finish({ ok: false, cause: CANCELLED }, 'release'),
      });
      if (deadline.expired !== undefined) {
        finish({ ok: false, cause: CANCELLED }, 'release');
        return;
      }
      const failed = (): void => {
        if (deadline.settle()) finish({ ok: false, cause: 'embeddingError' }, 'failure');
      };
      let pending: Promise<Float32Array[]>;
      try {
        pending = embedder.embed([query.slice(0, MAX_QUERY_SCAN_CHARS)], { signal: deadline.signal });
      } catch {
        failed();
        return;
      }
      Promise.resolve(pending).then((vectors) => {
        const vector = Array.isArray(vectors) ? vectors[0] : undefined;
        // A vector of the wrong length is never searched: the store would refuse it, or worse, mis-rank.
        if (!isValidVector(vector, dimensions)) {
          failed();
          return;
        }
        // An all-zero vector (a text without features) carries no signal: no vector search, no failure.
        if (deadline.settle()) {
          finish({ ok: true, vector: isZero(vector) ? null : vector, ms: mono() - started }, 'success');
        }
      }, failed);
    });
  };

  return { plan, embed };
}

/** Starts the query embedding (while the FTS arm runs), or records `vectorCold` when it cannot run. */
export function startQueryEmbedding(ctx: PipelineContext, state: CallState): void {
  if (!ctx.settings.arms.vector) return;
  const plan = ctx.guard.plan();
  if (plan === null) state.recorder.degradations.add('vectorCold');
  else
    state.embedding = ctx.guard.embed(
      state.agentId,
      state.query,
      plan.dimensions,
      state.call.signal,
      state.stop,
    );
}

/** Stage `queryEmbedding`: awaits the running embedding; a failure degrades the answer, never fails it. */
export async function awaitQueryEmbedding(_ctx: PipelineContext, state: CallState): Promise<void> {
  if (state.embedding !== undefined) {
    const outcome = await state.embedding;
    if (!outcome.ok && outcome.cause === CANCELLED) throw CANCELLED;
    if (outcome.ms !== undefined) state.recorder.stage('queryEmbedding', outcome.ms);
    if (outcome.ok) state.queryVector = outcome.vector;
    else state.recorder.degradations.add(outcome.cause as DegradationCause);
  }
  checkAbort(state);
}
