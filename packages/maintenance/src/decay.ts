import type { MemoryKind } from '@engram/store';

/** Thirty days in milliseconds: the base half-life of decay. */
export const DECAY_BASE_HALF_LIFE_MS: number = 30 * 24 * 60 * 60 * 1000;

/** Decay settings of the cheap phase. */
export interface DecayConfig {
  /** Rows whose decay score falls below this floor are archived (default 0.05). */
  readonly floor: number;
  /** Rows younger than this are never archived by decay (default 14 days). */
  readonly minAgeMs: number;
  /** Kinds never archived by decay (default: `fact`, `persona`, `skill` — the core layer and managed records). */
  readonly exemptKinds?: readonly MemoryKind[];
  /**
   * Where a row's age starts. `stored` (default): the latest of its creation, its last write in this store
   * (`updatedAt` — an import or ingestion of old history writes it at import time) and its last access, so
   * history imported with old timestamps ages from its import. `created`: the later of creation and last
   * access only, so imported history keeps its original age.
   */
  readonly ageFrom?: DecayAgeFrom;
}

/** Where decay starts counting a row's age (see {@link DecayConfig.ageFrom}). */
export type DecayAgeFrom = 'stored' | 'created';

/** The default decay settings. */
export const DEFAULT_DECAY: Required<DecayConfig> = Object.freeze({
  floor: 0.05,
  minAgeMs: 14 * 24 * 60 * 60 * 1000,
  exemptKinds: Object.freeze(['fact', 'persona', 'skill'] as MemoryKind[]),
  ageFrom: 'stored',
});

/**
 * The decay score `0.5^(age / (30 d · (1 + importance)))`: 1 when new, halving every 30 days for an
 * unimportant memory and every 60 days for one of importance 1. Negative ages count as 0.
 */
export function decayScore(ageMs: number, importance: number): number {
  const age = Math.max(0, ageMs);
  const imp = Math.min(1, Math.max(0, Number.isFinite(importance) ? importance : 0));
  return 0.5 ** (age / (DECAY_BASE_HALF_LIFE_MS * (1 + imp)));
}

/** What decay reads of a row. */
export interface DecayRow {
  readonly kind: MemoryKind;
  readonly importance: number;
  readonly createdAt: number;
  /** The row's last write in this store (an import writes it); ignored with `ageFrom: 'created'`. */
  readonly updatedAt?: number;
  readonly lastAccessedAt: number | null;
}

/**
 * The age used for decay: time since the latest of creation, last access and (with `ageFrom: 'stored'`, the
 * default) the row's last write in this store.
 */
export function decayAgeMs(
  now: number,
  row: Omit<DecayRow, 'kind' | 'importance'>,
  ageFrom: DecayAgeFrom = 'stored',
): number {
  const stored = ageFrom === 'stored' ? (row.updatedAt ?? 0) : 0;
  return now - Math.max(row.createdAt, row.lastAccessedAt ?? 0, stored);
}

/** Whether a row should be archived by decay now. */
export function shouldArchiveByDecay(now: number, row: DecayRow, config: DecayConfig): boolean {
  const exempt = config.exemptKinds ?? DEFAULT_DECAY.exemptKinds;
  if (exempt.includes(row.kind)) return false;
  const age = decayAgeMs(now, row, config.ageFrom ?? DEFAULT_DECAY.ageFrom);
  if (age < config.minAgeMs) return false;
  return decayScore(age, row.importance) < config.floor;
}
