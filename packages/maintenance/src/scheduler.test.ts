import { describe, expect, it } from 'vitest';
import type { DrainRunOptions, DrainRunResult, EmbeddingDrain } from './drain.js';
import type { IngestOptions, IngestPendingResult } from './ingest.js';
import type { MaintenancePassOptions, MaintenancePassResult, MaintenanceRunner } from './maintenance.js';
import { createMaintenanceScheduler } from './scheduler.js';
import { createFakeTime, flush } from './test-support/fake-time.js';

const EMPTY_DRAIN: DrainRunResult = {
  outcome: 'completed',
  skipped: null,
  batches: 0,
  rows: 0,
  transitions: { ready: 0, error: 0, ftsOnly: 0, stale: 0 },
  backlog: 0,
};

/** A drain whose runs the test finishes by hand, so overlap is observable. */
function manualDrain() {
  const runs: { options: DrainRunOptions; finish: () => void }[] = [];
  const drain: EmbeddingDrain = {
    run: (options = {}) =>
      new Promise<DrainRunResult>((resolve) => {
        runs.push({ options, finish: () => resolve(EMPTY_DRAIN) });
      }),
  };
  return { drain, runs };
}

describe('maintenance scheduler', () => {
  it('runs each task every interval after the previous run finished, never overlapping', async () => {
    const time = createFakeTime();
    const { drain, runs } = manualDrain();
    const scheduler = createMaintenanceScheduler({
      clock: time.clock,
      timers: time.timers,
      agents: () => ['a'],
      drain: { drain, intervalMs: 1000 },
    });
    scheduler.start();
    time.advance(999);
    await flush();
    expect(runs).toHaveLength(0);
    time.advance(1);
    await flush();
    expect(runs).toHaveLength(1);
    // The run is still going: more time does not start a second one.
    time.advance(5000);
    await flush();
    expect(runs).toHaveLength(1);
    runs[0]?.finish();
    await scheduler.whenIdle();
    expect(scheduler.runs.drain).toBe(1);
    expect(scheduler.lastRunAt.drain).toBe(time.clock.now());
    time.advance(1000);
    await flush();
    expect(runs).toHaveLength(2);
    runs[1]?.finish();
    await scheduler.whenIdle();
    expect(scheduler.runs.drain).toBe(2);
    await scheduler.stop();
    expect(time.pending()).toBe(0);
  });

  it('ingests and maintains every agent, and reports a throwing task by code', async () => {
    const time = createFakeTime();
    const ingested: string[] = [];
    const passes: string[] = [];
    const errors: [string, string][] = [];
    const ingestor = {
      async ingestPending(agentId: string, _o?: IngestOptions): Promise<IngestPendingResult> {
        ingested.push(agentId);
        if (agentId === 'bad') throw Object.assign(new Error('x'), { code: 'ENGRAM_STORE_BUSY' });
        return { sessions: 0, events: 0, memories: 0, batches: 0, conflicts: 0, more: false };
      },
    };
    const runner: MaintenanceRunner = {
      async run(agentId: string, _o?: MaintenancePassOptions): Promise<MaintenancePassResult> {
        passes.push(agentId);
        return { skipped: 'busy', report: null };
      },
    };
    let agents = ['a', 'b'];
    const scheduler = createMaintenanceScheduler({
      clock: time.clock,
      timers: time.timers,
      agents: async () => agents,
      ingest: { ingestor, intervalMs: 100 },
      maintain: { runner, intervalMs: 250 },
      onTaskError: (task, code) => errors.push([task, code]),
    });
    scheduler.start();
    time.advance(100);
    await scheduler.whenIdle();
    expect(ingested).toEqual(['a', 'b']);
    expect(passes).toEqual([]);
    time.advance(150);
    await flush();
    await scheduler.whenIdle();
    expect(passes).toEqual(['a', 'b']);
    agents = ['bad'];
    time.advance(100);
    await flush();
    await scheduler.whenIdle();
    expect(errors).toEqual([['ingest', 'ENGRAM_STORE_BUSY']]);
    // A failed task is scheduled again.
    time.advance(100);
    await flush();
    await scheduler.whenIdle();
    expect(ingested.filter((a) => a === 'bad')).toHaveLength(2);
    await scheduler.stop();
  });

  it('stop() clears timers and aborts the run in flight; runNow() runs at once', async () => {
    const time = createFakeTime();
    const { drain, runs } = manualDrain();
    const scheduler = createMaintenanceScheduler({
      clock: time.clock,
      timers: time.timers,
      agents: () => [],
      drain: { drain, intervalMs: 1000 },
    });
    scheduler.start();
    const now = scheduler.runNow('drain');
    expect(runs).toHaveLength(1);
    const stopped = scheduler.stop();
    expect(runs[0]?.options.signal?.aborted).toBe(true);
    runs[0]?.finish();
    await stopped;
    await now;
    expect(scheduler.started).toBe(false);
    expect(time.pending()).toBe(0);
    time.advance(10_000);
    await flush();
    expect(runs).toHaveLength(1);
    // runNow works while stopped, with a live signal.
    const again = scheduler.runNow('drain');
    expect(runs[1]?.options.signal?.aborted).toBe(false);
    runs[1]?.finish();
    await again;
    expect(time.pending()).toBe(0);
  });

  it('rejects a non-positive interval', () => {
    const { drain } = manualDrain();
    expect(() => createMaintenanceScheduler({ agents: () => [], drain: { drain, intervalMs: 0 } })).toThrow();
  });
});
