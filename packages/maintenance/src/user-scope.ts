/**
 * Users are boundaries: the user scope of extraction chunks and maintenance work. A memory without a user is
 * the agent's own (shared by all its users); one user's conversation never reads, changes or folds another
 * user's memory, and work done for a user writes rows of that user. The checks here reject a caller's bad
 * scope input with `ENGRAM_MAINTENANCE_INVALID_INPUT` (naming the field and the problem, never the value).
 */
import { checkTag, isWellFormedText, MAX_TAGS } from '@engram/contracts';
import type { MemoryFilter, MemoryRecord, UserScope } from '@engram/store';
import { MAX_METADATA_CHARS } from '@engram/store';
import { checkIdArgument, EngramMaintenanceError } from './errors.js';

/** Tags extraction always writes besides a chunk's own: `source:extraction` and a challenger's `challenges:<id>`. */
const EXTRACTION_OWN_TAGS = 2;
/** Most distinct tags a chunk may carry (the store's cap less the tags extraction adds itself). */
export const MAX_CHUNK_TAGS: number = MAX_TAGS - EXTRACTION_OWN_TAGS;
/** Tag prefixes the heavy phase reads as instructions: a caller may not set them. */
const RESERVED_TAG_PREFIXES = ['challenges:'] as const;
/** Deepest nesting of metadata the store accepts. */
const MAX_METADATA_DEPTH = 16;

function invalid(message: string): EngramMaintenanceError {
  return new EngramMaintenanceError('ENGRAM_MAINTENANCE_INVALID_INPUT', message);
}

/** The checked user of a call: null (the agent's own) when omitted; a malformed id throws. */
export function checkUserId(value: unknown): string | null {
  if (value === undefined) return null;
  checkIdArgument(value, 'userId');
  return value as string;
}

/** A chunk's tags, checked by the store's tag rule, deduplicated and sorted; reserved prefixes are refused. */
export function checkChunkTags(value: unknown): string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw invalid('Invalid tags: not an array.');
  const out = new Set<string>();
  for (const tag of value as readonly unknown[]) {
    const problem = checkTag(tag);
    if (problem !== null) throw invalid(`Invalid tags: ${problem}.`);
    const t = tag as string;
    if (RESERVED_TAG_PREFIXES.some((p) => t.startsWith(p))) throw invalid('Invalid tags: reservedPrefix.');
    out.add(t);
  }
  if (out.size > MAX_CHUNK_TAGS) throw invalid('Invalid tags: tooMany.');
  return [...out].sort();
}

function metadataProblem(value: unknown, depth: number): string | null {
  if (depth > MAX_METADATA_DEPTH) return 'tooDeep';
  if (value === null || typeof value === 'boolean') return null;
  if (typeof value === 'number') return Number.isFinite(value) ? null : 'notFinite';
  if (typeof value === 'string') return isWellFormedText(value) ? null : 'loneSurrogate';
  if (Array.isArray(value)) {
    for (const v of value) {
      const p = metadataProblem(v, depth + 1);
      if (p !== null) return p;
    }
    return null;
  }
  if (typeof value === 'object') {
    const proto = Object.getPrototypeOf(value) as unknown;
    if (proto !== Object.prototype && proto !== null) return 'notJson';
    for (const [k, v] of Object.entries(value)) {
      if (!isWellFormedText(k)) return 'loneSurrogate';
      const p = metadataProblem(v, depth + 1);
      if (p !== null) return p;
    }
    return null;
  }
  return 'notJson';
}

/**
 * A chunk's metadata: a plain object of JSON values (finite numbers, well-formed strings), at most 16 levels
 * deep and `MAX_METADATA_CHARS` once serialised — the store's own rule, checked before any model call.
 */
export function checkChunkMetadata(value: unknown): Readonly<Record<string, unknown>> | null {
  if (value === undefined) return null;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalid('Invalid metadata: notObject.');
  }
  const problem = metadataProblem(value, 0);
  if (problem !== null) throw invalid(`Invalid metadata: ${problem}.`);
  if (JSON.stringify(value).length > MAX_METADATA_CHARS) throw invalid('Invalid metadata: tooLarge.');
  return value as Readonly<Record<string, unknown>>;
}

/** Whether a row belongs to exactly this user group (null: the agent's own rows). */
export function inGroup(row: Pick<MemoryRecord, 'userId'>, userId: string | null): boolean {
  return (row.userId ?? null) === userId;
}

/** The store scope of a write for a user group: that user's, or none (the whole agent) for the agent's own. */
export function writeScope(userId: string | null): UserScope | undefined {
  return userId === null ? undefined : { forUser: userId };
}

/**
 * The filter that restricts a read to a user group as far as the store can say it: exactly that user's rows
 * (`MemoryFilter.userId`). The agent's own rows have no filter of their own: callers keep them by
 * {@link inGroup} after reading.
 */
export function groupFilter(userId: string | null): MemoryFilter | undefined {
  return userId === null ? undefined : { userId };
}

/** The `userId` field of a new row of a user group (omitted for the agent's own). */
export function userField(userId: string | null): { readonly userId?: string } {
  return userId === null ? {} : { userId };
}

/** A key of per-group state (cursors, watermarks): the agent id, and the user after a NUL (ids hold no control characters). */
export function groupKey(agentId: string, userId: string | null): string {
  return userId === null ? agentId : `${agentId}\u0000${userId}`;
}

/** Rows grouped by user (null: the agent's own), the groups in first-seen order. */
export function groupByUser(rows: readonly MemoryRecord[]): Map<string | null, MemoryRecord[]> {
  const out = new Map<string | null, MemoryRecord[]>();
  for (const r of rows) {
    const key = r.userId ?? null;
    const list = out.get(key);
    if (list === undefined) out.set(key, [r]);
    else list.push(r);
  }
  return out;
}

/**
 * The groups in the order a step serves them within its budget: the least recently served first (never served
 * before all others; then the agent's own before users, users by id), so groups a spent budget left out are
 * served first by a later pass.
 */
export function servingOrder(
  groups: readonly (string | null)[],
  servedAt: (user: string | null) => number | undefined,
): (string | null)[] {
  const rank = (u: string | null): number => servedAt(u) ?? -1;
  return [...groups].sort((a, b) => {
    const d = rank(a) - rank(b);
    if (d !== 0) return d;
    if (a === b) return 0;
    if (a === null) return -1;
    if (b === null) return 1;
    return a < b ? -1 : 1;
  });
}
