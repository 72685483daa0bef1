/**
 * The health rules both adapters follow: the zero-filled counts of the health page from the grouped row
 * counts, and the answer when the store cannot be counted. Pure; the statements stay the adapter's.
 */
import {
  EMBEDDING_STATES,
  type EmbeddingState,
  LIFECYCLES,
  type Lifecycle,
  MEMORY_KINDS,
  type MemoryKind,
} from '@engram/contracts';
import type { EngramStoreErrorCode } from './errors.js';
import type { IntegrityResult } from './store-options.js';
import type { StoreHealth } from './types.js';

/** The health result: counts, or the store error code that prevented them. */
export type StoreHealthResult =
  | { readonly ok: true; readonly health: StoreHealth }
  | { readonly ok: false; readonly code: EngramStoreErrorCode; readonly integrity?: IntegrityResult };

/** One group of the memory count: a kind, a lifecycle and an embedding state, and how many rows (`n`). */
export interface HealthCountRow {
  readonly kind: string;
  readonly lifecycle: string;
  readonly state: string;
  readonly n: number | string;
}

function zeroes<K extends string>(keys: readonly K[]): Record<K, number> {
  return Object.fromEntries(keys.map((k) => [k, 0])) as Record<K, number>;
}

/**
 * The health of a store (or an agent) from its grouped memory counts, its event and skill counts and its last
 * integrity check: every kind, lifecycle and embedding state is listed (zero when absent); `facts` counts the
 * active `fact` rows.
 */
export function healthFromCounts(
  rows: readonly HealthCountRow[],
  events: number,
  skills: number,
  integrity: IntegrityResult,
): StoreHealthResult {
  const byKind = zeroes<MemoryKind>(MEMORY_KINDS);
  const byLifecycle = zeroes<Lifecycle>(LIFECYCLES);
  const byEmbeddingState = zeroes<EmbeddingState>(EMBEDDING_STATES);
  let memories = 0;
  let facts = 0;
  for (const r of rows) {
    const n = Number(r.n);
    memories += n;
    if (r.kind in byKind) byKind[r.kind as MemoryKind] += n;
    if (r.lifecycle in byLifecycle) byLifecycle[r.lifecycle as Lifecycle] += n;
    if (r.state in byEmbeddingState) byEmbeddingState[r.state as EmbeddingState] += n;
    if (r.kind === 'fact' && r.lifecycle === 'active') facts += n;
  }
  return {
    ok: true,
    health: {
      totals: { memories, events, facts, skills },
      byKind,
      byLifecycle,
      byEmbeddingState,
      integrity: { ...integrity },
    },
  };
}

/** The answer of a store that cannot be counted: the error code, and the failed check when that is the cause. */
export function healthFailure(code: EngramStoreErrorCode, integrity: IntegrityResult): StoreHealthResult {
  const { state, checkedAt } = integrity;
  // A damaged file often cannot be counted: the failed check is the answer then.
  return state === 'failed' ? { ok: false, code, integrity: { state, checkedAt } } : { ok: false, code };
}
