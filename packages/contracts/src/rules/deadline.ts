/**
 * The one deadline helper: a piece of work raced against a timer and the caller's abort signals.
 *
 * - `createDeadline` is the primitive: it owns the timer and the listeners, aborts the work's signal when the
 *   deadline fires or a caller aborts, and tells whether the work settled in time (`settle()` is true) or
 *   late (false). Use it when the race spans more than one promise (a queue, then a request).
 * - `withDeadline` runs one async function under a deadline and resolves (never rejects) with what
 *   happened; a settlement after the deadline is reported through `onLateSettlement`.
 */

/** Injectable timers (tests pass fake ones; nothing here ever reads the wall clock). */
export interface Timers {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** The runtime's global timers. */
export const systemTimers: Timers = Object.freeze({
  setTimeout: (callback: () => void, ms: number): unknown => setTimeout(callback, ms),
  clearTimeout: (handle: unknown): void => clearTimeout(handle as ReturnType<typeof setTimeout>),
});

/** The global timers with unref'd handles: a background deadline never keeps the process alive. */
export const backgroundTimers: Timers = Object.freeze({
  setTimeout(callback: () => void, ms: number): unknown {
    const handle = setTimeout(callback, ms);
    if (typeof handle === 'object' && handle !== null && 'unref' in handle) handle.unref();
    return handle;
  },
  clearTimeout: (handle: unknown): void => clearTimeout(handle as ReturnType<typeof setTimeout>),
});

/** What ended a deadline before the work settled: the timer, or a caller's abort signal. */
export type DeadlineExpiry = 'deadline' | 'aborted';

/** Options of {@link createDeadline}. */
export interface DeadlineOptions {
  /** Milliseconds until the deadline fires. */
  readonly ms: number;
  /** Default {@link systemTimers}. */
  readonly timers?: Timers | undefined;
  /** Caller signals: the first to abort ends the deadline as `aborted`. Undefined entries are ignored. */
  readonly signals?: readonly (AbortSignal | undefined)[] | undefined;
  /**
   * Called once, synchronously, when the deadline fires or a signal aborts before `settle()`. It must not
   * throw (it may run from a timer). Not called when a signal was already aborted at creation: check `expired`.
   */
  readonly onExpire?: ((expiry: DeadlineExpiry) => void) | undefined;
}

/** A running deadline. */
export interface Deadline {
  /** Pass to the work: aborted when the deadline expires (never by `settle`). */
  readonly signal: AbortSignal;
  /** Why the deadline ended before the work, or undefined while it runs or once the work settled in time. */
  readonly expired: DeadlineExpiry | undefined;
  /**
   * The work settled: clears the timer and the listeners. True when it settled in time (the first to
   * settle); false when the deadline had already expired (a late settlement) or `settle` ran before.
   */
  settle(): boolean;
  /**
   * Ends the deadline now, as if its timer had fired (e.g. a queue finds an entry already due by its clock):
   * aborts the work's signal and calls `onExpire`. False (and nothing happens) once it has ended.
   */
  expire(expiry?: DeadlineExpiry): boolean;
}

/** Starts a deadline; see {@link DeadlineOptions}. */
export function createDeadline(options: DeadlineOptions): Deadline {
  const timers = options.timers ?? systemTimers;
  const controller = new AbortController();
  const signals = (options.signals ?? []).filter((s): s is AbortSignal => s !== undefined);
  let state: 'running' | 'settled' | DeadlineExpiry = 'running';
  let timer: unknown;
  const detach = (): void => {
    timers.clearTimeout(timer);
    for (const signal of signals) signal.removeEventListener('abort', onAbort);
  };
  const expire = (expiry: DeadlineExpiry): boolean => {
    if (state !== 'running') return false;
    state = expiry;
    detach();
    controller.abort();
    options.onExpire?.(expiry);
    return true;
  };
  const onAbort = (): void => {
    expire('aborted');
  };
  const deadline: Deadline = {
    signal: controller.signal,
    get expired(): DeadlineExpiry | undefined {
      return state === 'running' || state === 'settled' ? undefined : state;
    },
    settle(): boolean {
      if (state !== 'running') return false;
      state = 'settled';
      detach();
      return true;
    },
    expire: (expiry: DeadlineExpiry = 'deadline'): boolean => expire(expiry),
  };
  if (signals.some((s) => s.aborted)) {
    state = 'aborted';
    controller.abort();
    return deadline;
  }
  for (const signal of signals) signal.addEventListener('abort', onAbort, { once: true });
  timer = timers.setTimeout(() => {
    expire('deadline');
  }, options.ms);
  return deadline;
}

/** How a {@link withDeadline} call ended. */
export type DeadlineOutcome<T> =
  | { readonly status: 'fulfilled'; readonly value: T }
  | { readonly status: 'rejected'; readonly error: unknown }
  | { readonly status: DeadlineExpiry };

/** Options of {@link withDeadline}. */
export interface WithDeadlineOptions {
  readonly ms: number;
  readonly timers?: Timers | undefined;
  readonly signals?: readonly (AbortSignal | undefined)[] | undefined;
  /** The work settled after the deadline or an abort (its result is dropped). Isolated: a throw is ignored. */
  readonly onLateSettlement?: ((settlement: 'fulfilled' | 'rejected') => void) | undefined;
}

/**
 * Runs `work` under a deadline. Resolves with `fulfilled`/`rejected` when the work settles first (a
 * synchronous throw counts as `rejected`), else with `deadline`/`aborted` as soon as the timer fires or a
 * signal aborts — the work's signal is aborted then. When a signal is already aborted, `work` is never called.
 */
export function withDeadline<T>(
  work: (signal: AbortSignal) => PromiseLike<T> | T,
  options: WithDeadlineOptions,
): Promise<DeadlineOutcome<T>> {
  return new Promise<DeadlineOutcome<T>>((resolve) => {
    const deadline = createDeadline({
      ms: options.ms,
      timers: options.timers,
      signals: options.signals,
      onExpire: (expiry) => resolve({ status: expiry }),
    });
    if (deadline.expired !== undefined) {
      resolve({ status: deadline.expired });
      return;
    }
    const late = (settlement: 'fulfilled' | 'rejected'): void => {
      try {
        options.onLateSettlement?.(settlement);
      } catch {
        // A failing reporter must not turn a dropped result into an unhandled rejection.
      }
    };
    let pending: PromiseLike<T> | T;
    try {
      pending = work(deadline.signal);
    } catch (error) {
      if (deadline.settle()) resolve({ status: 'rejected', error });
      return;
    }
    Promise.resolve(pending).then(
      (value) => {
        if (deadline.settle()) resolve({ status: 'fulfilled', value });
        else late('fulfilled');
      },
      (error: unknown) => {
        if (deadline.settle()) resolve({ status: 'rejected', error });
        else late('rejected');
      },
    );
  });
}
