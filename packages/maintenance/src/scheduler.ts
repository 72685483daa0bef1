import { backgroundTimers, type SchedulerTask, type Timers } from '@engram/contracts';
import { engramErrorCode } from '@engram/contracts/errors';
import { type Clock, systemClock } from './clock.js';
import type { EmbeddingDrain } from './drain.js';
import { EngramMaintenanceError } from './errors.js';
import type { EventIngestor } from './ingest.js';
import type { MaintenanceRunner } from './maintenance.js';

/** Construction of a maintenance scheduler. Every task is optional; an absent one never runs. */
export interface MaintenanceSchedulerConfig {
  readonly clock?: Clock;
  readonly timers?: Timers;
  /** The agents to work for on each tick (e.g. the store's `listAgents`). */
  readonly agents: () => Promise<readonly string[]> | readonly string[];
  /** Event ingestion of every session ahead of its cursor, per agent. */
  readonly ingest?: { readonly ingestor: Pick<EventIngestor, 'ingestPending'>; readonly intervalMs: number };
  /** One all-agents embedding drain run per tick. */
  readonly drain?: { readonly drain: EmbeddingDrain; readonly intervalMs: number };
  /** One maintenance pass per agent per tick. */
  readonly maintain?: { readonly runner: MaintenanceRunner; readonly intervalMs: number };
  /** Called when a task throws; receives the task and an error code (never a message). Must not throw. */
  readonly onTaskError?: (task: SchedulerTask, code: string) => void;
}

/**
 * Runs ingestion, drains and maintenance passes periodically on injected timers. A task's next run is
 * scheduled `intervalMs` after its last run finished (never overlapping itself); a throwing task is
 * reported through `onTaskError` and scheduled again. `stop()` clears the timers, aborts the runs in flight
 * and waits for them.
 */
export interface MaintenanceScheduler {
  start(): void;
  stop(): Promise<void>;
  /** Runs one task now (outside its timer), unless it is already running; resolves when it finished. */
  runNow(task: SchedulerTask): Promise<void>;
  /** Resolves when no task is running. */
  whenIdle(): Promise<void>;
  /** Completed runs per task since creation. */
  readonly runs: Readonly<Record<SchedulerTask, number>>;
  /** When each task last completed (clock time), or null. */
  readonly lastRunAt: Readonly<Record<SchedulerTask, number | null>>;
  readonly started: boolean;
}

/** Creates a maintenance scheduler (stopped; call `start()`). */
export function createMaintenanceScheduler(config: MaintenanceSchedulerConfig): MaintenanceScheduler {
  const timers = config.timers ?? backgroundTimers;
  const clock = config.clock ?? systemClock;
  const intervals: Partial<Record<SchedulerTask, number>> = {};
  if (config.ingest !== undefined) intervals.ingest = config.ingest.intervalMs;
  if (config.drain !== undefined) intervals.drain = config.drain.intervalMs;
  if (config.maintain !== undefined) intervals.maintain = config.maintain.intervalMs;
  for (const ms of Object.values(intervals)) {
    if (!Number.isFinite(ms) || ms <= 0) {
      throw new EngramMaintenanceError(
        'ENGRAM_MAINTENANCE_INVALID_CONFIG',
        'Invalid scheduler setting: intervalMs.',
      );
    }
  }
  const runs: Record<SchedulerTask, number> = { ingest: 0, drain: 0, maintain: 0 };
  const lastRunAt: Record<SchedulerTask, number | null> = { ingest: null, drain: null, maintain: null };
  const handles = new Map<SchedulerTask, unknown>();
  const inFlight = new Map<SchedulerTask, Promise<void>>();
  let controller = new AbortController();
  let started = false;

  async function work(task: SchedulerTask, signal: AbortSignal): Promise<void> {
    if (task === 'drain') {
      await config.drain?.drain.run({ signal });
      return;
    }
    const agents = await config.agents();
    for (const agentId of agents) {
      if (signal.aborted) return;
      if (task === 'ingest') await config.ingest?.ingestor.ingestPending(agentId, { signal });
      else await config.maintain?.runner.run(agentId, { signal });
    }
  }

  function execute(task: SchedulerTask): Promise<void> {
    const running = inFlight.get(task);
    if (running !== undefined) return running;
    const signal = controller.signal;
    const promise = work(task, signal)
      .then(
        () => {
          runs[task] += 1;
          lastRunAt[task] = clock.now();
        },
        (error: unknown) => {
          try {
            config.onTaskError?.(task, engramErrorCode(error) ?? 'UNKNOWN');
          } catch {
            // A failing error hook must not stop the scheduler.
          }
        },
      )
      .finally(() => {
        inFlight.delete(task);
        if (started && !signal.aborted) arm(task);
      });
    inFlight.set(task, promise);
    return promise;
  }

  function arm(task: SchedulerTask): void {
    const ms = intervals[task];
    if (ms === undefined || handles.has(task)) return;
    handles.set(
      task,
      timers.setTimeout(() => {
        handles.delete(task);
        if (started) void execute(task);
      }, ms),
    );
  }

  return {
    start(): void {
      if (started) return;
      started = true;
      controller = new AbortController();
      for (const task of Object.keys(intervals) as SchedulerTask[]) arm(task);
    },
    async stop(): Promise<void> {
      started = false;
      for (const handle of handles.values()) timers.clearTimeout(handle);
      handles.clear();
      controller.abort();
      await Promise.all([...inFlight.values()]);
    },
    async runNow(task: SchedulerTask): Promise<void> {
      if (intervals[task] === undefined) return;
      if (!started && controller.signal.aborted) controller = new AbortController();
      const handle = handles.get(task);
      if (handle !== undefined) {
        timers.clearTimeout(handle);
        handles.delete(task);
      }
      await execute(task);
    },
    async whenIdle(): Promise<void> {
      while (inFlight.size > 0) await Promise.all([...inFlight.values()]);
    },
    get runs(): Readonly<Record<SchedulerTask, number>> {
      return { ...runs };
    },
    get lastRunAt(): Readonly<Record<SchedulerTask, number | null>> {
      return { ...lastRunAt };
    },
    get started(): boolean {
      return started;
    },
  };
}
