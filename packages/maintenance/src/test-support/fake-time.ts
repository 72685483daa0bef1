import type { Timers } from '@engram/contracts';
import type { Clock } from '../clock.js';

/** Manual time for tests: a clock and timers that only move when `advance` is called. Never sleeps. */
export interface FakeTime {
  readonly clock: Clock;
  readonly timers: Timers;
  /** Moves time forward, firing due timers in order (each sees `now` at its due time). */
  advance(ms: number): void;
  /** Timers not yet fired or cleared. */
  pending(): number;
}

/** Creates manual time starting at `start` (epoch ms). */
export function createFakeTime(start = 1_700_000_000_000): FakeTime {
  let now = start;
  let seq = 0;
  const timers = new Map<number, { at: number; fn: () => void }>();
  return {
    clock: { now: () => now },
    timers: {
      setTimeout(fn: () => void, ms: number): unknown {
        seq += 1;
        timers.set(seq, { at: now + Math.max(0, ms), fn });
        return seq;
      },
      clearTimeout(handle: unknown): void {
        timers.delete(handle as number);
      },
    },
    advance(ms: number): void {
      const target = now + ms;
      for (;;) {
        let next: [number, { at: number; fn: () => void }] | undefined;
        for (const entry of timers) {
          if (entry[1].at <= target && (next === undefined || entry[1].at < next[1].at)) next = entry;
        }
        if (next === undefined) break;
        timers.delete(next[0]);
        now = next[1].at;
        next[1].fn();
      }
      now = target;
    },
    pending: () => timers.size,
  };
}

/** Lets pending promise callbacks run (a macrotask turn, not a sleep). */
export async function flush(rounds = 3): Promise<void> {
  for (let i = 0; i < rounds; i += 1) await new Promise<void>((resolve) => setImmediate(resolve));
}
