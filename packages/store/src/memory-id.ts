/**
 * The default id of a new memory (both stores use it): a time-ordered UUID, version 7 of RFC 9562 — a 48-bit
 * Unix millisecond timestamp, then a counter seeded with random bits at each new millisecond and random bits
 * after it, monotonic within the module instance — the process, or the thread under `worker_threads` (a clock
 * that steps back keeps the last millisecond and counts on).
 * Ids made one after the other sort in the order they were made, as strings and as bytes, so the indexes on
 * the id (its uniqueness, `(agent_id, id)`) take each new id at their right-hand edge instead of at a random
 * leaf: an insert rewrites one leaf page, not one per index per row. The price: an id reveals the real time of
 * its insert to the millisecond, even when the caller sets `createdAt`, and after an erasing forget (the history
 * tombstone keeps the id); callers who mind pass their own `idFactory`.
 */
import { v7 } from 'uuid';

/** A new time-ordered memory id (UUID version 7, lower-case hex with dashes, 36 characters). */
export function timeOrderedId(): string {
  return v7();
}
