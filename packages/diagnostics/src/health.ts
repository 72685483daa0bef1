/**
 * The health DTO: store health counts plus a diagnostics snapshot. The health page, the health endpoint
 * and `engram health --json` all speak this shape.
 */
import type { EmbeddingState, Lifecycle, MemoryKind, StoreHealth } from '@engram/store';
import { z } from 'zod';
import { EMBEDDING_STATE_KEYS, LIFECYCLE_KEYS, MEMORY_KIND_KEYS } from './enums.js';
import { type DiagnosticsSnapshot, diagnosticsSnapshotSchema, fillRecord } from './schema.js';

/** Store health counts as they appear in the health DTO (every enum key present). */
export interface StoreHealthDto {
  readonly totals: {
    readonly memories: number;
    readonly events: number;
    readonly facts: number;
    readonly skills: number;
  };
  readonly byKind: Readonly<Record<MemoryKind, number>>;
  readonly byLifecycle: Readonly<Record<Lifecycle, number>>;
  readonly byEmbeddingState: Readonly<Record<EmbeddingState, number>>;
}

/** The health DTO: `{ store, runtime }`. */
export interface HealthDto {
  readonly store: StoreHealthDto;
  readonly runtime: DiagnosticsSnapshot;
}

const count = z.number().int().nonnegative();

/** Strict schema of {@link StoreHealthDto}. */
export const storeHealthDtoSchema: z.ZodType<StoreHealthDto> = z.strictObject({
  totals: z.strictObject({ memories: count, events: count, facts: count, skills: count }),
  byKind: z.record(z.enum(MEMORY_KIND_KEYS), count),
  byLifecycle: z.record(z.enum(LIFECYCLE_KEYS), count),
  byEmbeddingState: z.record(z.enum(EMBEDDING_STATE_KEYS), count),
});

/** Strict schema of {@link HealthDto}. */
export const healthDtoSchema: z.ZodType<HealthDto> = z.strictObject({
  store: storeHealthDtoSchema,
  runtime: diagnosticsSnapshotSchema,
});

/**
 * Builds the health DTO from the store's health counts and a snapshot, copying only the known keys
 * (extra properties of either input never reach the DTO).
 */
export function createHealthDto(store: StoreHealth, runtime: DiagnosticsSnapshot): HealthDto {
  return {
    store: {
      totals: {
        memories: store.totals.memories,
        events: store.totals.events,
        facts: store.totals.facts,
        skills: store.totals.skills,
      },
      byKind: fillRecord(MEMORY_KIND_KEYS, (k) => store.byKind[k] ?? 0),
      byLifecycle: fillRecord(LIFECYCLE_KEYS, (k) => store.byLifecycle[k] ?? 0),
      byEmbeddingState: fillRecord(EMBEDDING_STATE_KEYS, (k) => store.byEmbeddingState[k] ?? 0),
    },
    runtime,
  };
}
