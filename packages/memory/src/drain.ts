/**
 * The engine's full drain: run after run of the embedding drain until the backlog is empty, a run makes no
 * progress or stops early, or the caller aborts — with progress in rows of the backlog counted at the start.
 */
import type { DrainRunOptions, DrainRunResult } from '@engram/maintenance';
import type { EngineStore } from './open-store.js';

/** Totals of a full drain (every run until the backlog is empty or a run makes no progress). */
export interface DrainTotals {
  readonly rows: number;
  readonly ready: number;
  readonly error: number;
  /** Pending rows left (for the agent, or in total); null when the count failed. */
  readonly backlog: number | null;
}

/** Totals of a full drain with its runs, batches, every transition and the last run's outcome. */
export interface DrainSummary extends DrainTotals {
  readonly runs: number;
  readonly batches: number;
  readonly ftsOnly: number;
  readonly stale: number;
  /** The last run's outcome. */
  readonly outcome: string;
}

/** Progress of a drain: rows done and rows expected so far. */
export type DrainProgress = (done: number, total: number) => void;

/** What a full drain runs on. */
export interface DrainDriver {
  /** Loads the embedder's model (never rejects); awaited before the first run when rows are pending. */
  warmUp(): Promise<void>;
  /** One run of the embedding drain, reporting its own progress (rows done, rows of that run) to `onProgress`. */
  run(options: DrainRunOptions, onProgress: DrainProgress): Promise<DrainRunResult>;
}

/**
 * Drains one agent's rows, or every agent's (each batch is reported under its own agent), run after run. Always
 * at least one run unless `signal` is already aborted, so the process-wide backlog gauge is reported even when
 * nothing is pending. A backlog that keeps growing stops it at twice the rows counted at the start.
 */
export async function drainAll(
  store: EngineStore,
  options: {
    readonly agentId?: string;
    readonly signal?: AbortSignal;
    readonly onProgress?: DrainProgress;
  },
  driver: DrainDriver,
): Promise<DrainSummary> {
  const { agentId, signal, onProgress } = options;
  const start = await store.countEmbeddingBacklog();
  const total = agentId === undefined ? start.total : (start.byAgent[agentId] ?? 0);
  const totals = { runs: 0, batches: 0, rows: 0, ready: 0, error: 0, ftsOnly: 0, stale: 0 };
  let outcome = 'completed';
  let backlog: number | null = total;
  onProgress?.(0, total);
  // Nothing pending: the model is not loaded for nothing (a row written meanwhile loads it as it embeds).
  if (total > 0) await driver.warmUp();
  do {
    if (signal?.aborted === true) break;
    const before = totals.rows;
    const result = await driver.run(
      {
        ...(agentId === undefined ? {} : { agentId }),
        ...(signal === undefined ? {} : { signal }),
      },
      (done) => onProgress?.(Math.min(total, before + done), total),
    );
    totals.runs += 1;
    totals.batches += result.batches;
    totals.rows += result.rows;
    totals.ready += result.transitions.ready;
    totals.error += result.transitions.error;
    totals.ftsOnly += result.transitions.ftsOnly;
    totals.stale += result.transitions.stale;
    backlog = result.backlog;
    outcome = result.outcome;
    // Rows that keep failing stay in the backlog: stop once a run makes no progress.
    if (result.rows === 0) break;
  } while (outcome === 'completed' && backlog !== null && backlog > 0 && totals.rows < total * 2);
  onProgress?.(Math.min(total, totals.rows), total);
  return { ...totals, backlog, outcome };
}
