/**
 * The corrections-and-time part of the store port: history (lineage), forgetting with tombstones, deleting an
 * agent's memories, and contradiction links between facts. Split from `types.ts` to keep each file readable;
 * `MemoryStore` includes this slice.
 */
import type { UserScope } from './scope.js';
import type { MemoryRecord } from './types.js';

/** What happened to a memory, in its history. */
export type MemoryHistoryAction =
  | 'created'
  | 'updated'
  | 'superseded'
  | 'forgotten'
  | 'conflictLinked'
  | 'conflictResolved';

/** One entry of a memory's lineage. */
export interface MemoryHistoryEntry {
  /** The memory the entry is about (a lineage spans the supersede chain, so several ids appear). */
  readonly memoryId: string;
  readonly action: MemoryHistoryAction;
  /** Epoch milliseconds. */
  readonly at: number;
  /** The memory's revision after the change, when known. */
  readonly revision: number | null;
  /** Who made the change (a forget's `actor`, e.g. `agent`, `user`, `maintenance`), when given. */
  readonly actor: string | null;
  /** Why (a forget's or a resolution's reason), when given. */
  readonly reason: string | null;
  /**
   * The other memory: for `superseded`, the replacement; for `created`, the memory it replaced; for
   * `conflictLinked` / `conflictResolved`, the other side.
   */
  readonly relatedId: string | null;
  /** For `updated`: the text it replaced, unless erased by a forget. */
  readonly previousContent: string | null;
}

/** A memory's lineage: the supersede chain it belongs to, its rows still stored, and every entry in time order. */
export interface MemoryHistory {
  readonly id: string;
  /** The supersede chain, oldest first (the id itself included). */
  readonly chain: readonly string[];
  /** Rows of the chain still stored (a forgotten and erased row is gone; its tombstone stays in `entries`). */
  readonly records: readonly MemoryRecord[];
  /** Oldest first. Empty when the store never knew the id for this agent (or, with a user scope, it is another user's). */
  readonly entries: readonly MemoryHistoryEntry[];
}

/** Who forgets and why; both are kept in the tombstone (bounded, control characters refused). */
export interface ForgetOptions {
  /** Who asked (`agent`, `user`, an operator name …), at most 64 characters. Default `caller`. */
  readonly actor?: string;
  /** Why, at most 500 characters. */
  readonly reason?: string;
}

/** Options of a delete-all: who and why, and the one user whose memories and events go. */
export interface DeleteAllOptions extends ForgetOptions {
  /**
   * Forget only this user's memories and events (their `userId` is this one): the agent's own memories, other
   * users' and the skills stay. Without it, the whole agent.
   */
  readonly userId?: string;
}

/** What a forget removed or marked. */
export interface ForgetResult {
  /** The ids forgotten: the memory and its superseded predecessors. */
  readonly forgotten: readonly string[];
  /** `erase`: rows and content removed, tombstones kept; `keep`: rows kept, marked forgotten. */
  readonly mode: ForgetMode;
}

/** What a delete-all removed or marked. */
export interface DeleteAllResult {
  readonly memories: number;
  /** Archived events removed (0 in `keep` mode). */
  readonly events: number;
  /** Skills removed (0 in `keep` mode). */
  readonly skills: number;
  readonly mode: ForgetMode;
}

/**
 * The store's forget setting. `erase` (default): the row, its index entries and vectors and the text kept in
 * its history are removed; a tombstone (id, who, when, why) stays. `keep`: the row stays (archived, marked
 * forgotten, never returned by search) with its content.
 */
export type ForgetMode = 'erase' | 'keep';

/** The state of a contradiction between two facts. */
export type ConflictState = 'open' | 'resolved' | 'dismissed';

/** A contradiction: two facts on the same subject with different values. */
export interface ConflictLink {
  readonly olderId: string;
  readonly newerId: string;
  readonly state: ConflictState;
  /** What differs: `number`, `negation` or `entity`. */
  readonly reason: string;
  readonly createdAt: number;
  readonly resolvedAt: number | null;
}

/** How to settle a contradiction. */
export interface ConflictResolution {
  /** `supersede`: `retireId` is superseded by `keepId` (closed at the resolution time); `dismiss`: both stay current. */
  readonly outcome: 'supersede' | 'dismiss';
  /** For `supersede`: the fact that stays current (one side of the link). */
  readonly keepId?: string;
  readonly actor?: string;
  readonly reason?: string;
}

/** Corrections and time: history, forgetting, delete-all, contradiction links. */
export interface MemoryFactsSlice {
  /** The lineage of a memory (its supersede chain, updates, forget tombstones, conflicts). */
  history(agentId: string, id: string, scope?: UserScope): Promise<MemoryHistory>;
  /**
   * Forgets a memory and its superseded predecessors, as the store's forget setting says, writing a tombstone
   * for each; `ENGRAM_STORE_NOT_FOUND` when the agent has no such (unforgotten) memory, or, with `forUser`,
   * when it is another user's.
   */
  forgetMemory(agentId: string, id: string, options?: ForgetOptions & UserScope): Promise<ForgetResult>;
  /**
   * Forgets every memory of the agent (tombstoned the same way); in `erase` mode also its events and skills.
   * With `userId`, only that user's memories and events (never skills).
   */
  deleteAll(agentId: string, options?: DeleteAllOptions): Promise<DeleteAllResult>;
  /** Links two facts of the agent as contradicting (idempotent); false when the link already existed. */
  linkConflict(agentId: string, olderId: string, newerId: string, reason: string): Promise<boolean>;
  /** The agent's contradiction links, optionally only those touching `ids` or in `state`. */
  listConflicts(
    agentId: string,
    options?: {
      readonly ids?: readonly string[];
      readonly state?: ConflictState;
      readonly limit?: number;
    } & UserScope,
  ): Promise<readonly ConflictLink[]>;
  /** Settles an open link in one transaction (supersede the other side, or dismiss); returns the link. */
  resolveConflict(
    agentId: string,
    olderId: string,
    newerId: string,
    resolution: ConflictResolution,
  ): Promise<ConflictLink>;
}

/** One history entry a store records (inside the writing transaction); the stores' own input, not the port's. */
export interface HistoryInput {
  readonly agentId: string;
  readonly memoryId: string;
  readonly action: Exclude<MemoryHistoryAction, 'created'>;
  readonly at: number;
  readonly revision?: number | null;
  readonly actor?: string | null;
  readonly reason?: string | null;
  readonly relatedId?: string | null;
  readonly content?: string | null;
  /**
   * The user of the memory the entry is about (null: the agent's own). Absent: not known, recorded as such
   * (`historyRules.UNKNOWN_HISTORY_USER`); a user-scoped history then never shows the memory once its row is gone.
   */
  readonly userId?: string | null;
}
