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
}

/** The default decay settings. */
export const DEFAULT_DECAY: Required<DecayConfig> = Object.freeze({
  floor: 0.05,
  minAgeMs: 14 * 24 * 60 * 60 * 1000,
  exemptKinds: Object.freeze(['fact', 'persona', 'skill'] as MemoryKind[]),
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

/** The age used for decay: time since the later of creation and last access. */
export function decayAgeMs(
  now: number,
  row: { readonly createdAt: number; readonly lastAccessedAt: number | null },
): number {
  return now - Math.max(row.createdAt, row.lastAccessedAt ?? 0);
}

/** Whether a row should be archived by decay now. */
export function shouldArchiveByDecay(
  now: number,
  row: {
    readonly kind: MemoryKind;
    readonly importance: number;
    readonly createdAt: number;
    readonly lastAccessedAt: number | null;
  },
  config: DecayConfig,
): boolean {
  const exempt = config.exemptKinds ?? DEFAULT_DECAY.exemptKinds;
  if (exempt.includes(row.kind)) return false;
  const age = decayAgeMs(now, row);
  if (age < config.minAgeMs) return false;
  return decayScore(age, row.importance) < config.floor;
}
