/**
 * The store port as the conformance suite uses it, described structurally (the methods and the fields the
 * suite reads), so this package needs no dependency on the store: both adapters satisfy it as they are.
 */
import type { MemoryFilter } from '@engram/contracts';
import type { ConformanceStore } from './store-conformance.js';

/** An event as the suite appends it. */
export interface ConformanceEvent {
  readonly seq: number;
  readonly type: 'message' | 'tool_call' | 'tool_result';
  readonly role: string;
  readonly content: string;
  readonly toolName?: string;
  readonly metadata?: Readonly<Record<string, unknown>>;
  readonly createdAt?: number;
  readonly userId?: string;
}

/** A memory as the suite writes it (the port's `NewMemory`, the fields the suite sets). */
export interface ConformanceNewMemory {
  readonly id?: string;
  readonly agentId: string;
  readonly kind: 'fact' | 'semantic' | 'episodic' | 'event';
  readonly content: string;
  readonly tags?: readonly string[];
  readonly vector?: Float32Array;
  readonly importance?: number;
  readonly confidence?: number;
  readonly userId?: string;
  readonly metadata?: Readonly<Record<string, unknown>>;
  readonly createdAt?: number;
  readonly sessionId?: string;
  readonly seqFrom?: number;
  readonly seqTo?: number;
}

/** A scope and metadata filter: the port's `MemoryFilter` (from the contracts). */
export type ConformanceFilter = MemoryFilter;

/** A time scope (the port's `TimeScope`). */
export interface ConformanceTime {
  readonly asOf?: number;
  readonly includeHistory?: boolean;
}

/** A history entry, the fields the suite reads. */
export interface ConformanceHistoryEntry {
  readonly memoryId: string;
  readonly action: string;
  readonly at: number;
  readonly actor: string | null;
  readonly reason: string | null;
  readonly relatedId: string | null;
  readonly previousContent: string | null;
}

/** The fields of a record the extended suites read, besides `ConformanceRecord`'s. */
export interface ConformanceFullRecord {
  readonly id: string;
  readonly revision: number;
  readonly lifecycle: string;
  readonly content: string;
  readonly contentHash: string;
  readonly embeddingState: string;
  readonly embeddingFingerprint: string | null;
  readonly embeddingAttempts: number;
  readonly tags: readonly string[];
  readonly seqFrom: number | null;
  readonly seqTo: number | null;
  readonly sessionId: string | null;
  readonly validFrom: number;
  readonly validTo: number | null;
  readonly forgottenAt: number | null;
}

/** An embedding outcome as the suite commits it. */
export type ConformanceOutcome =
  | {
      readonly id: string;
      readonly revision: number;
      readonly state: 'ready';
      readonly vector: Float32Array;
      readonly chunk?: number;
    }
  | {
      readonly id: string;
      readonly revision: number;
      readonly state: 'error' | 'ftsOnly';
      readonly chunk?: number;
      /** An `error` outcome's code (`ENGRAM_…`). */
      readonly code?: string;
    };

/** A process beat as the suite publishes it (the port's `ProcessBeatInput`). */
export interface ConformanceBeatInput {
  readonly processId: string;
  readonly startedAt: number;
  readonly ttlMs: number;
  /** Content-free JSON for the port; anything else (the suite's bad input) must be refused. */
  readonly snapshot: unknown;
}

/** The store port with every slice the suites use. */
export interface ConformancePort extends ConformanceStore {
  claimMaintenance(
    agentId: string,
    options: { readonly leaseMs: number; readonly owner?: string; readonly takeOver?: boolean },
  ): Promise<{ readonly claimed: boolean; readonly until?: number }>;
  releaseMaintenance(agentId: string, options?: { readonly owner?: string }): Promise<void>;
  publishProcessBeat(beat: ConformanceBeatInput): Promise<{ readonly expired: number }>;
  removeProcessBeat(processId: string): Promise<void>;
  listProcessBeats(): Promise<{
    readonly beats: readonly (Omit<ConformanceBeatInput, 'snapshot'> & {
      readonly beatAt: number;
      readonly snapshot: unknown;
    })[];
    readonly skipped: number;
  }>;
  readonly embeddingProfile: { readonly id: string; readonly dimensions: number } | null;
  readonly closed: boolean;
  close(): void | Promise<void>;
  insertUniqueMemory(input: ConformanceNewMemory): Promise<{
    readonly created: boolean;
    readonly record: ConformanceFullRecord & ConformanceRecordBase;
  }>;
  findByContentHash(
    agentId: string,
    hash: string,
    kind?: 'fact' | 'semantic',
  ): Promise<readonly (ConformanceFullRecord & ConformanceRecordBase)[]>;
  getMemory(agentId: string, id: string): Promise<(ConformanceFullRecord & ConformanceRecordBase) | null>;
  insertMemory(input: ConformanceNewMemory): Promise<ConformanceFullRecord & ConformanceRecordBase>;
  insertMemories(
    inputs: readonly ConformanceNewMemory[],
  ): Promise<readonly (ConformanceFullRecord & ConformanceRecordBase)[]>;
  listMemories(
    agentId: string,
    options?: {
      readonly limit?: number;
      readonly afterId?: string;
      readonly tags?: readonly string[];
      readonly kinds?: readonly ('fact' | 'semantic' | 'event')[];
      readonly lifecycles?: readonly ('active' | 'archived')[];
      readonly filter?: ConformanceFilter;
    },
  ): Promise<readonly (ConformanceFullRecord & ConformanceRecordBase)[]>;
  updateMemory(
    agentId: string,
    id: string,
    expectedRevision: number,
    patch: {
      readonly content?: string;
      readonly importance?: number;
      readonly confidence?: number;
      readonly tags?: readonly string[];
      readonly kind?: 'fact' | 'event';
      readonly lifecycle?: 'active' | 'archived' | 'superseded';
    },
  ): Promise<ConformanceFullRecord & ConformanceRecordBase & { readonly importance: number }>;
  searchLexical(query: {
    readonly agentId: string;
    readonly terms: readonly string[];
    readonly limit: number;
    readonly mode?: 'any' | 'all';
    readonly kinds?: readonly string[];
    readonly tags?: readonly string[];
    readonly filter?: ConformanceFilter;
    readonly time?: ConformanceTime;
    readonly includeArchived?: boolean;
  }): Promise<{
    readonly hits: readonly {
      readonly id: string;
      readonly score: number;
      readonly chunk?: { readonly index: number; readonly start: number; readonly end: number };
      readonly memoryScore?: number;
    }[];
    readonly paths: { readonly words: boolean; readonly trigram: boolean; readonly like: boolean };
    readonly likeTerms: readonly string[];
    readonly droppedTerms: number;
  }>;
  searchVector(query: {
    readonly agentId: string;
    readonly vector: Float32Array;
    readonly k: number;
    readonly filter?: ConformanceFilter;
  }): Promise<
    readonly {
      readonly id: string;
      readonly distance: number;
      readonly similarity: number;
      readonly chunk?: { readonly index: number; readonly start: number; readonly end: number };
      readonly memoryScore?: number;
    }[]
  >;
  revalidate(
    agentId: string,
    candidates: readonly { readonly id: string; readonly revision?: number }[],
    options?: ConformanceTime & { readonly includeArchived?: boolean },
  ): Promise<readonly (ConformanceFullRecord & ConformanceRecordBase)[]>;
  /** Optional in the port; both stores of this repository offer it. */
  revalidateBrief?(
    agentId: string,
    candidates: readonly { readonly id: string; readonly revision?: number }[],
    options?: ConformanceTime & { readonly includeArchived?: boolean },
  ): Promise<readonly { readonly id: string; readonly revision: number }[]>;
  /** Optional in the port; both stores of this repository offer it. */
  sessionNeighbours?(
    agentId: string,
    windows: readonly { readonly sessionId: string; readonly from: number; readonly to: number }[],
    options?: ConformanceTime & { readonly includeArchived?: boolean; readonly forUser?: string },
  ): Promise<
    readonly {
      readonly id: string;
      readonly sessionId: string | null;
      readonly seqFrom: number | null;
      readonly seqTo: number | null;
    }[]
  >;
  history(
    agentId: string,
    id: string,
  ): Promise<{
    readonly chain: readonly string[];
    readonly records: readonly { readonly id: string }[];
    readonly entries: readonly ConformanceHistoryEntry[];
  }>;
  forgetMemory(
    agentId: string,
    id: string,
    options?: { readonly actor?: string; readonly reason?: string },
  ): Promise<{ readonly forgotten: readonly string[]; readonly mode: string }>;
  deleteAll(
    agentId: string,
    options?: { readonly actor?: string; readonly reason?: string },
  ): Promise<{
    readonly memories: number;
    readonly events: number;
    readonly skills: number;
    readonly mode: string;
  }>;
  mergeMemories(
    agentId: string,
    sources: readonly { readonly id: string; readonly expectedRevision: number }[],
    merged: ConformanceNewMemory,
  ): Promise<{
    readonly superseded: readonly (ConformanceFullRecord & ConformanceRecordBase)[];
    readonly merged: ConformanceFullRecord & ConformanceRecordBase;
  }>;
  pruneOrphanedVectors(agentId?: string): Promise<{ readonly pruned: number }>;
  linkConflict(agentId: string, olderId: string, newerId: string, reason: string): Promise<boolean>;
  listConflicts(
    agentId: string,
    options?: {
      readonly ids?: readonly string[];
      readonly state?: 'open' | 'resolved' | 'dismissed';
      readonly limit?: number;
      readonly forUser?: string;
    },
  ): Promise<readonly { readonly olderId: string; readonly newerId: string; readonly state: string }[]>;
  resolveConflict(
    agentId: string,
    olderId: string,
    newerId: string,
    resolution: {
      readonly outcome: 'supersede' | 'dismiss';
      readonly actor?: string;
      readonly reason?: string;
    },
  ): Promise<{ readonly state: string }>;
  supersedeMemory(
    agentId: string,
    oldId: string,
    expectedRevision: number,
    replacement: ConformanceNewMemory,
  ): Promise<{
    readonly superseded: ConformanceFullRecord & ConformanceRecordBase;
    readonly replacement: ConformanceFullRecord & ConformanceRecordBase;
  }>;
  setLifecycle(
    agentId: string,
    id: string,
    expectedRevision: number,
    lifecycle: 'active' | 'archived',
  ): Promise<ConformanceFullRecord & ConformanceRecordBase>;
  archiveMemory(
    agentId: string,
    id: string,
    expectedRevision?: number,
  ): Promise<ConformanceFullRecord & ConformanceRecordBase>;
  listPendingEmbeddings(options: {
    readonly limit: number;
    readonly agentId?: string;
    readonly retryErrorsBelowAttempts?: number;
    readonly ids?: readonly string[];
  }): Promise<
    readonly {
      readonly id: string;
      readonly agentId: string;
      readonly revision: number;
      readonly content: string;
      readonly embeddingAttempts: number;
      readonly chunk?: number;
    }[]
  >;
  commitEmbeddings(outcomes: readonly ConformanceOutcome[]): Promise<{
    readonly ready: number;
    readonly error: number;
    readonly ftsOnly: number;
    readonly stale: number;
  }>;
  appendEvents(
    agentId: string,
    sessionId: string,
    events: readonly ConformanceEvent[],
  ): Promise<{ readonly appended: number; readonly skipped: number; readonly lastSeq: number }>;
  readEvents(
    agentId: string,
    sessionId: string,
    fromSeq: number,
    toSeq: number,
  ): Promise<readonly { readonly seq: number; readonly content: string }[]>;
  listEventsAfter(
    agentId: string,
    sessionId: string,
    afterSeq: number,
    limit: number,
  ): Promise<readonly { readonly seq: number }[]>;
  listSessions(
    agentId: string,
  ): Promise<readonly { readonly sessionId: string; readonly lastSeq: number; readonly cursor: number }[]>;
  listFailedEmbeddings(
    agentId: string,
    options?: { readonly forUser?: string; readonly limit?: number; readonly afterId?: string },
  ): Promise<
    readonly {
      readonly id: string;
      readonly agentId: string;
      readonly userId: string | null;
      readonly errorCode: string;
      readonly attempts: number;
      readonly failedAt: number | null;
    }[]
  >;
  listSessionSummaries(
    agentId: string,
    options?: { readonly forUser?: string; readonly limit?: number; readonly afterSessionId?: string },
  ): Promise<
    readonly {
      readonly sessionId: string;
      readonly entries: number;
      readonly firstAt: number;
      readonly lastAt: number;
    }[]
  >;
  ingestBatch(batch: {
    readonly agentId: string;
    readonly sessionId: string;
    readonly expectedCursor: number;
    readonly nextCursor: number;
    readonly memories: readonly ConformanceNewMemory[];
  }): Promise<readonly (ConformanceFullRecord & ConformanceRecordBase)[]>;
  deleteSkill(agentId: string, name: string): Promise<boolean>;
  health(agentId?: string): Promise<
    | {
        readonly ok: true;
        readonly health: {
          readonly totals: {
            readonly memories: number;
            readonly events: number;
            readonly facts: number;
            readonly skills: number;
          };
          readonly byKind: Readonly<Record<string, number>>;
          readonly byLifecycle: Readonly<Record<string, number>>;
          readonly byEmbeddingState: Readonly<Record<string, number>>;
        };
      }
    | { readonly ok: false; readonly code: string }
  >;
}

/** The fields every record carries in the base suite. */
interface ConformanceRecordBase {
  readonly agentId: string;
  readonly supersededBy: string | null;
  readonly accessCount: number;
}

/** The embedder profile a factory binds when `vectors` is true. */
export const CONFORMANCE_PROFILE: { readonly id: string; readonly dimensions: number } = {
  id: 'conformance-v1',
  dimensions: 4,
};

/** How a suite opens a store: a clock it controls, and whether the store binds `CONFORMANCE_PROFILE`. */
export interface ConformanceOpenOptions {
  readonly now: () => number;
  /** Ids of inserted rows that name none: `gen-1`, `gen-2`, … */
  readonly idFactory: () => string;
  /** `false`: a store without an embedder profile (`embedding: null`). */
  readonly vectors: boolean;
  /** What forgetting does (the stores' `forget` option; `erase` is their default). */
  readonly forget: 'erase' | 'keep';
}

/** One store under test and how to close it. */
export interface ConformancePortHarness {
  readonly store: ConformancePort;
  /** A second store instance on the same database or file (another worker), with the same clock. */
  openSecond(): Promise<{ readonly store: ConformancePort; close(): Promise<void> | void }>;
  close(): Promise<void> | void;
}

/** A suite's way to open stores: each call an empty store. */
export type ConformanceOpen = (options: ConformanceOpenOptions) => Promise<ConformancePortHarness>;

/** A settable clock, starting at `start`. */
export interface TestClock {
  readonly now: () => number;
  set(t: number): void;
}

/** A settable clock, starting at `start`. */
export function testClock(start: number): TestClock {
  let t = start;
  return { now: () => t, set: (v) => (t = v) };
}

/** Runs `fn` on a fresh store (closed afterwards); `vectors: false` opens one without a profile. */
export function withPort(
  open: ConformanceOpen,
  fn: (s: ConformancePort, clock: TestClock) => Promise<void>,
  options: { readonly vectors?: boolean; readonly start?: number; readonly forget?: 'erase' | 'keep' } = {},
): () => Promise<void> {
  return async () => {
    const clock = testClock(options.start ?? 10_000);
    let n = 0;
    const idFactory = (): string => {
      n += 1;
      return `gen-${n}`;
    };
    const h = await open({
      now: clock.now,
      idFactory,
      vectors: options.vectors ?? true,
      forget: options.forget ?? 'erase',
    });
    try {
      await fn(h.store, clock);
    } finally {
      await h.close();
    }
  };
}

/** A 4-d vector. */
export const vec4 = (...xs: number[]): Float32Array => new Float32Array(xs);
