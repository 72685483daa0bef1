/**
 * The process-wide registry of open stores with a vector index (path → open handles), behind the observer's
 * `onVectorStores` gauge. Process-global on purpose: the gauge counts every store of the process.
 */

const vectorStores = new Map<string, number>();
let vectorStoreSeq = 0;

/** The registry key of a store: its resolved file path, or a unique key per in-memory database. */
export function vectorRegistryKey(resolvedPath: string | null): string {
  vectorStoreSeq += 1;
  return resolvedPath ?? `:memory:#${vectorStoreSeq}`;
}

/** Open stores with a vector index, and leases (open handles) on them. */
export function vectorGauge(): { openStores: number; leases: number } {
  let leases = 0;
  for (const n of vectorStores.values()) leases += n;
  return { openStores: vectorStores.size, leases };
}

/** Takes one lease on the store at `key`. */
export function acquireVectorLease(key: string): void {
  vectorStores.set(key, (vectorStores.get(key) ?? 0) + 1);
}

/** Returns one lease on the store at `key`. */
export function releaseVectorLease(key: string): void {
  const n = (vectorStores.get(key) ?? 1) - 1;
  if (n <= 0) vectorStores.delete(key);
  else vectorStores.set(key, n);
}
