const FNV_OFFSET_BASIS = 0x811c9dc5;
const FNV_PRIME = 0x01000193;
const encoder = new TextEncoder();

/** 32-bit FNV-1a over the UTF-8 bytes of a string, as an unsigned integer. */
export function fnv1a32(text: string): number {
  let hash = FNV_OFFSET_BASIS;
  for (const byte of encoder.encode(text)) {
    hash ^= byte;
    hash = Math.imul(hash, FNV_PRIME) >>> 0;
  }
  return hash >>> 0;
}

/** Where a feature lands in a vector: its bucket and its sign. */
export interface FeatureSlot {
  /** Component index, `fnv1a32(feature) % dimensions`. */
  readonly bucket: number;
  /** `-1` when bit 31 of the hash is set, `+1` otherwise. */
  readonly sign: 1 | -1;
}

/** Computes the bucket and sign of one feature string for a vector of `dimensions` components. */
export function featureSlot(feature: string, dimensions: number): FeatureSlot {
  const hash = fnv1a32(feature);
  return { bucket: hash % dimensions, sign: (hash & 0x80000000) !== 0 ? -1 : 1 };
}
