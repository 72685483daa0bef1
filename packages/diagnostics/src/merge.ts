/**
 * Merging the snapshots of several processes into one (the totals of a health page that shows every process
 * using a store). Counters and gauges are summed (a queue depth is the depth over all processes); high-water
 * marks, the collector's settings and times are the largest (`firstSeenAt` the smallest); a distribution's window
 * and all-time counts are summed while its p50, p95 and max are the highest of the processes' (the raw samples
 * stay in each process, so an exact percentile across processes cannot be computed: the merged one is an upper
 * bound). The query-embedding circuit is the one reported last. Only the template's keys are read.
 */
import {
  createEmptySnapshot,
  DIAGNOSTICS_SCHEMA_VERSION,
  type DiagnosticsSnapshot,
} from '@engram/contracts/health';

type Json = unknown;

const LARGEST_KEYS: ReadonlySet<string> = new Set([
  'lastSeenAt',
  'updatedAt',
  'maxAgents',
  'agentTtlMs',
  'sampleCapacity',
  'p50',
  'p95',
  'max',
]);

function isRecord(value: Json): value is Record<string, Json> {
  return typeof value === 'object' && value !== null;
}

function numbers(parts: readonly Json[]): number[] {
  return parts.filter((p): p is number => typeof p === 'number' && Number.isFinite(p));
}

function mergeNumber(key: string, template: number | null, parts: readonly Json[]): number | null {
  const values = numbers(parts);
  if (values.length === 0) return template;
  if (key === 'firstSeenAt') return Math.min(...values);
  if (LARGEST_KEYS.has(key) || key.endsWith('HighWater')) return Math.max(...values);
  let total = 0;
  for (const value of values) total += value;
  return total;
}

function latestCircuit(parts: readonly Json[]): Json | undefined {
  let best: Record<string, Json> | undefined;
  for (const part of parts) {
    if (!isRecord(part)) continue;
    const at = typeof part.updatedAt === 'number' ? part.updatedAt : -1;
    const bestAt = best !== undefined && typeof best.updatedAt === 'number' ? best.updatedAt : -1;
    if (best === undefined || at > bestAt) best = part;
  }
  return best;
}

function merge(key: string, template: Json, parts: readonly Json[]): Json {
  if (typeof template === 'boolean') return parts.some((p) => p === true);
  if (typeof template === 'number' || template === null) return mergeNumber(key, template, parts);
  if (!isRecord(template)) return template;
  if (key === 'queryEmbeddingCircuit') {
    const latest = latestCircuit(parts);
    return merge('', template, latest === undefined ? [] : [latest]);
  }
  const out: Record<string, Json> = {};
  for (const [inner, value] of Object.entries(template)) {
    out[inner] = merge(
      inner,
      value,
      parts.map((p) => (isRecord(p) ? p[inner] : undefined)),
    );
  }
  return out;
}

/**
 * The totals of `snapshots` (each a whole process's snapshot, `agentId` null) as one snapshot of the same shape,
 * generated at `generatedAt`; see the module comment for how each figure merges.
 */
export function mergeSnapshots(
  snapshots: readonly DiagnosticsSnapshot[],
  generatedAt: number = Date.now(),
): DiagnosticsSnapshot {
  const template = createEmptySnapshot(undefined, { generatedAt });
  const merged = merge('', template, snapshots) as DiagnosticsSnapshot;
  return {
    ...merged,
    schemaVersion: DIAGNOSTICS_SCHEMA_VERSION,
    generatedAt,
    agentId: null,
  };
}
