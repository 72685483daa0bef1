/**
 * The collector's mutable state and the helpers every recorder shares. The state types are derived from
 * the DTO schemas (`z.infer`): a distribution of the DTO is a ring here, every other field is the same, so
 * the snapshot is the state with its rings summarised and nothing is declared twice.
 */

import {
  type CandidateArm,
  RETRIEVAL_PURPOSES,
  type RetrievalPurpose,
  type RetrievalStage,
} from '@engram/contracts/enums';
import {
  type agentDiagnosticsSchema,
  createEmptyProcessDiagnostics,
  type DistributionSummary,
  type processDiagnosticsSchema,
} from '@engram/contracts/health';
import { checkAgentId } from '@engram/contracts/rules';
import type { z } from 'zod';
import { EngramDiagnosticsError } from './errors.js';
import { BoundedNumberRing, type NumberRingSet, type SampleWindow } from './ring.js';

/** A DTO part as mutable state: every distribution becomes a ring, every field writable. */
export type StateOf<T> = {
  -readonly [K in keyof T]: T[K] extends DistributionSummary
    ? BoundedNumberRing
    : T[K] extends object
      ? StateOf<T[K]>
      : T[K];
};

type AgentDto = z.infer<typeof agentDiagnosticsSchema>;
type PurposeDto = AgentDto['retrieval'][RetrievalPurpose];

/**
 * One purpose's retrieval state. Its ten distributions are one ring set (the stages' latencies in
 * `RETRIEVAL_STAGES` order, then the candidate counts in `CANDIDATE_ARMS` order): the record path writes them by
 * position, the snapshot reads their members under `latency` and `candidates`.
 */
export type PurposeState = Omit<StateOf<PurposeDto>, 'latency' | 'candidates'> & {
  readonly latency: Readonly<Record<RetrievalStage, SampleWindow>>;
  readonly candidates: Readonly<Record<CandidateArm, SampleWindow>>;
  /**
   * The rings of `latency` then `candidates`, in enum order; its leading cells hold the counters of `outcomes`,
   * `arms` and `degradations` by enum position (the record path increments these, the snapshot copies them
   * into the keyed records).
   */
  readonly rings: NumberRingSet;
};
/** Extraction state of one agent. */
export type ExtractionState = StateOf<AgentDto['extraction']>;
/** Embedding-drain state of one agent. */
export type EmbeddingDrainState = StateOf<AgentDto['embedding']>;
/** Maintenance state of one agent. */
export type MaintenanceState = StateOf<AgentDto['maintenance']>;

/** One tracked agent; each section exists once the agent sent a report of that kind. */
export interface AgentState {
  readonly firstSeenAt: number;
  lastSeenAt: number;
  /** Recency: the collector's touch counter when the agent was last touched (higher is more recent). */
  stamp: number;
  readonly retrieval: Partial<Record<RetrievalPurpose, PurposeState>>;
  /** The same purpose states by position in `RETRIEVAL_PURPOSES`. */
  readonly purposes: (PurposeState | undefined)[];
  // Each purpose's ring-set cells (`PurposeState.rings.cells`), the record path's lookup: one field load.
  recallCells: Float64Array | undefined;
  searchCells: Float64Array | undefined;
  decisionCells: Float64Array | undefined;
  injectionCells: Float64Array | undefined;
  extraction?: ExtractionState;
  embedding?: EmbeddingDrainState;
  maintenance?: MaintenanceState;
}

/** The process-wide part as mutable state (`collector` is filled in at snapshot time). */
export type ProcessState = StateOf<z.infer<typeof processDiagnosticsSchema>>;

/** Validated collector settings. */
export interface CollectorSettings {
  readonly maxAgents: number;
  readonly agentTtlMs: number;
  readonly sampleCapacity: number;
  readonly clock: () => number;
}

/** True for a finite non-negative number. */
export function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0;
}

/** A set of enum members, for O(1) membership checks of untrusted values. */
export function setOf(keys: readonly string[]): ReadonlySet<unknown> {
  return new Set<unknown>(keys);
}

/**
 * The whole mutable state of one collector and the bounded-table operations on it. The record path is
 * O(1) per value, never sorts and never sweeps, except to make room when the agent table is full (a scan of
 * at most `maxAgents` entries, once per new agent).
 */
export class CollectorState {
  readonly settings: CollectorSettings;
  /** The tracked agents; their recency is their `stamp` (see `byRecency`), so a touch moves no entry. */
  readonly agents: Map<string, AgentState> = new Map();
  #tick = 0;
  readonly process: ProcessState;
  agentsEvicted = 0;
  agentsExpired = 0;
  recordsRejected = 0;
  observerFailures = 0;

  constructor(settings: CollectorSettings) {
    this.settings = settings;
    this.process = createEmptyProcessDiagnostics(settings) as ProcessState;
  }

  /** The clock's time; throws for a non-finite value (counted as an observer failure on the record path). */
  now(): number {
    const now = this.settings.clock();
    if (typeof now !== 'number' || !Number.isFinite(now)) {
      throw new EngramDiagnosticsError(
        'ENGRAM_DIAGNOSTICS_INVALID_CONFIG',
        'the clock returned a non-finite time',
      );
    }
    return now;
  }

  /** True when `value` is a member of `set`; otherwise counts a rejection. */
  known(set: ReadonlySet<unknown>, value: unknown): boolean {
    if (set.has(value)) return true;
    this.recordsRejected += 1;
    return false;
  }

  /** `value` when it is a finite non-negative number; otherwise 0 and a counted rejection. */
  amount(value: unknown): number {
    if (isCount(value)) return value;
    this.recordsRejected += 1;
    return 0;
  }

  /** Pushes a sample; a refused one is counted. */
  push(ring: BoundedNumberRing, value: unknown): void {
    if (!ring.push(value as number)) this.recordsRejected += 1;
  }

  /** A new ring of the configured capacity. */
  newRing(): BoundedNumberRing {
    return new BoundedNumberRing(this.settings.sampleCapacity);
  }

  /** The ring under `key`, created on first use. */
  ring<K extends string>(rings: Partial<Record<K, BoundedNumberRing>>, key: K): BoundedNumberRing {
    let ring = rings[key];
    if (ring === undefined) {
      ring = this.newRing();
      rings[key] = ring;
    }
    return ring;
  }

  /**
   * Makes the agent the most recent, creating (and making room for) it when new. A tracked agent was
   * validated when it was created, so the common case is one map read: no validation, no reordering.
   */
  touch(agentId: unknown): AgentState | undefined {
    const now = this.now();
    const known = typeof agentId === 'string' ? this.agents.get(agentId) : undefined;
    if (known !== undefined && now - known.lastSeenAt < this.settings.agentTtlMs) {
      known.lastSeenAt = now;
      this.#tick += 1;
      known.stamp = this.#tick;
      return known;
    }
    if (checkAgentId(agentId) !== null) {
      this.recordsRejected += 1;
      return undefined;
    }
    const id = agentId as string;
    if (known !== undefined) {
      // An agent idle past its TTL starts afresh; this checks only the touched entry (no sweep).
      this.agents.delete(id);
      this.agentsExpired += 1;
    }
    if (this.agents.size >= this.settings.maxAgents) this.#makeRoom(now);
    this.#tick += 1;
    const state: AgentState = {
      firstSeenAt: now,
      lastSeenAt: now,
      stamp: this.#tick,
      retrieval: {},
      purposes: RETRIEVAL_PURPOSES.map(() => undefined),
      recallCells: undefined,
      searchCells: undefined,
      decisionCells: undefined,
      injectionCells: undefined,
    };
    this.agents.set(id, state);
    return state;
  }

  /** The tracked agents, least recently used first (sorts: snapshot time only). */
  byRecency(): [string, AgentState][] {
    return [...this.agents.entries()].sort((a, b) => a[1].stamp - b[1].stamp);
  }

  /** Drops agents idle for the TTL; returns how many. */
  sweep(now: number): number {
    let dropped = 0;
    for (const [agentId, state] of this.agents) {
      if (now - state.lastSeenAt >= this.settings.agentTtlMs) {
        this.agents.delete(agentId);
        dropped += 1;
      }
    }
    this.agentsExpired += dropped;
    return dropped;
  }

  #makeRoom(now: number): void {
    this.sweep(now);
    while (this.agents.size >= this.settings.maxAgents) {
      let oldest: string | undefined;
      let oldestStamp = Number.POSITIVE_INFINITY;
      for (const [agentId, state] of this.agents) {
        if (state.stamp < oldestStamp) {
          oldestStamp = state.stamp;
          oldest = agentId;
        }
      }
      if (oldest === undefined) return;
      this.agents.delete(oldest);
      this.agentsEvicted += 1;
    }
  }
}
