/** A clock: epoch milliseconds. Injected everywhere so tests never sleep. */
export interface Clock {
  now(): number;
}

/** The system clock (`Date.now`). */
export const systemClock: Clock = Object.freeze({ now: (): number => Date.now() });
