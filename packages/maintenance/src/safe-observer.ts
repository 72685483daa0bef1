/** Calls an observer callback; an observer failure can never change or interrupt background work. */
export function safeNotify(fn: () => void): void {
  try {
    fn();
  } catch {
    // Diagnostics must never change a memory result.
  }
}
