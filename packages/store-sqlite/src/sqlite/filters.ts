/**
 * Filter arguments shared by listing and search: kinds and tags (validated and encoded as JSON arrays for
 * `json_each`), the scope and metadata filter and the time scope (as SQL fragments over bound parameters).
 */
import type { MemoryFilter, NormalisedFilter } from '@engram/contracts';
import type { MemoryKind, TimeScope } from '@engram/store/port-kit';
import {
  type CheckedTime,
  checkFilter,
  checkKinds,
  checkTags,
  checkTime,
  invalidInput,
} from '@engram/store/port-kit';

/** The kinds filter as a JSON array (deduplicated); `fallback` when omitted. */
export function kindsFilter(
  kinds: readonly MemoryKind[] | undefined,
  fallback: readonly MemoryKind[],
): string {
  return JSON.stringify(checkKinds(kinds) ?? fallback);
}

/** The tags filter (every tag required) as a JSON array (deduplicated, at most 64); `[]` when omitted. */
export function tagsFilter(tags: readonly string[] | undefined): string {
  return tags === undefined ? '[]' : JSON.stringify(checkTags(tags));
}

/** The parameters of the scope and metadata filter (see {@link filterSql}); `fMeta` is a JSON array. */
export interface FilterParams {
  readonly fUser: string | null;
  /** Visibility for a user: rows without a user or of this one. */
  readonly fForUser: string | null;
  readonly fSession: string | null;
  readonly fMeta: string;
}

/** The metadata conditions of no filter. */
const NO_CONDITIONS = '[]';

/**
 * The metadata conditions over the memory alias `m` and `@fMeta`: every condition is a bound JSON value, so no
 * filter text becomes SQL. Types compare as JSON types (`1` never equals `"1"`; integers and reals compare
 * numerically).
 */
const METADATA_SQL = `NOT EXISTS (SELECT 1 FROM json_each(@fMeta) f WHERE NOT coalesce((CASE f.value ->> '$.op'
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

/**
 * Which clauses of the filter apply: bit 1 user scope, bit 2 session scope, bit 4 metadata conditions, bit 8
 * visibility for a user.
 */
function filterVariant(p: FilterParams): number {
  return (
    (p.fUser === null ? 0 : 1) |
    (p.fSession === null ? 0 : 2) |
    (p.fMeta === NO_CONDITIONS ? 0 : 4) |
    (p.fForUser === null ? 0 : 8)
  );
}

/** The SQL of each filter variant (built once): only the clauses that can apply, `1` for no filter. */
const FILTER_SQLS: readonly string[] = Array.from({ length: 16 }, (_, v) => {
  const clauses: string[] = [];
  if ((v & 1) !== 0) clauses.push('m.user_id = @fUser');
  if ((v & 8) !== 0) clauses.push('(m.user_id IS NULL OR m.user_id = @fForUser)');
  if ((v & 2) !== 0) clauses.push('m.session_id = @fSession');
  if ((v & 4) !== 0) clauses.push(METADATA_SQL);
  return clauses.length === 0 ? '1' : `(${clauses.join(' AND ')})`;
});

/**
 * The scope and metadata filter as SQL over the memory alias `m`, with the parameters of {@link filterParams}.
 * Built per call shape: a clause that cannot restrict (no user, no session, no metadata condition) is left
 * out, so an unfiltered statement does no per-row work for it. The text depends only on which clauses apply,
 * never on their values (those stay bound parameters).
 */
export function filterSql(p: FilterParams): string {
  return FILTER_SQLS[filterVariant(p)] as string;
}

/** The parameters of {@link filterSql} for a filter (none: everything passes); invalid input throws. */
export function filterParams(filter: MemoryFilter | undefined): FilterParams {
  return checkedFilterParams(checkFilter(filter));
}

/** The parameters of {@link filterSql} for a checked filter (null: everything passes). */
export function checkedFilterParams(f: NormalisedFilter | null): FilterParams {
  if (f === null) return { fUser: null, fForUser: null, fSession: null, fMeta: NO_CONDITIONS };
  return {
    fUser: f.userId,
    fForUser: f.forUser,
    fSession: f.sessionId,
    fMeta: JSON.stringify(f.conditions),
  };
}

/**
 * The time scope's modes: 0 current rows, 1 as of `@tAsOf`, 2 current and superseded, 3 any lifecycle (no
 * scope given to the vector arm). Mode 0 is the plain active-row predicate.
 */
export type TimeMode = 0 | 1 | 2 | 3;

/** The parameters of {@link timeSql}. */
export interface TimeParams {
  readonly tMode: TimeMode;
  readonly tAsOf: number | null;
  readonly tArchived: 'active' | 'archived';
}

/** The SQL of each time mode over `m` (`@tArchived` adds archived rows, `@tAsOf` is the instant). */
const TIME_SQLS: readonly string[] = [
  `m.lifecycle IN ('active', @tArchived)`,
  `(m.lifecycle IN ('active','superseded', @tArchived) AND m.forgotten_at IS NULL
      AND m.valid_from <= @tAsOf AND (m.valid_to IS NULL OR m.valid_to > @tAsOf))`,
  `(m.lifecycle IN ('active','superseded', @tArchived) AND m.forgotten_at IS NULL)`,
  '1',
];

/** The time scope as SQL over `m` for the mode of these parameters (see {@link TimeMode}). */
export function timeSql(p: TimeParams): string {
  return TIME_SQLS[p.tMode] as string;
}

/**
 * The tags filter (every tag required) over `m` and `@agent`, for the JSON array of {@link tagsFilter}: an
 * `AND` clause, or nothing when no tag is required.
 */
export function tagsSql(tags: string): string {
  return tags === '[]'
    ? ''
    : `AND NOT EXISTS (SELECT 1 FROM json_each(@tags) j WHERE NOT EXISTS (
        SELECT 1 FROM memory_tags t WHERE t.agent_id = @agent AND t.tag = j.value AND t.rid = m.rid))`;
}

/**
 * A short key naming the SQL shape of a scope (time mode, filter clauses, tags or none), for the cache of
 * prepared statements by variant (`StoreContext.variant`).
 */
export function scopeKey(p: FilterParams & TimeParams, tags: string): string {
  return `${p.tMode}${filterVariant(p).toString(16)}${tags === '[]' ? 0 : 1}`;
}

/**
 * The `@tArchived` parameter of {@link timeSql}: `archived` when archived rows count too, else `active`
 * again (so the list holds current rows only). A non-boolean is invalid input.
 */
export function includeArchived(value: unknown): boolean {
  if (value !== undefined && typeof value !== 'boolean')
    throw invalidInput('includeArchived must be a boolean');
  return value === true;
}

/** The parameters of {@link timeSql}; `undefined` is `fallback` (0: current rows, 3: any lifecycle). */
export function timeParams(time: TimeScope | undefined, fallback: 0 | 3 = 0, archived = false): TimeParams {
  return checkedTimeParams(checkTime(time), fallback, archived);
}

/** The parameters of {@link timeSql} for a checked time scope; null is `fallback` (see {@link timeParams}). */
export function checkedTimeParams(
  time: CheckedTime | null,
  fallback: 0 | 3 = 0,
  archived = false,
): TimeParams {
  const tArchived = archived ? 'archived' : 'active';
  if (time === null) return { tMode: fallback, tAsOf: null, tArchived };
  if (time.asOf !== null) return { tMode: 1, tAsOf: time.asOf, tArchived };
  return { tMode: time.includeHistory ? 2 : 0, tAsOf: null, tArchived };
}
