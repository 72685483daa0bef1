/** A clock: epoch milliseconds. Injected everywhere so tests never sleep. */
export interface Clock {
  now(): number;
}

/** Injectable timers (defaults: the global `setTimeout` / `clearTimeout`). */
export interface Timers {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** The system clock (`Date.now`). */
export const systemClock: Clock = Object.freeze({ now: (): number => Date.now() });

/** The global timers; handles are unref'd so background work never keeps a process alive. */
export const systemTimers: Timers = Object.freeze({
  setTimeout(callback: () => void, ms: number): unknown {
    const handle = setTimeout(callback, ms);
    if (typeof handle === 'object' && handle !== null && 'unref' in handle) handle.unref();
    return handle;
  },
  clearTimeout(handle: unknown): void {
    clearTimeout(handle as ReturnType<typeof setTimeout>);
  },
});
