/**
 * The memory filter rule: scopes (user, session) and typed conditions on a memory's JSON metadata, shared by
 * the store (which runs them inside its candidate queries) and the retriever (which checks them before
 * reading). `checkMemoryFilter` returns a closed problem code (or the normalised filter) and never throws;
 * each layer turns a problem into its own typed error.
 */
import { checkAgentId } from './agent-id.js';
import { isWellFormedText } from './text.js';

/** A scalar metadata value a condition compares with. */
export type MetadataScalar = string | number | boolean;

/**
 * One condition on a metadata key. `key` is a top-level key or a dotted path of up to 4 keys
 * (`project.name`), each of 1–64 letters, digits, `_` or `-`.
 *
 * - `eq`: the value at `key` equals `value` (same JSON type; numbers compare numerically).
 * - `in`: it equals one of `values` (1–100 scalars).
 * - `range`: it is a number within the given bounds (at least one of `gt`, `gte`, `lt`, `lte`).
 * - `exists` / `absent`: the key is present (any value, `null` included) or missing.
 */
export type MetadataCondition =
  | { readonly key: string; readonly op: 'eq'; readonly value: MetadataScalar }
  | { readonly key: string; readonly op: 'in'; readonly values: readonly MetadataScalar[] }
  | {
      readonly key: string;
      readonly op: 'range';
      readonly gt?: number;
      readonly gte?: number;
      readonly lt?: number;
      readonly lte?: number;
    }
  | { readonly key: string; readonly op: 'exists' | 'absent' };

/** Scope and metadata filters; every given part must hold (AND). */
export interface MemoryFilter {
  /** Only memories of this user scope (exact: the agent's own memories, without a user, do not pass). */
  readonly userId?: string;
  /**
   * Visibility for one user: the agent's own memories (no user) and this user's, never another user's. The
   * scope a call made on a user's behalf reads with.
   */
  readonly forUser?: string;
  /** Only memories of this session (run) scope. */
  readonly sessionId?: string;
  /** Conditions on the metadata, at most {@link MAX_METADATA_CONDITIONS}. */
  readonly metadata?: readonly MetadataCondition[];
}

/** Most metadata conditions in one filter. */
export const MAX_METADATA_CONDITIONS = 16;
/** Most values of one `in` condition. */
export const MAX_IN_VALUES = 100;
/** Longest string value a condition compares with (UTF-16 units). */
export const MAX_FILTER_STRING_LENGTH = 1024;
/** One key of a metadata path. */
export const METADATA_KEY_PATTERN: RegExp = /^[A-Za-z0-9_-]{1,64}$/;
/** Most keys of a dotted metadata path. */
export const MAX_METADATA_PATH_DEPTH = 4;

/** Why a filter is refused. */
export const MEMORY_FILTER_PROBLEMS = [
  'notObject',
  'unknownField',
  'badUserId',
  'badForUser',
  'badSessionId',
  'badMetadataList',
  'tooManyConditions',
  'badCondition',
  'badKey',
  'badOperator',
  'badValue',
  'badRange',
] as const;
/** A filter problem. */
export type MemoryFilterProblem = (typeof MEMORY_FILTER_PROBLEMS)[number];

/** A condition after checking: its JSON path (`$."a"."b"`) and its operator's operands. */
export type NormalisedCondition =
  | { readonly path: string; readonly op: 'in'; readonly values: readonly MetadataScalar[] }
  | {
      readonly path: string;
      readonly op: 'range';
      readonly gt: number | null;
      readonly gte: number | null;
      readonly lt: number | null;
      readonly lte: number | null;
    }
  | { readonly path: string; readonly op: 'exists' | 'absent' };

/** A checked filter: scopes (null when not given) and conditions (`eq` becomes a one-value `in`). */
export interface NormalisedFilter {
  readonly userId: string | null;
  /** Visibility for a user: rows without a user or of this user (see {@link MemoryFilter.forUser}). */
  readonly forUser: string | null;
  readonly sessionId: string | null;
  readonly conditions: readonly NormalisedCondition[];
}

const FILTER_FIELDS = new Set(['userId', 'forUser', 'sessionId', 'metadata']);

function isScalar(value: unknown): value is MetadataScalar {
  if (typeof value === 'boolean') return true;
  if (typeof value === 'number') return Number.isFinite(value);
  return typeof value === 'string' && value.length <= MAX_FILTER_STRING_LENGTH && isWellFormedText(value);
}

/** The JSON path of a dotted key, or null when the key breaks the rule. */
export function metadataPath(key: unknown): string | null {
  if (typeof key !== 'string') return null;
  const parts = key.split('.');
  if (parts.length > MAX_METADATA_PATH_DEPTH) return null;
  if (!parts.every((p) => METADATA_KEY_PATTERN.test(p))) return null;
  return `$${parts.map((p) => `."${p}"`).join('')}`;
}

function bound(value: unknown): number | null | undefined {
  if (value === undefined) return null;
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

function checkCondition(raw: unknown): NormalisedCondition | MemoryFilterProblem {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return 'badCondition';
  const c = raw as Record<string, unknown>;
  const path = metadataPath(c.key);
  if (path === null) return 'badKey';
  const allowed: Record<string, readonly string[]> = {
    eq: ['key', 'op', 'value'],
    in: ['key', 'op', 'values'],
    range: ['key', 'op', 'gt', 'gte', 'lt', 'lte'],
    exists: ['key', 'op'],
    absent: ['key', 'op'],
  };
  const op = c.op;
  const fields = typeof op === 'string' ? allowed[op] : undefined;
  if (fields === undefined) return 'badOperator';
  for (const field of Object.keys(c)) if (!fields.includes(field)) return 'badCondition';
  switch (op) {
    case 'eq':
      return isScalar(c.value) ? { path, op: 'in', values: [c.value] } : 'badValue';
    case 'in': {
      const values = c.values;
      if (!Array.isArray(values) || values.length === 0 || values.length > MAX_IN_VALUES) return 'badValue';
      if (!values.every(isScalar)) return 'badValue';
      return { path, op: 'in', values: [...values] };
    }
    case 'range': {
      const gt = bound(c.gt);
      const gte = bound(c.gte);
      const lt = bound(c.lt);
      const lte = bound(c.lte);
      if (gt === undefined || gte === undefined || lt === undefined || lte === undefined) return 'badRange';
      if (gt === null && gte === null && lt === null && lte === null) return 'badRange';
      return { path, op: 'range', gt, gte, lt, lte };
    }
    default:
      return { path, op: op as 'exists' | 'absent' };
  }
}

/**
 * Checks a filter (scopes follow the agent-id rule; see {@link MetadataCondition} for conditions). Returns the
 * normalised filter, or the first problem found. Never throws.
 */
export function checkMemoryFilter(
  value: unknown,
):
  | { readonly ok: true; readonly filter: NormalisedFilter }
  | { readonly ok: false; readonly problem: MemoryFilterProblem } {
  const fail = (problem: MemoryFilterProblem) => ({ ok: false as const, problem });
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return fail('notObject');
  const f = value as Record<string, unknown>;
  for (const field of Object.keys(f)) if (!FILTER_FIELDS.has(field)) return fail('unknownField');
  if (f.userId !== undefined && checkAgentId(f.userId) !== null) return fail('badUserId');
  if (f.forUser !== undefined && checkAgentId(f.forUser) !== null) return fail('badForUser');
  if (f.sessionId !== undefined && checkAgentId(f.sessionId) !== null) return fail('badSessionId');
  const conditions: NormalisedCondition[] = [];
  if (f.metadata !== undefined) {
    if (!Array.isArray(f.metadata)) return fail('badMetadataList');
    if (f.metadata.length > MAX_METADATA_CONDITIONS) return fail('tooManyConditions');
    for (const raw of f.metadata) {
      const checked = checkCondition(raw);
      if (typeof checked === 'string') return fail(checked);
      conditions.push(checked);
    }
  }
  return {
    ok: true,
    filter: {
      userId: (f.userId as string | undefined) ?? null,
      forUser: (f.forUser as string | undefined) ?? null,
      sessionId: (f.sessionId as string | undefined) ?? null,
      conditions,
    },
  };
}

function valueAt(metadata: unknown, path: string): { found: boolean; value: unknown } {
  const keys = [...path.matchAll(/\."([^"]*)"/g)].map((m) => m[1] as string);
  let current: unknown = metadata;
  for (const key of keys) {
    if (typeof current !== 'object' || current === null || Array.isArray(current)) {
      return { found: false, value: undefined };
    }
    if (!Object.hasOwn(current, key)) return { found: false, value: undefined };
    current = (current as Record<string, unknown>)[key];
  }
  return { found: true, value: current };
}

/**
 * Whether a memory's scopes and metadata pass a normalised filter: the reference semantics the store's SQL
 * implements (the retriever re-checks revalidated rows with it, the fuzz suites compare the two).
 */
export function matchesMemoryFilter(
  filter: NormalisedFilter,
  memory: {
    readonly userId: string | null;
    readonly sessionId: string | null;
    readonly metadata: Readonly<Record<string, unknown>>;
  },
): boolean {
  if (filter.userId !== null && memory.userId !== filter.userId) return false;
  if (filter.forUser !== null && memory.userId !== null && memory.userId !== filter.forUser) return false;
  if (filter.sessionId !== null && memory.sessionId !== filter.sessionId) return false;
  for (const c of filter.conditions) {
    const { found, value } = valueAt(memory.metadata, c.path);
    switch (c.op) {
      case 'exists':
        if (!found) return false;
        break;
      case 'absent':
        if (found) return false;
        break;
      case 'in':
        if (!found || !c.values.some((v) => typeof v === typeof value && v === value)) return false;
        break;
      case 'range': {
        if (!found || typeof value !== 'number') return false;
        if (c.gt !== null && !(value > c.gt)) return false;
        if (c.gte !== null && !(value >= c.gte)) return false;
        if (c.lt !== null && !(value < c.lt)) return false;
        if (c.lte !== null && !(value <= c.lte)) return false;
        break;
      }
    }
  }
  return true;
}
