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
 *
 * It follows the same layout and state rules as the `uuid` package's `v7()` (version 14), implemented here (the
 * counter's seed differs in form: 31 random bits either way): that package's entry point loads its 20 modules
 * (every UUID version), which every process that opens a store paid for at import, a one-shot search included,
 * for one function that a search never calls.
 */

/** The 16 random bytes of one id (the Web Crypto API, as `uuid` uses it). */
const random = new Uint8Array(16);
/** The id's bytes before they are written out. */
const bytes = new Uint8Array(16);
const HEX = Array.from({ length: 256 }, (_, i) => (i + 0x100).toString(16).slice(1));

/** The millisecond of the last id and its 32-bit counter (−∞ before the first id). */
let lastMs = -Infinity;
let seq = 0;

/** A new time-ordered memory id (UUID version 7, lower-case hex with dashes, 36 characters). */
export function timeOrderedId(): string {
  const now = Date.now();
  crypto.getRandomValues(random);
  if (now > lastMs) {
    // A new millisecond: the counter starts at 31 random bits (uuid 14 takes them as `r6 << 23 | …`, these as
    // `(r6 & 0x7f) << 24 | …`: the same range, a different draw).
    seq = ((random[6]! & 0x7f) << 24) | (random[7]! << 16) | (random[8]! << 8) | random[9]!;
    lastMs = now;
  } else {
    // The same millisecond, or a clock that stepped back: count on; past 2^32 ids, borrow the next millisecond.
    seq = (seq + 1) | 0;
    if (seq === 0) lastMs += 1;
  }
  const ms = lastMs;
  bytes[0] = (ms / 0x10000000000) & 0xff;
  bytes[1] = (ms / 0x100000000) & 0xff;
  bytes[2] = (ms / 0x1000000) & 0xff;
  bytes[3] = (ms / 0x10000) & 0xff;
  bytes[4] = (ms / 0x100) & 0xff;
  bytes[5] = ms & 0xff;
  bytes[6] = 0x70 | ((seq >>> 28) & 0x0f);
  bytes[7] = (seq >>> 20) & 0xff;
  bytes[8] = 0x80 | ((seq >>> 14) & 0x3f);
  bytes[9] = (seq >>> 6) & 0xff;
  bytes[10] = ((seq << 2) & 0xff) | (random[10]! & 0x03);
  bytes[11] = random[11]!;
  bytes[12] = random[12]!;
  bytes[13] = random[13]!;
  bytes[14] = random[14]!;
  bytes[15] = random[15]!;
  const h = (i: number): string => HEX[bytes[i]!]!;
  return `${h(0)}${h(1)}${h(2)}${h(3)}-${h(4)}${h(5)}-${h(6)}${h(7)}-${h(8)}${h(9)}-${h(10)}${h(11)}${h(12)}${h(13)}${h(14)}${h(15)}`;
}
