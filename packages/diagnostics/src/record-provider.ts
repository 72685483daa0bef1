/** The provider recorder: the gateway's queue gauges, admission decisions and races (process-wide). */
import {
  ADMISSION_DECISIONS,
  PROVIDER_KINDS,
  PROVIDER_RACES,
  type ProviderKind,
} from '@engram/contracts/enums';
import type { ProviderQueueReport } from '@engram/contracts/observers';
import { type CollectorState, isCount, setOf } from './state.js';

const PROVIDER_KIND_SET = setOf(PROVIDER_KINDS);
const ADMISSION_SET = setOf(ADMISSION_DECISIONS);
const RACE_SET = setOf(PROVIDER_RACES);

/** Records one provider kind's queue gauge and its high-water marks. */
export function recordProviderQueue(state: CollectorState, gauge: ProviderQueueReport): void {
  const { kind, queued, active } = gauge;
  if (!state.known(PROVIDER_KIND_SET, kind)) return;
  if (!isCount(queued) || !isCount(active)) {
    state.recordsRejected += 1;
    return;
  }
  const provider = state.process.providers[kind];
  provider.queued = queued;
  provider.active = active;
  provider.queuedHighWater = Math.max(provider.queuedHighWater ?? 0, queued);
  provider.activeHighWater = Math.max(provider.activeHighWater ?? 0, active);
  provider.updatedAt = state.now();
}

function countProvider(
  state: CollectorState,
  kind: unknown,
  field: 'admissions' | 'races',
  values: ReadonlySet<unknown>,
  value: unknown,
): void {
  if (!state.known(PROVIDER_KIND_SET, kind) || !state.known(values, value)) return;
  const counts = state.process.providers[kind as ProviderKind][field] as Record<string, number>;
  counts[value as string] = (counts[value as string] ?? 0) + 1;
}

/** Counts one admission decision of a provider kind. */
export function recordAdmission(state: CollectorState, kind: unknown, decision: unknown): void {
  countProvider(state, kind, 'admissions', ADMISSION_SET, decision);
}

/** Counts one race of a provider kind. */
export function recordRace(state: CollectorState, kind: unknown, race: unknown): void {
  countProvider(state, kind, 'races', RACE_SET, race);
}
