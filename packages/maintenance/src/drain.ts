import { type DrainBatchReport, type MaintenanceObserver, noopMaintenanceObserver } from '@engram/contracts';
import { engramErrorCode } from '@engram/contracts/errors';
import type { EmbeddingCommitResult, EmbeddingOutcome, PendingEmbedding } from '@engram/store';
import { type Clock, systemClock } from './clock.js';
import { checkIdArgument, EngramMaintenanceError, isLocalRejection } from './errors.js';
import type { EmbedderPort } from './ports.js';
import { safeNotify } from './safe-observer.js';

/** The code a row gets when the embedder answered a vector that is not finite or not of the profile's width. */
export const MALFORMED_VECTOR_ERROR = 'ENGRAM_EMBEDDING_MALFORMED_VECTOR';

import type { DrainStore } from './store-ports.js';

/** The longest error code the store keeps (`@engram/store`'s rule); a longer one is not kept. */
const MAX_CODE_LENGTH = 64;

/** A failed embed call's typed code when it has one the store keeps, else undefined. */
function embeddingErrorCode(error: unknown): string | undefined {
  const code = engramErrorCode(error);
  return code !== undefined && code.length <= MAX_CODE_LENGTH ? code : undefined;
}

/** Construction of an embedding drain. */
export interface EmbeddingDrainConfig {
  readonly store: DrainStore;
  /** Without an embedder every drained row becomes `ftsOnly`. */
  readonly embedder?: EmbedderPort | null;
  readonly observer?: MaintenanceObserver;
  readonly clock?: Clock;
  /** Rows per batch (default 64, at most 1,000). */
  readonly batchSize?: number;
  /** Batches per run when the call does not say (default 16). */
  readonly maxBatchesPerRun?: number;
  /** `error` rows with fewer attempts than this are retried by later runs (default 3). */
  readonly maxAttempts?: number;
  /** Progress of a run: rows done so far and the rows the run expects to process. */
  readonly onProgress?: (done: number, total: number) => void;
}

/** Options of one drain run. */
export interface DrainRunOptions {
  /** One agent, or all agents when omitted. */
  readonly agentId?: string;
  /** Overrides `maxBatchesPerRun`. */
  readonly maxBatches?: number;
  /** Only these rows (at most 1,000), e.g. the rows a maintenance pass just wrote. */
  readonly ids?: readonly string[];
  readonly signal?: AbortSignal;
}

/** Terminal outcomes of a drain run. `deferred`: the gateway rejected locally (rate limit, capacity); rows stay `pending`. */
export type DrainRunOutcome = 'completed' | 'skipped' | 'deferred' | 'cancelled' | 'failed';

/** The answer of one drain run. */
export interface DrainRunResult {
  readonly outcome: DrainRunOutcome;
  /** `busy` when another run for the same agent (or an all-agents run) was in flight: this call did nothing. */
  readonly skipped: 'busy' | null;
  readonly batches: number;
  readonly rows: number;
  readonly transitions: EmbeddingCommitResult;
  /** `pending` rows left (for the agent, or in total) after the run; null when the count failed. */
  readonly backlog: number | null;
  /** The error code of a failed run (a store or maintenance code), never a message. */
  readonly errorCode?: string;
}

/**
 * The embedding drain: batches of pending rows → embedder → revision-checked commit.
 *
 * Transitions: a well-formed vector → `ready`; a malformed one (wrong length, NaN) or a failed embed call →
 * `error` (the store counts the attempt; rows below `maxAttempts` are retried by later runs, never twice in
 * one run); an all-zero vector or no embedder → `ftsOnly`; a row edited while it was being embedded →
 * `stale` (left `pending` for the next run with its new content, never given the old vector). A local
 * rejection by the gateway (rate limit, capacity) stops the run as `deferred` and leaves the rows `pending`.
 *
 * Reporting: each batch is committed and reported (`onDrainBatch`) per agent — a run without an agent id
 * whose batch holds rows of several agents commits each agent's rows in its own transaction and reports each
 * agent under its own id, never under a placeholder.
 *
 * Concurrency: one run per agent at a time. A run for an agent that already has one in flight — or any run
 * while an all-agents run is in flight, or an all-agents run while any run is in flight — returns at once
 * with `{ outcome: 'skipped', skipped: 'busy' }` and does nothing (it does not join the running one).
 */
export interface EmbeddingDrain {
  run(options?: DrainRunOptions): Promise<DrainRunResult>;
}

const ALL_AGENTS = '\u0000*';

function zeroTransitions(): { ready: number; error: number; ftsOnly: number; stale: number } {
  return { ready: 0, error: 0, ftsOnly: 0, stale: 0 };
}

/** What an outcome names: the row, its revision, and the chunk for a chunked memory's item. */
function target(r: PendingEmbedding): { id: string; revision: number; chunk?: number } {
  return r.chunk === undefined
    ? { id: r.id, revision: r.revision }
    : { id: r.id, revision: r.revision, chunk: r.chunk };
}

/** Splits a batch's outcomes by the agent of each row, agents in order of first appearance. */
function groupByAgent(
  rows: readonly PendingEmbedding[],
  outcomes: readonly EmbeddingOutcome[],
): { readonly agentId: string; readonly outcomes: EmbeddingOutcome[] }[] {
  const byAgent = new Map<string, EmbeddingOutcome[]>();
  rows.forEach((row, i) => {
    const outcome = outcomes[i];
    if (outcome === undefined) return;
    const list = byAgent.get(row.agentId);
    if (list === undefined) byAgent.set(row.agentId, [outcome]);
    else list.push(outcome);
  });
  return [...byAgent].map(([agentId, list]) => ({ agentId, outcomes: list }));
}

/**
 * Classifies a vector from the embedder: `ok` (exactly `dimensions` finite components, not all zero), `zero`
 * (well-formed but all zero: the text had no feature, so the row is searchable lexically only) or
 * `malformed` (not a Float32Array, wrong length, NaN or Infinity).
 */
export function classifyVector(vector: unknown, dimensions: number): 'ok' | 'zero' | 'malformed' {
  if (!(vector instanceof Float32Array) || vector.length !== dimensions) return 'malformed';
  let norm = 0;
  for (let i = 0; i < vector.length; i += 1) {
    const x = vector[i] as number;
    if (!Number.isFinite(x)) return 'malformed';
    norm += x * x;
  }
  if (!Number.isFinite(norm)) return 'malformed';
  return norm === 0 ? 'zero' : 'ok';
}

function positiveInt(name: string, value: number, max: number): number {
  if (!Number.isInteger(value) || value < 1 || value > max) {
    throw new EngramMaintenanceError('ENGRAM_MAINTENANCE_INVALID_CONFIG', `Invalid drain setting: ${name}.`);
  }
  return value;
}

/** Creates an embedding drain; throws `ENGRAM_MAINTENANCE_PROFILE_MISMATCH` when embedder and store disagree on the profile. */
export function createEmbeddingDrain(config: EmbeddingDrainConfig): EmbeddingDrain {
  const store = config.store;
  const embedder = config.embedder ?? null;
  const observer = config.observer ?? noopMaintenanceObserver;
  const clock = config.clock ?? systemClock;
  const batchSize = positiveInt('batchSize', config.batchSize ?? 64, 1000);
  const maxBatchesPerRun = positiveInt('maxBatchesPerRun', config.maxBatchesPerRun ?? 16, 1_000_000);
  const maxAttempts = positiveInt('maxAttempts', config.maxAttempts ?? 3, 1000);
  const onProgress = config.onProgress;
  if (embedder !== null) {
    const profile = store.embeddingProfile;
    if (
      profile === null ||
      profile.id !== embedder.profile.id ||
      profile.dimensions !== embedder.profile.dimensions
    ) {
      throw new EngramMaintenanceError(
        'ENGRAM_MAINTENANCE_PROFILE_MISMATCH',
        "The embedder's profile does not match the store's embedding profile.",
      );
    }
  }
  const active = new Set<string>();

  function isBusy(key: string): boolean {
    if (active.has(ALL_AGENTS)) return true;
    if (key === ALL_AGENTS) return active.size > 0;
    return active.has(key);
  }

  async function backlogFor(agentId: string | undefined): Promise<number | null> {
    try {
      const backlog = await store.countEmbeddingBacklog();
      let activeAgents = 0;
      for (const n of Object.values(backlog.byAgent)) if (n > 0) activeAgents += 1;
      safeNotify(() => observer.onEmbeddingBacklog?.({ total: backlog.total, activeAgents }));
      return agentId === undefined ? backlog.total : (backlog.byAgent[agentId] ?? 0);
    } catch {
      return null;
    }
  }

  /** Embeds one batch; returns the outcomes to commit, or a local rejection / abort to stop the run. */
  async function embedBatch(
    rows: readonly PendingEmbedding[],
    signal: AbortSignal | undefined,
  ): Promise<{ outcomes: EmbeddingOutcome[] } | { stop: 'deferred' | 'cancelled' }> {
    if (embedder === null) {
      return { outcomes: rows.map((r) => ({ ...target(r), state: 'ftsOnly' as const })) };
    }
    let vectors: unknown;
    try {
      vectors = await embedder.embed(
        rows.map((r) => r.content),
        signal === undefined ? {} : { signal },
      );
    } catch (error) {
      if (signal?.aborted === true) return { stop: 'cancelled' };
      if (isLocalRejection(error)) return { stop: 'deferred' };
      // The embedder's typed code is kept with each row (never its message); an untyped failure keeps none.
      const code = embeddingErrorCode(error);
      return {
        outcomes: rows.map((r) => ({
          ...target(r),
          state: 'error' as const,
          ...(code === undefined ? {} : { code }),
        })),
      };
    }
    if (signal?.aborted === true) return { stop: 'cancelled' };
    const dims = embedder.profile.dimensions;
    const list = Array.isArray(vectors) && vectors.length === rows.length ? vectors : null;
    return {
      outcomes: rows.map((r, i): EmbeddingOutcome => {
        const v: unknown = list?.[i];
        const kind = list === null ? 'malformed' : classifyVector(v, dims);
        if (kind === 'ok') return { ...target(r), state: 'ready', vector: v as Float32Array };
        // An all-zero vector carries no signal (cosine is undefined): the row is lexical-only, not an error.
        if (kind === 'zero') return { ...target(r), state: 'ftsOnly' };
        return { ...target(r), state: 'error', code: MALFORMED_VECTOR_ERROR };
      }),
    };
  }

  async function drain(options: DrainRunOptions): Promise<DrainRunResult> {
    const agentId = options.agentId;
    const signal = options.signal;
    const maxBatches = options.maxBatches ?? maxBatchesPerRun;
    const transitions = zeroTransitions();
    let batches = 0;
    let rows = 0;
    let outcome: DrainRunOutcome = 'completed';
    let errorCode: string | undefined;
    const erroredThisRun = new Set<string>();
    // Pending rows first; then a bounded retry of `error` rows that did not fail in this very run.
    let retrying = false;
    try {
      let total = 0;
      if (onProgress !== undefined) {
        const start = await store.countEmbeddingBacklog();
        const pending = agentId === undefined ? start.total : (start.byAgent[agentId] ?? 0);
        total = Math.min(pending, maxBatches * batchSize, options.ids?.length ?? Number.POSITIVE_INFINITY);
        safeNotify(() => onProgress(0, total));
      }
      while (batches < maxBatches) {
        if (signal?.aborted === true) {
          outcome = 'cancelled';
          break;
        }
        const listed = await store.listPendingEmbeddings({
          ...(agentId === undefined ? {} : { agentId }),
          ...(options.ids === undefined ? {} : { ids: options.ids }),
          limit: batchSize,
          ...(retrying ? { retryErrorsBelowAttempts: maxAttempts } : {}),
        });
        const batch = retrying ? listed.filter((r) => !erroredThisRun.has(r.id)) : listed;
        if (batch.length === 0) {
          if (retrying || maxAttempts <= 1) break;
          retrying = true;
          continue;
        }
        const started = clock.now();
        const embedded = await embedBatch(batch, signal);
        if ('stop' in embedded) {
          outcome = embedded.stop;
          break;
        }
        // One commit (one transaction) per agent of the batch, so every transition — `stale` included, which
        // only the store can tell — is reported under its real agent, right after that agent's rows are
        // committed. A batch of one agent (always the case for a run with an agent id) is one commit.
        let committedGroups = 0;
        for (const group of groupByAgent(batch, embedded.outcomes)) {
          const result = await store.commitEmbeddings(group.outcomes);
          committedGroups += 1;
          if (committedGroups === 1) batches += 1;
          rows += group.outcomes.length;
          for (const o of group.outcomes) if (o.state === 'error') erroredThisRun.add(o.id);
          transitions.ready += result.ready;
          transitions.error += result.error;
          transitions.ftsOnly += result.ftsOnly;
          transitions.stale += result.stale;
          const report: DrainBatchReport = {
            agentId: group.agentId,
            batchSize: group.outcomes.length,
            durationMs: Math.max(0, clock.now() - started),
            transitions: {
              ready: result.ready,
              error: result.error,
              ftsOnly: result.ftsOnly,
              stale: result.stale,
            },
          };
          safeNotify(() => observer.onDrainBatch?.(report));
        }
        if (onProgress !== undefined) {
          const done = rows;
          total = Math.max(total, done);
          safeNotify(() => onProgress(done, total));
        }
      }
    } catch (error) {
      outcome = signal?.aborted === true ? 'cancelled' : 'failed';
      errorCode = engramErrorCode(error) ?? 'UNKNOWN';
    }
    const backlog = await backlogFor(agentId);
    return {
      outcome,
      skipped: null,
      batches,
      rows,
      transitions,
      backlog,
      ...(errorCode === undefined ? {} : { errorCode }),
    };
  }

  return {
    async run(options: DrainRunOptions = {}): Promise<DrainRunResult> {
      if (options.agentId !== undefined) checkIdArgument(options.agentId, 'agentId');
      const key = options.agentId ?? ALL_AGENTS;
      if (isBusy(key)) {
        return {
          outcome: 'skipped',
          skipped: 'busy',
          batches: 0,
          rows: 0,
          transitions: zeroTransitions(),
          backlog: null,
        };
      }
      active.add(key);
      try {
        return await drain(options);
      } finally {
        active.delete(key);
      }
    },
  };
}
