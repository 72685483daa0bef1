/**
 * The scope, metadata and time filters of listing and search, as SQL over the memory alias (`m` unless given) with bound
 * parameters appended to the caller's list (no filter text ever becomes SQL). Metadata is `jsonb`: JSON types
 * compare as JSON types (`1` never equals `"1"`; numbers compare numerically), as in the SQLite store.
 */
import { checkMemoryFilter, type MemoryFilter } from '@engram/contracts';
import type { TimeScope } from '@engram/store';
import { invalidInput, validateTimestamp } from '@engram/store/port-kit';

/** The keys of a checked JSON path (`$."a"."b"` → `['a', 'b']`). */
function pathKeys(path: string): string[] {
  return [...path.matchAll(/\."([^"]*)"/g)].map((m) => m[1] as string);
}

/** SQL for the scope and metadata filter (`TRUE` when none); its parameters are pushed onto `params`. */
export function filterSql(filter: MemoryFilter | undefined, params: unknown[], a = 'm'): string {
  if (filter === undefined) return 'TRUE';
  const checked = checkMemoryFilter(filter);
  if (!checked.ok) throw invalidInput(`filter is invalid (${checked.problem})`);
  const f = checked.filter;
  const p = (value: unknown): string => {
    params.push(value);
    return `$${params.length}`;
  };
  const parts: string[] = [];
  if (f.userId !== null) parts.push(`${a}.user_id = ${p(f.userId)}::text`);
  if (f.sessionId !== null) parts.push(`${a}.session_id = ${p(f.sessionId)}::text`);
  for (const c of f.conditions) {
    const at = `(${a}.metadata #> ${p(pathKeys(c.path))}::text[])`;
    if (c.op === 'exists') parts.push(`${at} IS NOT NULL`);
    else if (c.op === 'absent') parts.push(`${at} IS NULL`);
    else if (c.op === 'in') {
      parts.push(`coalesce(${at} = ANY(${p(c.values.map((v) => JSON.stringify(v)))}::jsonb[]), false)`);
    } else if (c.op === 'range') {
      const bounds = [`coalesce(jsonb_typeof(${at}) = 'number', false)`];
      const num = `(${at})::numeric`;
      if (c.gt !== null) bounds.push(`${num} > ${p(c.gt)}::numeric`);
      if (c.gte !== null) bounds.push(`${num} >= ${p(c.gte)}::numeric`);
      if (c.lt !== null) bounds.push(`${num} < ${p(c.lt)}::numeric`);
      if (c.lte !== null) bounds.push(`${num} <= ${p(c.lte)}::numeric`);
      // CASE keeps the cast from running on a non-number.
      parts.push(`(CASE WHEN ${bounds[0]} THEN ${bounds.slice(1).join(' AND ') || 'TRUE'} ELSE false END)`);
    }
  }
  return parts.length === 0 ? 'TRUE' : `(${parts.join(' AND ')})`;
}

/** True when a filter is given and restricts something. */
export function filterRestricts(filter: MemoryFilter | undefined): boolean {
  return (
    filter !== undefined &&
    (filter.userId !== undefined || filter.sessionId !== undefined || (filter.metadata?.length ?? 0) > 0)
  );
}

/** A non-boolean `includeArchived` is invalid input. */
export function includeArchived(value: unknown): boolean {
  if (value !== undefined && typeof value !== 'boolean')
    throw invalidInput('includeArchived must be a boolean');
  return value === true;
}

/**
 * SQL for a time scope over `m`: omitted is `fallback` (`current`: active rows, plus archived ones with
 * `archived`; `any`: every lifecycle). `asOf`: rows valid at that time (current or superseded, never forgotten);
 * `includeHistory`: current and superseded rows.
 */
export function timeSql(
  time: TimeScope | undefined,
  params: unknown[],
  fallback: 'current' | 'any' = 'current',
  archived = false,
  a = 'm',
): string {
  const lifecycles = (extra: string[]): string =>
    `${a}.lifecycle IN (${['active', ...extra, ...(archived ? ['archived'] : [])].map((l) => `'${l}'`).join(',')})`;
  if (time === undefined) return fallback === 'any' ? 'TRUE' : lifecycles([]);
  if (typeof time !== 'object' || time === null) throw invalidInput('time must be an object');
  if (time.includeHistory !== undefined && typeof time.includeHistory !== 'boolean') {
    throw invalidInput('time.includeHistory must be a boolean');
  }
  if (time.asOf !== undefined) {
    const asOf = validateTimestamp(time.asOf, 'time.asOf');
    params.push(asOf);
    const at = `$${params.length}::bigint`;
    return `(${lifecycles(['superseded'])} AND ${a}.forgotten_at IS NULL AND ${a}.valid_from <= ${at}
      AND (${a}.valid_to IS NULL OR ${a}.valid_to > ${at}))`;
  }
  if (time.includeHistory === true) return `(${lifecycles(['superseded'])} AND ${a}.forgotten_at IS NULL)`;
  return lifecycles([]);
}
