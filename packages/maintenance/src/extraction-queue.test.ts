import { describe, expect, it } from 'vitest';
import { isEngramMaintenanceError } from './errors.js';
import { createExtractionQueue } from './extraction-queue.js';
import { createFakeTime, flush } from './test-support/fake-time.js';

function gate() {
  let open: () => void = () => undefined;
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open: () => open() };
}

describe('extraction queue', () => {
  it('runs one chunk of a session at a time, in order, and reports depth and oldest age on every change', async () => {
    const time = createFakeTime();
    const gauges: { depth: number; oldestAgeMs: number }[] = [];
    const queue = createExtractionQueue({
      now: time.clock.now,
      observer: { onExtractionQueue: (g) => gauges.push(g) },
      concurrency: 4,
    });
    const order: string[] = [];
    const g1 = gate();
    const g2 = gate();
    const first = queue.submit({ agentId: 'a', sessionId: 's' }, async () => {
      order.push('s1:start');
      await g1.promise;
      order.push('s1:end');
      return 1;
    });
    time.advance(50);
    const second = queue.submit({ agentId: 'a', sessionId: 's' }, async () => {
      order.push('s2:start');
      await g2.promise;
      return 2;
    });
    const other = queue.submit({ agentId: 'a', sessionId: 'other' }, async () => {
      order.push('o:start');
      return 3;
    });
    await flush();
    expect(order).toEqual(['s1:start', 'o:start']);
    expect(await other).toBe(3);
    expect(queue.depth).toBe(2);
    time.advance(100);
    expect(queue.oldestAgeMs()).toBe(150);
    g1.open();
    expect(await first).toBe(1);
    await flush();
    expect(order).toEqual(['s1:start', 'o:start', 's1:end', 's2:start']);
    g2.open();
    expect(await second).toBe(2);
    await flush();
    expect(queue.depth).toBe(0);
    expect(queue.oldestAgeMs()).toBe(0);
    expect(gauges[0]).toEqual({ depth: 1, oldestAgeMs: 0 });
    expect(gauges[1]).toEqual({ depth: 2, oldestAgeMs: 50 });
    expect(Math.max(...gauges.map((g) => g.depth))).toBe(3);
    expect(gauges.at(-1)).toEqual({ depth: 0, oldestAgeMs: 0 });
  });

  it('rejects when full, cancels a waiting chunk on abort, and close() aborts the rest', async () => {
    const queue = createExtractionQueue({ maxDepth: 2 });
    const g = gate();
    let sawAbort = false;
    const running = queue.submit({ agentId: 'a', sessionId: 's' }, async (signal) => {
      await g.promise;
      sawAbort = signal.aborted;
      return 'done';
    });
    const controller = new AbortController();
    const waiting = queue.submit({ agentId: 'a', sessionId: 's' }, async () => 'never', {
      signal: controller.signal,
    });
    const full = await queue
      .submit({ agentId: 'b', sessionId: 's' }, async () => 'x')
      .catch((e: unknown) => e);
    expect(isEngramMaintenanceError(full) && full.code).toBe('ENGRAM_MAINTENANCE_CAPACITY');
    controller.abort();
    const aborted = await waiting.catch((e: unknown) => e);
    expect(isEngramMaintenanceError(aborted) && aborted.code).toBe('ENGRAM_MAINTENANCE_ABORTED');
    expect(queue.depth).toBe(1);
    queue.close();
    g.open();
    expect(await running).toBe('done');
    expect(sawAbort).toBe(true);
    const closed = await queue
      .submit({ agentId: 'a', sessionId: 's' }, async () => 1)
      .catch((e: unknown) => e);
    expect(isEngramMaintenanceError(closed) && closed.code).toBe('ENGRAM_MAINTENANCE_CLOSED');
  });
});
