/**
 * The scope, metadata and time filters of listing and search, as SQL over the memory alias (`m` unless given) with bound
 * parameters appended to the caller's list (no filter text ever becomes SQL). Metadata is `jsonb`: JSON types
 * compare as JSON types (`1` never equals `"1"`; numbers compare numerically), as in the SQLite store.
 */
import type { MemoryFilter } from '@engram/contracts';
import type { TimeScope } from '@engram/store';
import { checkFilter, checkTime, invalidInput } from '@engram/store/port-kit';

/** The keys of a checked JSON path (`$."a"."b"` → `['a', 'b']`). */
function pathKeys(path: string): string[] {
  return [...path.matchAll(/\."([^"]*)"/g)].map((m) => m[1] as string);
}

/** SQL for the scope and metadata filter (`TRUE` when none); its parameters are pushed onto `params`. */
export function filterSql(filter: MemoryFilter | undefined, params: unknown[], a = 'm'): string {
  const f = checkFilter(filter);
  if (f === null) return 'TRUE';
  const p = (value: unknown): string => {
    params.push(value);
    return `$${params.length}`;
  };
  const parts: string[] = [];
  if (f.userId !== null) parts.push(`${a}.user_id = ${p(f.userId)}::text`);
  if (f.forUser !== null) parts.push(`(${a}.user_id IS NULL OR ${a}.user_id = ${p(f.forUser)}::text)`);
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
  const t = checkTime(time);
  if (t === null) return fallback === 'any' ? 'TRUE' : lifecycles([]);
  if (t.asOf !== null) {
    params.push(t.asOf);
    const at = `$${params.length}::bigint`;
    return `(${lifecycles(['superseded'])} AND ${a}.forgotten_at IS NULL AND ${a}.valid_from <= ${at}
      AND (${a}.valid_to IS NULL OR ${a}.valid_to > ${at}))`;
  }
  if (t.includeHistory) return `(${lifecycles(['superseded'])} AND ${a}.forgotten_at IS NULL)`;
  return lifecycles([]);
}
