import type { ProviderTimers } from '../transport.js';

/** Timers that fire only when the test says so: a deadline is reached without waiting. */
export interface ManualTimers extends ProviderTimers {
  /** Timers armed and not yet fired or cleared. */
  pending(): number;
  /** The delays of the timers armed so far, in order. */
  readonly armed: number[];
  /** Fires every pending timer now. */
  fireAll(): void;
}

/** Creates manual timers. */
export function createManualTimers(): ManualTimers {
  let seq = 0;
  const timers = new Map<number, () => void>();
  const armed: number[] = [];
  return {
    armed,
    setTimeout(fn: () => void, ms: number): unknown {
      seq += 1;
      timers.set(seq, fn);
      armed.push(ms);
      return seq;
    },
    clearTimeout(handle: unknown): void {
      timers.delete(handle as number);
    },
    pending: () => timers.size,
    fireAll(): void {
      const due = [...timers.values()];
      timers.clear();
      for (const fn of due) fn();
    },
  };
}
