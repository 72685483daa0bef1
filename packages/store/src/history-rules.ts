/**
 * The history rules both adapters follow: the values of a recorded entry, the walk of a supersede chain, and
 * how a memory's lineage is assembled (creations from the stored rows, then the recorded entries, in time
 * order). Pure: an adapter answers the walk's lookups and reads the rows; the statements stay its own.
 */
import type { HistoryInput, MemoryHistory, MemoryHistoryAction, MemoryHistoryEntry } from './facts-types.js';
import { visibleToUser } from './scope.js';
import type { MemoryRecord } from './types.js';

/**
 * The `user_id` of a history row whose memory's user is not known: '' (no user id is empty, so it never names a
 * user). The column's default, so it is what the rows written before the column existed hold when their memory
 * was already gone (the migration fills in the others from the stored rows), what a row imported from an export
 * without the column holds, and what an entry built without `userId` records. Such a row never shows a memory
 * that is gone to a user-scoped history (see {@link assembleHistory}).
 */
export const UNKNOWN_HISTORY_USER = '';

/**
 * The values of a history row, in the column order
 * `agent_id, memory_id, action, at, revision, actor, reason, related_id, content, user_id`.
 */
export function historyValues(
  e: HistoryInput,
): readonly [
  string,
  string,
  string,
  number,
  number | null,
  string | null,
  string | null,
  string | null,
  string | null,
  string | null,
] {
  return [
    e.agentId,
    e.memoryId,
    e.action,
    e.at,
    e.revision ?? null,
    e.actor ?? null,
    e.reason ?? null,
    e.relatedId ?? null,
    e.content ?? null,
    e.userId === undefined ? UNKNOWN_HISTORY_USER : e.userId,
  ];
}

/** Longest supersede chain followed (a guard against a cycle in damaged data). */
export const MAX_SUPERSEDE_CHAIN = 1000;

/**
 * One lookup of the chain walk: `older` asks for the ids `of` replaced (superseded by it), `newer` for the id
 * that replaced `of` (none, or one).
 */
export interface ChainLookup {
  readonly direction: 'older' | 'newer';
  readonly of: string;
}

/**
 * The walk of the supersede chain through `id`: it yields the lookups it needs and returns the chain's ids,
 * oldest first. The predecessors are taken breadth first, each step's ids in sorted order (a stable chain
 * whatever order the store reads them in); the successors one by one. At most {@link MAX_SUPERSEDE_CHAIN}
 * ids; an id seen twice (a cycle in damaged data) ends the walk.
 */
export function* supersedeChainWalk(id: string): Generator<ChainLookup, string[], readonly string[]> {
  const seen = new Set<string>([id]);
  const before: string[] = [];
  let frontier = [id];
  while (frontier.length > 0 && seen.size < MAX_SUPERSEDE_CHAIN) {
    const next: string[] = [];
    for (const current of frontier) {
      const older = yield { direction: 'older', of: current };
      for (const o of [...older].sort()) {
        if (seen.has(o)) continue;
        seen.add(o);
        before.unshift(o);
        next.push(o);
      }
    }
    frontier = next;
  }
  const after: string[] = [];
  let cursor = (yield { direction: 'newer', of: id })[0];
  while (cursor !== undefined && !seen.has(cursor) && seen.size < MAX_SUPERSEDE_CHAIN) {
    seen.add(cursor);
    after.push(cursor);
    cursor = (yield { direction: 'newer', of: cursor })[0];
  }
  return [...before, id, ...after];
}

/** Runs {@link supersedeChainWalk} with a synchronous lookup (a `newer` answer holds at most one id). */
export function supersedeChainSync(id: string, lookup: (step: ChainLookup) => readonly string[]): string[] {
  const walk = supersedeChainWalk(id);
  let step = walk.next([]);
  while (step.done !== true) step = walk.next(lookup(step.value));
  return step.value;
}

/** Runs {@link supersedeChainWalk} with an asynchronous lookup (a `newer` answer holds at most one id). */
export async function supersedeChainAsync(
  id: string,
  lookup: (step: ChainLookup) => Promise<readonly string[]>,
): Promise<string[]> {
  const walk = supersedeChainWalk(id);
  let step = walk.next([]);
  while (step.done !== true) step = walk.next(await lookup(step.value));
  return step.value;
}

/** A row of `memory_history` as read (a driver may give the numbers as strings). */
export interface HistoryRow {
  readonly memory_id: string;
  readonly action: string;
  readonly at: string | number;
  readonly revision: string | number | null;
  readonly actor: string | null;
  readonly reason: string | null;
  readonly related_id: string | null;
  readonly content: string | null;
  /** The user of the memory (null: the agent's own; {@link UNKNOWN_HISTORY_USER} or absent: not known). */
  readonly user_id?: string | null;
}

/** The entry of a recorded history row. */
export function historyEntry(r: HistoryRow): MemoryHistoryEntry {
  return {
    memoryId: r.memory_id,
    action: r.action as MemoryHistoryAction,
    at: Number(r.at),
    revision: r.revision === null ? null : Number(r.revision),
    actor: r.actor,
    reason: r.reason,
    relatedId: r.related_id,
    previousContent: r.content,
  };
}

/**
 * Whether a chain member whose row is gone shows to a call for `forUser` (null: the whole agent), from the user
 * its history rows name: every known user visible to the call, and at least one known. Rows of an unknown user
 * ({@link UNKNOWN_HISTORY_USER}, or a row read without the column) say nothing; a member with no known user is
 * hidden from every user-scoped call, the safe side.
 */
export function goneMemberVisible(rows: readonly HistoryRow[], forUser: string | null): boolean {
  if (forUser === null) return true;
  let known = false;
  for (const r of rows) {
    if (r.user_id === undefined || r.user_id === UNKNOWN_HISTORY_USER) continue;
    if (!visibleToUser(r.user_id, forUser)) return false;
    known = true;
  }
  return known;
}

/**
 * A memory's lineage from its chain, the chain's rows still stored (`records[i]` is the row of `chain[i]`, or
 * undefined when it is gone) and its recorded history rows in the recorded order: one `created` entry per
 * stored row (related to its predecessor in the chain), then the recorded entries; sorted by time, creations
 * first at equal times, then in the recorded order.
 *
 * With `forUser` (a checked user scope), another user's memory has an empty history (as an unknown id), and
 * another user's rows of the chain are left out with their entries. A member of the chain whose row is gone (an
 * erasing forget) is judged by the user its history rows name: another user's is left out the same way, and so is
 * one whose rows name no known user (written before the store recorded it), which only a whole-agent call sees.
 */
export function assembleHistory(
  id: string,
  fullChain: readonly string[],
  fullRecords: readonly (MemoryRecord | undefined)[],
  allRows: readonly HistoryRow[],
  forUser: string | null = null,
): MemoryHistory {
  const hidden = new Set<string>();
  for (const [index, memoryId] of fullChain.entries()) {
    const record = fullRecords[index];
    const visible =
      record !== undefined
        ? visibleToUser(record.userId, forUser)
        : goneMemberVisible(
            allRows.filter((r) => r.memory_id === memoryId),
            forUser,
          );
    if (!visible) hidden.add(memoryId);
  }
  if (hidden.has(id)) return { id, chain: [id], records: [], entries: [] };
  const chain = fullChain.filter((memoryId) => !hidden.has(memoryId));
  const records = fullRecords.filter((_, index) => !hidden.has(fullChain[index] ?? ''));
  const rows = allRows.filter((r) => !hidden.has(r.memory_id));
  const stored: MemoryRecord[] = [];
  const entries: MemoryHistoryEntry[] = [];
  for (const [index, memoryId] of chain.entries()) {
    const record = records[index];
    if (record === undefined) continue;
    stored.push(record);
    entries.push({
      memoryId,
      action: 'created',
      at: record.createdAt,
      revision: 1,
      actor: null,
      reason: null,
      relatedId: index > 0 ? (chain[index - 1] ?? null) : null,
      previousContent: null,
    });
  }
  for (const r of rows) entries.push(historyEntry(r));
  const order = new Map(entries.map((e, i) => [e, i]));
  entries.sort(
    (a, b) =>
      a.at - b.at ||
      (a.action === 'created' ? 0 : 1) - (b.action === 'created' ? 0 : 1) ||
      (order.get(a) ?? 0) - (order.get(b) ?? 0),
  );
  return { id, chain: [...chain], records: stored, entries };
}
