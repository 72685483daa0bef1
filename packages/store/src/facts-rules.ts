/**
 * The facts rules both adapters follow: what forgetting and the contradiction links accept, which versions a
 * forget reaches, how an open link is settled, and the history entries each of these records. Pure; the
 * statements stay the adapter's.
 */
import { EngramStoreError, invalidInput } from './errors.js';
import type {
  ConflictLink,
  ConflictResolution,
  ConflictState,
  DeleteAllOptions,
  ForgetOptions,
  HistoryInput,
} from './facts-types.js';
import { CONFLICT_REASONS, CONFLICT_STATES, forgetOptions } from './facts-validate.js';
import type { Retirer } from './lifecycle-rules.js';
import { checkOptionsUser, type UserScope } from './scope.js';
import { validateAgentId, validateId, validateLimit } from './validate.js';

/** The arguments of `forgetMemory`; who forgets and why. */
export function validateForgetArgs(agentId: string, id: string, options?: ForgetOptions): Retirer {
  validateAgentId(agentId);
  validateId(id);
  return forgetOptions(options);
}

/**
 * The checked user scope of `forgetMemory`'s options (null: the whole agent): a forget for a user does not find
 * another user's memory, and leaves another user's versions of its chain alone.
 */
export function forgetUser(options?: ForgetOptions & UserScope): string | null {
  return checkOptionsUser(options);
}

/** The one user of a delete-all (`options.userId`), or null for the whole agent; invalid input throws. */
export function deleteAllUser(options?: DeleteAllOptions): string | null {
  const userId = typeof options === 'object' && options !== null ? options.userId : undefined;
  return userId === undefined ? null : validateAgentId(userId, 'options.userId');
}

/** The versions a forget of `id` reaches: `id` and its predecessors in the chain (never its successors). */
export function forgetScope(chain: readonly string[], id: string): readonly string[] {
  return chain.slice(0, chain.indexOf(id) + 1);
}

/** The tombstone of a forgotten row, at the row's revision as it was, naming the row's user. */
export function forgottenEntry(
  row: {
    readonly agentId: string;
    readonly id: string;
    readonly revision: number;
    readonly userId: string | null;
  },
  who: Retirer,
  at: number,
): HistoryInput {
  return {
    agentId: row.agentId,
    memoryId: row.id,
    action: 'forgotten',
    at,
    revision: row.revision,
    actor: who.actor,
    reason: who.reason,
    userId: row.userId,
  };
}

/**
 * The users of both sides of a contradiction link, as their history entries name them (null: the agent's own;
 * undefined: not known, e.g. a side whose row is gone).
 */
export interface ConflictUsers {
  readonly older: string | null | undefined;
  readonly newer: string | null | undefined;
}

/** The `userId` of an entry: absent when the user is not known. */
function userOf(userId: string | null | undefined): { readonly userId?: string | null } {
  return userId === undefined ? {} : { userId };
}

/** The arguments of `linkConflict`: two different ids and a known reason. */
export function validateLinkArgs(agentId: string, olderId: string, newerId: string, reason: string): void {
  validateAgentId(agentId);
  validateId(olderId, 'olderId');
  validateId(newerId, 'newerId');
  if (olderId === newerId) throw invalidInput('a memory cannot conflict with itself');
  if (typeof reason !== 'string' || !CONFLICT_REASONS.has(reason)) {
    throw invalidInput('reason must be number, negation or entity');
  }
}

/** Both sides' entries of a new link (each side related to the other, naming its own user). */
export function conflictLinkedEntries(
  agentId: string,
  olderId: string,
  newerId: string,
  reason: string,
  at: number,
  users: ConflictUsers,
): readonly HistoryInput[] {
  return [
    {
      agentId,
      memoryId: olderId,
      action: 'conflictLinked',
      at,
      reason,
      relatedId: newerId,
      ...userOf(users.older),
    },
    {
      agentId,
      memoryId: newerId,
      action: 'conflictLinked',
      at,
      reason,
      relatedId: olderId,
      ...userOf(users.newer),
    },
  ];
}

/**
 * The options of `listConflicts`. With `forUser`, only the links whose two sides that user sees (the agent's
 * own facts and the user's), so the limit counts nothing of another user's.
 */
export interface ListConflictsOptions extends UserScope {
  readonly ids?: readonly string[];
  readonly state?: ConflictState;
  readonly limit?: number;
}

/**
 * The checked options of `listConflicts`: the ids (null: any), the state (null: any), the limit and the user
 * (null: the whole agent).
 */
export interface ConflictListing {
  readonly ids: readonly string[] | null;
  readonly state: ConflictState | null;
  readonly limit: number;
  readonly forUser: string | null;
}

/** The arguments of `listConflicts`: at most 10,000 ids, a known state, a limit up to 10,000 (default 1000). */
export function validateListConflictsArgs(agentId: string, options: ListConflictsOptions): ConflictListing {
  validateAgentId(agentId);
  if (typeof options !== 'object' || options === null) throw invalidInput('options must be an object');
  let ids: string[] | null = null;
  if (options.ids !== undefined) {
    if (!Array.isArray(options.ids) || options.ids.length > 10_000) {
      throw invalidInput('ids must be an array of at most 10,000 ids');
    }
    ids = options.ids.map((id) => validateId(id, 'ids entry'));
  }
  if (options.state !== undefined && !CONFLICT_STATES.has(options.state)) {
    throw invalidInput('state is not a conflict state');
  }
  const limit = validateLimit(options.limit, 'limit', 10_000, 1000);
  return { ids, state: options.state ?? null, limit, forUser: checkOptionsUser(options) };
}

/** The columns of a conflict link row, in the order of {@link ConflictRow}. */
export const CONFLICT_LINK_COLUMNS = 'older_id, newer_id, state, reason, created_at, resolved_at';

/** A conflict row of `memory_links` as read (a driver may give the times as strings). */
export interface ConflictRow {
  readonly older_id: string;
  readonly newer_id: string;
  readonly state: string;
  readonly reason: string;
  readonly created_at: string | number;
  readonly resolved_at: string | number | null;
}

/** The link of a conflict row. */
export function conflictLink(r: ConflictRow): ConflictLink {
  return {
    olderId: r.older_id,
    newerId: r.newer_id,
    state: r.state as ConflictState,
    reason: r.reason,
    createdAt: Number(r.created_at),
    resolvedAt: r.resolved_at === null ? null : Number(r.resolved_at),
  };
}

/** A checked resolution: the side that stays current (null: dismiss) and who settles it. */
export interface CheckedResolution {
  readonly keepId: string | null;
  readonly who: Retirer;
}

/** The arguments of `resolveConflict`: `supersede` keeps one side of the link (default: the newer), or `dismiss`. */
export function validateResolveArgs(
  agentId: string,
  olderId: string,
  newerId: string,
  resolution: ConflictResolution,
): CheckedResolution {
  validateAgentId(agentId);
  validateId(olderId, 'olderId');
  validateId(newerId, 'newerId');
  if (typeof resolution !== 'object' || resolution === null)
    throw invalidInput('resolution must be an object');
  if (resolution.outcome !== 'supersede' && resolution.outcome !== 'dismiss') {
    throw invalidInput('resolution.outcome must be supersede or dismiss');
  }
  const keepId = resolution.outcome === 'supersede' ? (resolution.keepId ?? newerId) : null;
  if (keepId !== null && keepId !== olderId && keepId !== newerId) {
    throw invalidInput('resolution.keepId must be one side of the link');
  }
  const who = forgetOptions({
    ...(resolution.actor === undefined ? {} : { actor: resolution.actor }),
    ...(resolution.reason === undefined ? {} : { reason: resolution.reason }),
  });
  return { keepId, who };
}

/** How a link is settled: its new state, the side to supersede by the kept one (null: none), the settled link. */
export interface Settlement {
  readonly state: ConflictState;
  readonly retireId: string | null;
  readonly settled: ConflictLink;
}

/**
 * Settles the stored link (undefined: none) by a checked resolution at `at`: `ENGRAM_STORE_NOT_FOUND` without
 * a link, `ENGRAM_STORE_REVISION_CONFLICT` when it is no longer open.
 */
export function settleConflict(link: ConflictRow | undefined, keepId: string | null, at: number): Settlement {
  if (link === undefined) {
    throw new EngramStoreError('ENGRAM_STORE_NOT_FOUND', 'no conflict link between these memories');
  }
  if (link.state !== 'open') {
    throw new EngramStoreError('ENGRAM_STORE_REVISION_CONFLICT', 'the conflict is already settled');
  }
  const state: ConflictState = keepId === null ? 'dismissed' : 'resolved';
  const settled = conflictLink({ ...link, state, resolved_at: at });
  if (keepId === null) return { state, retireId: null, settled };
  return { state, retireId: keepId === link.older_id ? link.newer_id : link.older_id, settled };
}

/** Both sides' entries of a settled link (the reason defaults to the new state; each names its side's user). */
export function conflictResolvedEntries(
  agentId: string,
  olderId: string,
  newerId: string,
  who: Retirer,
  state: ConflictState,
  at: number,
  users: ConflictUsers,
): readonly HistoryInput[] {
  const reason = who.reason ?? state;
  return [
    {
      agentId,
      memoryId: olderId,
      action: 'conflictResolved',
      at,
      actor: who.actor,
      reason,
      relatedId: newerId,
      ...userOf(users.older),
    },
    {
      agentId,
      memoryId: newerId,
      action: 'conflictResolved',
      at,
      actor: who.actor,
      reason,
      relatedId: olderId,
      ...userOf(users.newer),
    },
  ];
}
