import { afterEach, describe, expect, it, vi } from 'vitest';
import { createDeadline, type Timers, withDeadline } from './deadline.js';

/** Manual timers: `fire()` runs every pending callback; `pending` counts live timers. */
function manualTimers(): Timers & { fire(): void; readonly pending: number; readonly delays: number[] } {
  const live = new Map<number, () => void>();
  const delays: number[] = [];
  let next = 0;
  return {
    delays,
    get pending() {
      return live.size;
    },
    setTimeout(callback, ms) {
      next += 1;
      live.set(next, callback);
      delays.push(ms);
      return next;
    },
    clearTimeout(handle) {
      live.delete(handle as number);
    },
    fire() {
      const callbacks = [...live.values()];
      live.clear();
      for (const callback of callbacks) callback();
    },
  };
}

function deferred<T>(): { promise: Promise<T>; resolve(v: T): void; reject(e: unknown): void } {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('withDeadline', () => {
  it('returns the value of work that settles in time and clears its timer', async () => {
    const timers = manualTimers();
    const outcome = await withDeadline(async () => 42, { ms: 100, timers });
    expect(outcome).toEqual({ status: 'fulfilled', value: 42 });
    expect(timers.delays).toEqual([100]);
    expect(timers.pending).toBe(0);
  });

  it('reports a rejection (or a synchronous throw) of work that fails in time', async () => {
    const timers = manualTimers();
    const boom = new Error('boom');
    expect(await withDeadline(() => Promise.reject(boom), { ms: 5, timers })).toEqual({
      status: 'rejected',
      error: boom,
    });
    expect(
      await withDeadline(
        () => {
          throw boom;
        },
        { ms: 5, timers },
      ),
    ).toEqual({ status: 'rejected', error: boom });
    expect(timers.pending).toBe(0);
  });

  it('ends at the deadline, aborts the work and reports its late answer', async () => {
    const timers = manualTimers();
    const work = deferred<string>();
    let workSignal: AbortSignal | undefined;
    const late: string[] = [];
    const pending = withDeadline(
      (signal) => {
        workSignal = signal;
        return work.promise;
      },
      { ms: 50, timers, onLateSettlement: (s) => late.push(s) },
    );
    timers.fire();
    expect(await pending).toEqual({ status: 'deadline' });
    expect(workSignal?.aborted).toBe(true);
    work.resolve('too late');
    await work.promise;
    await Promise.resolve();
    expect(late).toEqual(['fulfilled']);
  });

  it('ends when a caller aborts, and a failing late reporter changes nothing', async () => {
    const timers = manualTimers();
    const caller = new AbortController();
    const work = deferred<number>();
    const pending = withDeadline(() => work.promise, {
      ms: 50,
      timers,
      signals: [undefined, caller.signal],
      onLateSettlement: () => {
        throw new Error('reporter failed');
      },
    });
    caller.abort();
    expect(await pending).toEqual({ status: 'aborted' });
    expect(timers.pending).toBe(0);
    work.reject(new Error('late failure'));
    await expect(work.promise).rejects.toThrow('late failure');
  });

  it('never calls the work when a signal is already aborted', async () => {
    const timers = manualTimers();
    const work = vi.fn(async () => 1);
    const outcome = await withDeadline(work, { ms: 50, timers, signals: [AbortSignal.abort()] });
    expect(outcome).toEqual({ status: 'aborted' });
    expect(work).not.toHaveBeenCalled();
    expect(timers.pending).toBe(0);
  });

  it('uses the global timers by default (fake timers, no waiting)', async () => {
    vi.useFakeTimers();
    const pending = withDeadline(() => new Promise<never>(() => {}), { ms: 2000 });
    vi.advanceTimersByTime(1999);
    let settled = false;
    void pending.then(() => {
      settled = true;
    });
    await Promise.resolve();
    expect(settled).toBe(false);
    vi.advanceTimersByTime(1);
    expect(await pending).toEqual({ status: 'deadline' });
  });
});

describe('createDeadline', () => {
  it('spans a queue wait and a request: settle() tells in-time from late', () => {
    const timers = manualTimers();
    const expiries: string[] = [];
    const inTime = createDeadline({ ms: 10, timers, onExpire: (e) => expiries.push(e) });
    expect(inTime.settle()).toBe(true);
    expect(inTime.settle()).toBe(false);
    expect(inTime.expired).toBeUndefined();
    expect(inTime.signal.aborted).toBe(false);

    const late = createDeadline({ ms: 10, timers, onExpire: (e) => expiries.push(e) });
    timers.fire();
    expect(late.expired).toBe('deadline');
    expect(late.signal.aborted).toBe(true);
    expect(late.settle()).toBe(false);
    expect(expiries).toEqual(['deadline']);
  });

  it('tells a caller abort from the deadline and fires onExpire once', () => {
    const timers = manualTimers();
    const caller = new AbortController();
    const expiries: string[] = [];
    const deadline = createDeadline({
      ms: 10,
      timers,
      signals: [caller.signal],
      onExpire: (e) => expiries.push(e),
    });
    caller.abort();
    timers.fire();
    expect(deadline.expired).toBe('aborted');
    expect(expiries).toEqual(['aborted']);
  });

  it('can be ended early by its owner, once, like a fired timer', () => {
    const timers = manualTimers();
    const expiries: string[] = [];
    const deadline = createDeadline({ ms: 10, timers, onExpire: (e) => expiries.push(e) });
    expect(deadline.expire()).toBe(true);
    expect(deadline.expire('aborted')).toBe(false);
    expect(deadline.expired).toBe('deadline');
    expect(deadline.signal.aborted).toBe(true);
    expect(deadline.settle()).toBe(false);
    expect(timers.pending).toBe(0);
    expect(expiries).toEqual(['deadline']);
  });

  it('is born expired, without calling onExpire, when a signal was already aborted', () => {
    const timers = manualTimers();
    const onExpire = vi.fn();
    const deadline = createDeadline({ ms: 10, timers, signals: [AbortSignal.abort()], onExpire });
    expect(deadline.expired).toBe('aborted');
    expect(deadline.signal.aborted).toBe(true);
    expect(onExpire).not.toHaveBeenCalled();
    expect(timers.pending).toBe(0);
  });
});
