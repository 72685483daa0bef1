/** The store recorder: statement counts and the vector-store gauges (process-wide; eviction never touches them). */
import {
  STATEMENT_KINDS,
  type StatementKind,
  VECTOR_WARMUP_OUTCOMES,
  type VectorWarmupOutcome,
} from '@engram/contracts/enums';
import type { VectorStoreGauge } from '@engram/contracts/observers';
import { type CollectorState, isCount, setOf } from './state.js';

const WARMUP_SET = setOf(VECTOR_WARMUP_OUTCOMES);
const STATEMENT_SET = setOf(STATEMENT_KINDS);

/** Counts one store statement of a known family. */
export function recordStatement(state: CollectorState, kind: unknown): void {
  if (!state.known(STATEMENT_SET, kind)) return;
  state.process.store.statements[kind as StatementKind] += 1;
}

/** Counts one vector warm-up outcome. */
export function recordVectorWarmup(state: CollectorState, outcome: unknown): void {
  if (!state.known(WARMUP_SET, outcome)) return;
  state.process.vectorStores.warmup[outcome as VectorWarmupOutcome] += 1;
}

/** Records the vector-store gauge and its high-water marks. */
export function recordVectorStores(state: CollectorState, gauge: VectorStoreGauge): void {
  const { openStores, leases } = gauge;
  if (!isCount(openStores) || !isCount(leases)) {
    state.recordsRejected += 1;
    return;
  }
  const stores = state.process.vectorStores;
  stores.openStores = openStores;
  stores.leases = leases;
  stores.openStoresHighWater = Math.max(stores.openStoresHighWater ?? 0, openStores);
  stores.leasesHighWater = Math.max(stores.leasesHighWater ?? 0, leases);
  stores.updatedAt = state.now();
}
