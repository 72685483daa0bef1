/**
 * Filter arguments shared by listing and search: kinds and tags (validated and encoded as JSON arrays for
 * `json_each`), the scope and metadata filter and the time scope (as SQL fragments over bound parameters).
 */
import { checkMemoryFilter, type MemoryFilter } from '@engram/contracts';
import { invalidInput } from '../errors.js';
import type { MemoryKind, TimeScope } from '../types.js';
import { validateKind, validateTag, validateTimestamp } from '../validate.js';

/** The kinds filter as a JSON array (deduplicated); `fallback` when omitted. */
export function kindsFilter(
  kinds: readonly MemoryKind[] | undefined,
  fallback: readonly MemoryKind[],
): string {
  if (kinds === undefined) return JSON.stringify(fallback);
  if (!Array.isArray(kinds)) throw invalidInput('kinds must be an array');
  return JSON.stringify([...new Set(kinds.map((k) => validateKind(k, 'kinds entry')))]);
}

/** The tags filter (every tag required) as a JSON array (deduplicated, at most 64); `[]` when omitted. */
export function tagsFilter(tags: readonly string[] | undefined): string {
  if (tags === undefined) return '[]';
  if (!Array.isArray(tags)) throw invalidInput('tags must be an array');
  if (tags.length > 64) throw invalidInput('tags filter has more than 64 entries');
  return JSON.stringify([...new Set(tags.map((t) => validateTag(t, 'tags filter entry')))]);
}

/**
 * The scope and metadata filter as SQL over the memory alias `m`, with the parameters `@fUser`, `@fSession`
 * and `@fMeta` (see {@link filterParams}). Every condition is a bound JSON value: no filter text becomes SQL.
 * Types compare as JSON types (`1` never equals `"1"`; integers and reals compare numerically).
 */
export const FILTER_SQL = `(@fUser IS NULL OR m.user_id = @fUser)
  AND (@fSession IS NULL OR m.session_id = @fSession)
  AND NOT EXISTS (SELECT 1 FROM json_each(@fMeta) f WHERE NOT coalesce((CASE f.value ->> '$.op'
    WHEN 'exists' THEN json_type(m.metadata, f.value ->> '$.path') IS NOT NULL
    WHEN 'absent' THEN json_type(m.metadata, f.value ->> '$.path') IS NULL
    WHEN 'in' THEN EXISTS (SELECT 1 FROM json_each(f.value, '$.values') v WHERE
      (CASE WHEN v.type IN ('integer','real') THEN 'number' ELSE v.type END) =
        (CASE WHEN json_type(m.metadata, f.value ->> '$.path') IN ('integer','real') THEN 'number'
          ELSE json_type(m.metadata, f.value ->> '$.path') END)
      AND (v.type IN ('true','false') OR json_extract(m.metadata, f.value ->> '$.path') = v.value))
    WHEN 'range' THEN json_type(m.metadata, f.value ->> '$.path') IN ('integer','real')
      AND (f.value ->> '$.gt' IS NULL OR json_extract(m.metadata, f.value ->> '$.path') > f.value ->> '$.gt')
      AND (f.value ->> '$.gte' IS NULL OR json_extract(m.metadata, f.value ->> '$.path') >= f.value ->> '$.gte')
      AND (f.value ->> '$.lt' IS NULL OR json_extract(m.metadata, f.value ->> '$.path') < f.value ->> '$.lt')
      AND (f.value ->> '$.lte' IS NULL OR json_extract(m.metadata, f.value ->> '$.path') <= f.value ->> '$.lte')
    END), 0))`;

/** The parameters of {@link FILTER_SQL} for a filter (none: everything passes); invalid input throws. */
export function filterParams(filter: MemoryFilter | undefined): {
  fUser: string | null;
  fSession: string | null;
  fMeta: string;
} {
  if (filter === undefined) return { fUser: null, fSession: null, fMeta: '[]' };
  const checked = checkMemoryFilter(filter);
  if (!checked.ok) throw invalidInput(`filter is invalid (${checked.problem})`);
  const f = checked.filter;
  return { fUser: f.userId, fSession: f.sessionId, fMeta: JSON.stringify(f.conditions) };
}

/** True when a filter is given and restricts something. */
export function filterRestricts(filter: MemoryFilter | undefined): boolean {
  return (
    filter !== undefined &&
    (filter.userId !== undefined || filter.sessionId !== undefined || (filter.metadata?.length ?? 0) > 0)
  );
}

/**
 * The time scope as SQL over `m` with `@tMode` (0 current, 1 as of `@tAsOf`, 2 current and superseded, 3 any
 * lifecycle: no scope given to the vector arm).
 */
export const TIME_SQL = `(CASE @tMode
    WHEN 0 THEN m.lifecycle = 'active'
    WHEN 1 THEN m.lifecycle IN ('active','superseded') AND m.forgotten_at IS NULL
      AND m.valid_from <= @tAsOf AND (m.valid_to IS NULL OR m.valid_to > @tAsOf)
    WHEN 2 THEN m.lifecycle IN ('active','superseded') AND m.forgotten_at IS NULL
    ELSE 1 END)`;

/** The parameters of {@link TIME_SQL}; `undefined` is `fallback` (0: current rows, 3: any lifecycle). */
export function timeParams(
  time: TimeScope | undefined,
  fallback: 0 | 3 = 0,
): { tMode: number; tAsOf: number | null } {
  if (time === undefined) return { tMode: fallback, tAsOf: null };
  if (typeof time !== 'object' || time === null) throw invalidInput('time must be an object');
  if (time.includeHistory !== undefined && typeof time.includeHistory !== 'boolean') {
    throw invalidInput('time.includeHistory must be a boolean');
  }
  if (time.asOf !== undefined) {
    const asOf = validateTimestamp(time.asOf, 'time.asOf');
    return { tMode: 1, tAsOf: asOf };
  }
  return { tMode: time.includeHistory === true ? 2 : 0, tAsOf: null };
}
