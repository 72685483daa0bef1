/**
 * A small deterministic PRNG (mulberry32) for tests and fixtures: the same seed gives the same sequence on
 * every machine. Its own entry point (`@engram/test-support/prng`) imports nothing, so a package whose tests
 * may load nothing heavy (an observer's) can use it without the rest of the test helpers.
 */

/** Creates a mulberry32 PRNG from a 32-bit seed; each call returns a float in [0, 1). */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
