/**
 * The user scope of a facade call. A call that names a user (or a memory created with a default user) sees
 * the agent's own memories and that user's, never another user's, and writes that user on everything it
 * writes; a call without one acts for the whole agent. Nothing a call passes beside `userId` (a filter, an
 * export option) widens it.
 */
import { checkAgentId, checkAgentIdForm } from '@engram/contracts';
import type { ExportCounts, ExportRecord, MemoryFilter } from '@engram/store';
import { invalidInput } from './errors.js';

/** The user a call acts for: its own `userId`, else the memory's default; null for the whole agent. */
export function userOf(options: { readonly userId?: unknown }, defaultUser: string | null): string | null {
  const userId = options.userId;
  if (userId === undefined) return defaultUser;
  // The store's rule for ids, and its form (no surrounding spaces, NFC): a read never accepts a user a write refuses.
  const problem = checkAgentId(userId) ?? checkAgentIdForm(userId as string);
  if (problem !== null) throw invalidInput(`userId is invalid (${problem})`);
  return userId as string;
}

/** The store's user scope of a call (`undefined` for the whole agent). */
export function storeScope(userId: string | null): { readonly forUser: string } | undefined {
  return userId === null ? undefined : { forUser: userId };
}

/**
 * A caller's filter inside the call's user scope: `forUser` is the scope's user. A filter that names another
 * user (`userId` or `forUser`) asks for what the scope does not see, and is refused.
 */
export function scopedFilter(
  filter: MemoryFilter | undefined,
  userId: string | null,
): MemoryFilter | undefined {
  if (userId === null) return filter;
  if (filter !== undefined && (typeof filter !== 'object' || filter === null)) return filter;
  for (const key of ['userId', 'forUser'] as const) {
    const named = filter?.[key];
    if (named !== undefined && named !== userId) {
      throw invalidInput(`filter.${key} must be the user of the call (userId)`);
    }
  }
  return { ...filter, forUser: userId };
}

/** Whether a stored row's user (`user_id` of an export row, or `userId`) is visible to the call's user. */
export function visibleTo(rowUser: unknown, userId: string | null): boolean {
  return userId === null || rowUser === null || rowUser === undefined || rowUser === userId;
}

const ZERO: ExportCounts = { memories: 0, events: 0, cursors: 0, skills: 0, links: 0, history: 0 };
const COUNTED: Readonly<Record<string, keyof ExportCounts>> = {
  memory: 'memories',
  event: 'events',
  cursor: 'cursors',
  skill: 'skills',
  link: 'links',
  history: 'history',
};

/**
 * An export for one user, or one conversation (`sessionId`: its memories and events only, no skills), or both:
 * the agent's own memories and that user's, the events of the agent and that user,
 * the cursors of the sessions those events are in (no further than the last of them), the agent's skills, and
 * the links and history entries of the memories kept; the end record counts what was kept. (History entries of memories erased before the
 * export name no user, so they are left out.)
 */
export async function* exportForUser(
  records: AsyncIterable<ExportRecord>,
  userId: string | null,
  sessionId: string | null = null,
): AsyncIterable<ExportRecord> {
  const inSession = (row: { readonly session_id?: unknown }): boolean =>
    sessionId === null || row.session_id === sessionId;
  const memories = new Set<string>();
  /** The highest position of the user's view in each session exported. */
  const sessions = new Map<string, number>();
  const counts: Record<keyof ExportCounts, number> = { ...ZERO };
  for await (const record of records) {
    let keep: boolean;
    switch (record.type) {
      case 'header':
        yield record;
        continue;
      case 'end':
        yield { type: 'end', counts: { ...counts } };
        continue;
      case 'memory':
        keep = visibleTo(record.row.user_id, userId) && inSession(record.row);
        if (keep) memories.add(String(record.row.id));
        break;
      case 'event': {
        keep = visibleTo(record.row.user_id, userId) && inSession(record.row);
        const session = String(record.row.session_id);
        if (keep) sessions.set(session, Math.max(sessions.get(session) ?? 0, Number(record.row.seq)));
        break;
      }
      case 'cursor': {
        const top = sessions.get(String(record.row.session_id));
        if (top === undefined) continue;
        // The cursor says how far the session was ingested: no further than this user's view goes, so it tells
        // nothing of how much other users wrote after it.
        const clamped = {
          ...record,
          row: { ...record.row, cursor: Math.min(Number(record.row.cursor), top) },
        };
        counts.cursors += 1;
        yield clamped;
        continue;
      }
      case 'skill':
        // The agent's skills belong to no conversation: a session's export leaves them out.
        keep = sessionId === null;
        break;
      case 'link':
        keep = memories.has(String(record.row.older_id)) && memories.has(String(record.row.newer_id));
        break;
      case 'history':
        keep = memories.has(String(record.row.memory_id));
        break;
      default:
        keep = false;
    }
    if (!keep) continue;
    const key = COUNTED[record.type];
    if (key !== undefined) counts[key] += 1;
    yield record;
  }
}
