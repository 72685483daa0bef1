/**
 * The query arguments both stores check the same way, in one place: the filters of listing and search (kinds,
 * tags, the scope and metadata filter, the time scope) and the whole vector query. Each check returns the
 * normalised value or throws the store's typed error with a fixed message (no user content); each store turns
 * the normalised values into its own SQL. Pure: no native code, no SQL (exported to other adapters through
 * `@engram/store/port-kit`).
 */
import { checkMemoryFilter, type NormalisedFilter } from '@engram/contracts/rules';
import { EngramStoreError, invalidInput } from './errors.js';
import type { MemoryKind, VectorQuery } from './types.js';
import {
  validateAgentId,
  validateKind,
  validateLimit,
  validateTag,
  validateTimestamp,
  validateVector,
} from './validate.js';

/** The largest k of a vector query (a larger one is clamped). */
const MAX_VECTOR_K = 1000;

/** The most tags a tags filter may require. */
const MAX_TAGS_FILTER = 64;

/** A kinds filter, deduplicated in the order given; null when omitted. */
export function checkKinds(kinds: unknown): MemoryKind[] | null {
  if (kinds === undefined) return null;
  if (!Array.isArray(kinds)) throw invalidInput('kinds must be an array');
  return [...new Set(kinds.map((k) => validateKind(k, 'kinds entry')))];
}

/** A tags filter (every tag required), deduplicated in the order given, at most 64; empty when omitted. */
export function checkTags(tags: unknown): string[] {
  if (tags === undefined) return [];
  if (!Array.isArray(tags)) throw invalidInput('tags must be an array');
  if (tags.length > MAX_TAGS_FILTER) throw invalidInput('tags filter has more than 64 entries');
  return [...new Set(tags.map((t) => validateTag(t, 'tags filter entry')))];
}

/** A scope and metadata filter, normalised by the contracts' rule; null when omitted. */
export function checkFilter(filter: unknown): NormalisedFilter | null {
  if (filter === undefined) return null;
  const checked = checkMemoryFilter(filter);
  if (!checked.ok) throw invalidInput(`filter is invalid (${checked.problem})`);
  return checked.filter;
}

/** A checked time scope: the instant of `asOf` (null when not given) and `includeHistory`. */
export interface CheckedTime {
  readonly asOf: number | null;
  readonly includeHistory: boolean;
}

/** A time scope; null when omitted. */
export function checkTime(time: unknown): CheckedTime | null {
  if (time === undefined) return null;
  if (typeof time !== 'object' || time === null) throw invalidInput('time must be an object');
  const t = time as { readonly asOf?: unknown; readonly includeHistory?: unknown };
  if (t.includeHistory !== undefined && typeof t.includeHistory !== 'boolean') {
    throw invalidInput('time.includeHistory must be a boolean');
  }
  const asOf = t.asOf === undefined ? null : validateTimestamp(t.asOf, 'time.asOf');
  return { asOf, includeHistory: t.includeHistory === true };
}

/** A vector query after {@link validateVectorQuery}. */
export interface CheckedVectorQuery {
  readonly agentId: string;
  /** The query vector: a Float32Array of the store's dimensions, finite and non-zero. */
  readonly vector: Float32Array;
  /** k, clamped to {@link MAX_VECTOR_K}. */
  readonly k: number;
  readonly kinds: readonly MemoryKind[] | null;
  readonly tags: readonly string[];
  readonly filter: NormalisedFilter | null;
  readonly time: CheckedTime | null;
  /** True when a filter is given that can restrict the neighbours (kinds, a tag, a scope or condition, time). */
  readonly restricted: boolean;
}

/**
 * Checks a vector query for a store whose vectors have `dimensions` (null: the store has no embedder profile,
 * so no vector index). In this order: the query is an object, the agent id, the index
 * (`ENGRAM_STORE_VECTOR_UNAVAILABLE`), the vector (`ENGRAM_STORE_VECTOR_INVALID` / `_DIMENSIONS`), k, then
 * every filter, given or not restrictive (a bad one is refused, never ignored): the first problem is the error.
 */
export function validateVectorQuery(query: unknown, dimensions: number | null): CheckedVectorQuery {
  if (typeof query !== 'object' || query === null) throw invalidInput('query must be an object');
  const q = query as VectorQuery;
  const agentId = validateAgentId(q.agentId);
  if (dimensions === null) {
    throw new EngramStoreError(
      'ENGRAM_STORE_VECTOR_UNAVAILABLE',
      'the store has no embedder profile, so it has no vector index',
    );
  }
  const vector = validateVector(q.vector, dimensions, 'query.vector');
  const k = validateLimit(q.k, 'k', MAX_VECTOR_K);
  const kinds = checkKinds(q.kinds);
  const tags = checkTags(q.tags);
  const filter = checkFilter(q.filter);
  const time = checkTime(q.time);
  const restricted =
    kinds !== null ||
    tags.length > 0 ||
    (filter !== null &&
      (filter.userId !== null ||
        filter.forUser !== null ||
        filter.sessionId !== null ||
        filter.conditions.length > 0)) ||
    time !== null;
  return { agentId, vector, k, kinds, tags, filter, time, restricted };
}
