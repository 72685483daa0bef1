import type { MemoryFilter, MemoryKind, MemoryRecord, MemoryStore } from '@engram/store';
import { abortedError, EngramMaintenanceError } from './errors.js';

/**
 * The slice of the store the embedding drain needs (the consumer owns the port).
 *
 * Contract: async; may reject with an `EngramStoreError`. `commitEmbeddings` is one transaction that checks
 * each row's revision and counts a changed (or vanished) row, or one a concurrent drain already settled, `stale`
 * without touching it, so the counts are the transitions it made.
 */
export type DrainStore = Pick<
  MemoryStore,
  'embeddingProfile' | 'listPendingEmbeddings' | 'commitEmbeddings' | 'countEmbeddingBacklog'
>;

/**
 * The slice of the store event ingestion needs.
 *
 * Contract: async; `ingestBatch` inserts the memories and moves the session cursor atomically, and rejects
 * with `ENGRAM_STORE_REVISION_CONFLICT` (writing nothing) when the stored cursor is not the expected one.
 */
export type IngestStore = Pick<
  MemoryStore,
  'appendEvents' | 'listEventsAfter' | 'getCursor' | 'ingestBatch' | 'listSessions'
>;

/**
 * The slice of the store extraction needs: reads for re-decisions and compare-and-set writes.
 *
 * Contract: async; writes that take an expected revision reject with `ENGRAM_STORE_REVISION_CONFLICT` and
 * change nothing when the stored revision differs.
 */
export type ExtractionStore = Pick<
  MemoryStore,
  | 'getMemory'
  | 'findByContentHash'
  | 'insertMemory'
  | 'insertUniqueMemory'
  | 'updateMemory'
  | 'supersedeMemory'
  | 'setLifecycle'
>;

/**
 * Optional integrity methods of a store for the cheap maintenance phase. A store that lacks them makes the
 * phase report 0 repaired / 0 pruned for that part (never an error).
 */
export interface IntegrityRepairSlice {
  /** Resets to `pending` rows of the agent whose index state is inconsistent (e.g. `ready` without a vector). */
  repairEmbeddingIntegrity?(
    agentId: string,
    options?: { readonly limit?: number },
  ): Promise<{ readonly repaired: number }>;
  /** Deletes index entries (vectors, FTS rows) whose memory row is gone. */
  pruneOrphanedVectors?(agentId?: string): Promise<{ readonly pruned: number }>;
}

/**
 * The slice of the store maintenance passes need.
 *
 * Contract: async; lifecycle moves with an expected revision are compare-and-set; a conflict changes nothing.
 * `listConflicts` and `resolveConflict` are optional: with them, the `challenge` step also settles the open
 * contradiction links between facts. `claimMaintenance` / `releaseMaintenance` are optional too: with them, a
 * pass first takes the agent's lease, so runners in several processes never run the same agent's pass twice.
 */
export type MaintenanceStore = Pick<
  MemoryStore,
  | 'listMemories'
  | 'getMemory'
  | 'insertMemory'
  | 'updateMemory'
  | 'archiveMemory'
  | 'supersedeMemory'
  | 'mergeMemories'
  | 'setLifecycle'
> &
  Partial<Pick<MemoryStore, 'listConflicts' | 'resolveConflict'>> &
  Pick<MemoryStore, 'claimMaintenance' | 'releaseMaintenance'> &
  IntegrityRepairSlice;

/** One neighbour returned by the retriever. */
export interface DecisionNeighbour {
  readonly record: MemoryRecord;
  readonly score: number;
}

/**
 * The slice of the retriever extraction and merge need: the `decision` purpose.
 *
 * Contract: async; resolves with the agent's active neighbours of a text, best first (already revalidated,
 * so each `record.revision` is the one to compare-and-set against), and the call's terminal outcome. Only a
 * `completed` (or `disabled` / `emptyQuery`) answer is trusted: `failed` or `cancelled` stops the work that
 * asked, so a store failure can never be mistaken for "no neighbours".
 */
export interface DecisionRetriever {
  decision(
    agentId: string,
    query: string,
    options?: {
      readonly limit?: number;
      readonly kinds?: readonly MemoryKind[];
      /** Scope filter (a user's rows only); the results all pass it. */
      readonly filter?: MemoryFilter;
      readonly signal?: AbortSignal;
    },
  ): Promise<{
    readonly results: readonly DecisionNeighbour[];
    readonly execution: { readonly outcome: string };
  }>;
}

/** Neighbours of a text, or a thrown `ENGRAM_MAINTENANCE_RETRIEVAL_FAILED` / `_ABORTED` when the retriever could not answer. */
export async function trustedNeighbours(
  retriever: DecisionRetriever,
  agentId: string,
  query: string,
  options: {
    readonly limit: number;
    readonly kinds?: readonly MemoryKind[];
    readonly filter?: MemoryFilter | undefined;
    readonly signal?: AbortSignal | undefined;
  },
): Promise<readonly DecisionNeighbour[]> {
  const answer = await retriever.decision(agentId, query, {
    limit: options.limit,
    ...(options.kinds === undefined ? {} : { kinds: options.kinds }),
    ...(options.filter === undefined ? {} : { filter: options.filter }),
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  });
  const outcome = answer.execution.outcome;
  if (outcome === 'cancelled' || options.signal?.aborted === true) throw abortedError(options.signal);
  if (outcome !== 'completed' && outcome !== 'disabled' && outcome !== 'emptyQuery') {
    throw new EngramMaintenanceError(
      'ENGRAM_MAINTENANCE_RETRIEVAL_FAILED',
      'The retriever could not answer a decision query.',
    );
  }
  return answer.results;
}
