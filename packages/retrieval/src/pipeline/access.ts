import type { RetrievalStore } from '../ports.js';

/** Runs a task outside the current call: `setImmediate` where it exists, else a zero timer. */
export const defaultDefer = (task: () => void): void => {
  if (typeof setImmediate === 'function') setImmediate(task);
  else setTimeout(task, 0);
};

/**
 * Records access to the ids a call returned, deferred and fire-and-forget: a failed access write, clock or
 * scheduler changes nothing (access times are advisory).
 */
export function recordAccess(
  store: RetrievalStore,
  now: () => number,
  defer: (task: () => void) => void,
  agentId: string,
  ids: readonly string[],
): void {
  try {
    const write = store.recordAccess;
    if (typeof write !== 'function') return;
    const at = now();
    defer((): void => {
      try {
        Promise.resolve(write.call(store, agentId, ids, at)).then(undefined, () => {});
      } catch {
        // Swallowed: see above.
      }
    });
  } catch {
    // A failing clock or scheduler must not change the answer either.
  }
}
