/**
 * The in-memory diagnostics collector (DESIGN.md, "Diagnostics"): bounded per-agent state, process-wide
 * gauges, and the observer ports the producers call. The record path is O(1) per value, never sorts and
 * never sweeps (except to make room when the agent table is full); percentiles are computed at snapshot time.
 */

import type {
  CircuitSnapshot,
  DegradationCause,
  RetrievalArm,
  RetrievalExecution,
  RetrievalObserver,
  RetrievalOutcome,
  RetrievalPurpose,
  RetrievalStage,
} from '@engram/contracts';
import type {
  DrainBatchReport,
  ExtractionDecision,
  ExtractionOutcome,
  ExtractionReport,
  MaintenanceObserver,
  MaintenancePassReport,
  MaintenanceStep,
  PhaseOutcome,
  ProviderKind,
  ProviderObserver,
} from '@engram/maintenance';
import type { StatementKind, StoreObserver, VectorWarmupOutcome } from '@engram/store';
import {
  ADMISSION_DECISION_KEYS,
  CANDIDATE_KEYS,
  CIRCUIT_STATE_KEYS,
  DEGRADATION_CAUSE_KEYS,
  DRAIN_TRANSITION_KEYS,
  EXTRACTION_DECISION_KEYS,
  EXTRACTION_OUTCOME_KEYS,
  MAINTENANCE_STEP_KEYS,
  PHASE_OUTCOME_KEYS,
  PROVIDER_KIND_KEYS,
  PROVIDER_RACE_KEYS,
  RETRIEVAL_ARM_KEYS,
  RETRIEVAL_OUTCOME_KEYS,
  RETRIEVAL_PURPOSE_KEYS,
  RETRIEVAL_STAGE_KEYS,
  STATEMENT_KIND_KEYS,
  VECTOR_WARMUP_OUTCOME_KEYS,
} from './enums.js';
import { EngramDiagnosticsError } from './errors.js';
import { BoundedNumberRing, DEFAULT_SAMPLE_CAPACITY, summarize } from './ring.js';
import {
  type AgentDiagnostics,
  type CandidateArm,
  createEmptyAgentDiagnostics,
  createEmptyProcessDiagnostics,
  DEFAULT_AGENT_TTL_MS,
  DEFAULT_MAX_AGENTS,
  DIAGNOSTICS_SCHEMA_VERSION,
  type DiagnosticsSnapshot,
  type DiagnosticsSnapshotAll,
  type DrainTransition,
  fillRecord,
  MAX_AGENT_ID_LENGTH,
  type ProcessDiagnostics,
} from './schema.js';

/** Construction options of the collector; every field has a default. */
export interface DiagnosticsCollectorConfig {
  /** Agents tracked at most (LRU beyond). Default 64. */
  readonly maxAgents?: number;
  /** Idle time after which an agent's state is dropped, in ms. Default 24 h. */
  readonly agentTtlMs?: number;
  /** Samples kept per distribution. Default 256. */
  readonly sampleCapacity?: number;
  /** Clock in epoch ms. Default `Date.now`. */
  readonly now?: () => number;
}

/**
 * A diagnostics collector: implements the producers' observer ports and answers snapshots.
 *
 * Contract: the port methods are synchronous, never throw and never wait (a failure inside is counted in
 * `process.collector.observerFailures`); they copy numbers and closed enum values only, so no text a report
 * might carry can reach a snapshot. `snapshot`, `snapshotAll`, `listAgents` and `cleanup` sweep agents idle
 * for `agentTtlMs`; nothing else does, except making room when the agent table is full.
 */
export interface DiagnosticsCollector {
  /** Pass to the retriever (`observer`). */
  readonly retrievalObserver: RetrievalObserver;
  /** Pass to the drain, extraction and maintenance passes. */
  readonly maintenanceObserver: MaintenanceObserver;
  /** Pass to the provider gateway. */
  readonly providerObserver: ProviderObserver;
  /** Pass to the SQLite store. */
  readonly storeObserver: StoreObserver;
  /** One agent's part (an empty part for an unknown agent) or, without an id, all tracked agents merged; plus the process part. */
  snapshot(agentId?: string): DiagnosticsSnapshot;
  /** Every tracked agent's part, most recently used first, plus the process part. */
  snapshotAll(): DiagnosticsSnapshotAll;
  /** Tracked agent ids, most recently used first. */
  listAgents(): readonly string[];
  /** Drops agents idle for `agentTtlMs`; returns how many were dropped. */
  cleanup(): number;
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] extends object ? Mutable<T[K]> : T[K] };
type Counts<K extends string> = Record<K, number>;
type Rings<K extends string> = Partial<Record<K, BoundedNumberRing>>;

interface PurposeState {
  operations: number;
  readonly outcomes: Counts<RetrievalOutcome>;
  readonly degradations: Counts<DegradationCause>;
  readonly arms: Counts<RetrievalArm>;
  readonly latency: Rings<RetrievalStage>;
  readonly candidates: Rings<CandidateArm>;
}

interface ExtractionState {
  chunks: number;
  readonly outcomes: Counts<ExtractionOutcome>;
  readonly decisions: Counts<ExtractionDecision>;
  candidates: number;
  invalidOutputs: number;
  conflicts: number;
  readonly duration: BoundedNumberRing;
}

interface EmbeddingState {
  batches: number;
  rows: number;
  readonly transitions: Counts<DrainTransition>;
  readonly batchSize: BoundedNumberRing;
  readonly duration: BoundedNumberRing;
}

interface MaintenanceState {
  passes: number;
  readonly cheapOutcomes: Counts<PhaseOutcome>;
  repaired: number;
  archived: number;
  pruned: number;
  readonly heavyOutcomes: Counts<PhaseOutcome>;
  modelCalls: number;
  inputTokens: number;
  invalidOutputs: number;
  conflicts: number;
  readonly denials: Counts<MaintenanceStep>;
  readonly steps: Record<MaintenanceStep, Counts<PhaseOutcome>>;
  readonly duration: BoundedNumberRing;
}

interface AgentState {
  readonly firstSeenAt: number;
  lastSeenAt: number;
  readonly retrieval: Partial<Record<RetrievalPurpose, PurposeState>>;
  extraction?: ExtractionState;
  embedding?: EmbeddingState;
  maintenance?: MaintenanceState;
}

const setOf = (keys: readonly string[]): ReadonlySet<unknown> => new Set<unknown>(keys);
const PURPOSES = setOf(RETRIEVAL_PURPOSE_KEYS);
const RETRIEVAL_OUTCOMES = setOf(RETRIEVAL_OUTCOME_KEYS);
const DEGRADATIONS = setOf(DEGRADATION_CAUSE_KEYS);
const ARMS = setOf(RETRIEVAL_ARM_KEYS);
const CIRCUIT_STATES = setOf(CIRCUIT_STATE_KEYS);
const EXTRACTION_OUTCOMES = setOf(EXTRACTION_OUTCOME_KEYS);
const PHASE_OUTCOMES = setOf(PHASE_OUTCOME_KEYS);
const PROVIDER_KINDS = setOf(PROVIDER_KIND_KEYS);
const ADMISSIONS = setOf(ADMISSION_DECISION_KEYS);
const RACES = setOf(PROVIDER_RACE_KEYS);
const WARMUPS = setOf(VECTOR_WARMUP_OUTCOME_KEYS);
const STATEMENTS = setOf(STATEMENT_KIND_KEYS);

const zero = (): number => 0;

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0;
}

function positiveInteger(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new EngramDiagnosticsError(
      'ENGRAM_DIAGNOSTICS_INVALID_CONFIG',
      `${name} must be a positive safe integer`,
    );
  }
  return value;
}

function sumBy<K extends string>(keys: readonly K[], records: readonly (Counts<K> | undefined)[]): Counts<K> {
  return fillRecord(keys, (key) => {
    let total = 0;
    for (const record of records) total += record?.[key] ?? 0;
    return total;
  });
}

function sumOf<T>(items: readonly (T | undefined)[], pick: (item: T) => number): number {
  let total = 0;
  for (const item of items) if (item !== undefined) total += pick(item);
  return total;
}

/** The bounded in-memory implementation of {@link DiagnosticsCollector}. */
export class MemoryDiagnosticsCollector implements DiagnosticsCollector {
  /** The retriever's observer port (wrapped recorders). */
  readonly retrievalObserver: RetrievalObserver;
  /** The drain, extraction and maintenance observer port (wrapped recorders). */
  readonly maintenanceObserver: MaintenanceObserver;
  /** The provider gateway's observer port (wrapped recorders). */
  readonly providerObserver: ProviderObserver;
  /** The SQLite store's observer port (wrapped recorders). */
  readonly storeObserver: StoreObserver;

  readonly #maxAgents: number;
  readonly #agentTtlMs: number;
  readonly #sampleCapacity: number;
  readonly #clock: () => number;
  /** Insertion order is recency order: the first entry is the least recently used agent. */
  readonly #agents = new Map<string, AgentState>();
  readonly #process: Mutable<ProcessDiagnostics>;
  #agentsEvicted = 0;
  #agentsExpired = 0;
  #recordsRejected = 0;
  #observerFailures = 0;

  /** Validates and freezes the configuration; throws `ENGRAM_DIAGNOSTICS_INVALID_CONFIG` for a bad option. */
  constructor(config: DiagnosticsCollectorConfig = {}) {
    this.#maxAgents = positiveInteger(config.maxAgents, DEFAULT_MAX_AGENTS, 'maxAgents');
    this.#agentTtlMs = positiveInteger(config.agentTtlMs, DEFAULT_AGENT_TTL_MS, 'agentTtlMs');
    this.#sampleCapacity = positiveInteger(config.sampleCapacity, DEFAULT_SAMPLE_CAPACITY, 'sampleCapacity');
    if (config.now !== undefined && typeof config.now !== 'function') {
      throw new EngramDiagnosticsError('ENGRAM_DIAGNOSTICS_INVALID_CONFIG', 'now must be a function');
    }
    this.#clock = config.now ?? Date.now;
    this.#process = createEmptyProcessDiagnostics({
      maxAgents: this.#maxAgents,
      agentTtlMs: this.#agentTtlMs,
      sampleCapacity: this.#sampleCapacity,
    }) as Mutable<ProcessDiagnostics>;

    this.retrievalObserver = Object.freeze({
      onRetrieval: this.#guard((execution: RetrievalExecution) => this.#recordRetrieval(execution)),
      onCircuitState: this.#guard((snapshot: CircuitSnapshot) => this.#recordCircuit(snapshot)),
    });
    this.maintenanceObserver = Object.freeze({
      onDrainBatch: this.#guard((report: DrainBatchReport) => this.#recordDrainBatch(report)),
      onEmbeddingBacklog: this.#guard((gauge: { readonly total: number; readonly activeAgents: number }) =>
        this.#recordBacklog(gauge),
      ),
      onExtraction: this.#guard((report: ExtractionReport) => this.#recordExtraction(report)),
      onExtractionQueue: this.#guard((gauge: { readonly depth: number; readonly oldestAgeMs: number }) =>
        this.#recordExtractionQueue(gauge),
      ),
      onMaintenancePass: this.#guard((report: MaintenancePassReport) => this.#recordMaintenancePass(report)),
    });
    this.providerObserver = Object.freeze({
      onQueue: this.#guard(
        (gauge: { readonly kind: ProviderKind; readonly queued: number; readonly active: number }) =>
          this.#recordProviderQueue(gauge),
      ),
      onAdmission: this.#guard((kind: ProviderKind, decision: unknown) =>
        this.#countProvider(kind, 'admissions', ADMISSIONS, decision),
      ),
      onRace: this.#guard((kind: ProviderKind, race: unknown) =>
        this.#countProvider(kind, 'races', RACES, race),
      ),
    });
    this.storeObserver = Object.freeze({
      onStatement: this.#guard((kind: unknown) => {
        if (!this.#known(STATEMENTS, kind)) return;
        this.#process.store.statements[kind as StatementKind] += 1;
      }),
      onVectorStores: this.#guard((gauge: { readonly openStores: number; readonly leases: number }) =>
        this.#recordVectorStores(gauge),
      ),
      onVectorWarmup: this.#guard((outcome: unknown) => {
        if (!this.#known(WARMUPS, outcome)) return;
        this.#process.vectorStores.warmup[outcome as VectorWarmupOutcome] += 1;
      }),
    });
  }

  // -------------------------------------------------------------------------------------------------------
  // Reading

  /** See {@link DiagnosticsCollector.snapshot}; throws for an empty or over-long agent id. */
  snapshot(agentId?: string): DiagnosticsSnapshot {
    if (agentId !== undefined && !this.#validAgentId(agentId)) {
      throw new EngramDiagnosticsError(
        'ENGRAM_DIAGNOSTICS_INVALID_ARGUMENT',
        `agentId must be a non-empty string of at most ${MAX_AGENT_ID_LENGTH} characters`,
      );
    }
    const now = this.#now();
    this.#sweep(now);
    let states: AgentState[];
    if (agentId === undefined) {
      states = [...this.#agents.values()];
    } else {
      const state = this.#agents.get(agentId);
      states = state === undefined ? [] : [state];
    }
    return {
      schemaVersion: DIAGNOSTICS_SCHEMA_VERSION,
      generatedAt: now,
      agentId: agentId ?? null,
      agent: this.#agentPart(states),
      process: this.#processPart(),
    };
  }

  /** See {@link DiagnosticsCollector.snapshotAll}. */
  snapshotAll(): DiagnosticsSnapshotAll {
    const now = this.#now();
    this.#sweep(now);
    const agents = [...this.#agents.entries()]
      .reverse()
      .map(([agentId, state]) => ({ agentId, agent: this.#agentPart([state]) }));
    return {
      schemaVersion: DIAGNOSTICS_SCHEMA_VERSION,
      generatedAt: now,
      agents,
      process: this.#processPart(),
    };
  }

  /** See {@link DiagnosticsCollector.listAgents}. */
  listAgents(): readonly string[] {
    this.#sweep(this.#now());
    return [...this.#agents.keys()].reverse();
  }

  /** See {@link DiagnosticsCollector.cleanup}. */
  cleanup(): number {
    return this.#sweep(this.#now());
  }

  // -------------------------------------------------------------------------------------------------------
  // Record path: O(1) per value, no sorting, no sweeping unless the agent table is full.

  #guard<A extends unknown[]>(record: (...args: A) => void): (...args: A) => void {
    return (...args: A): void => {
      try {
        record(...args);
      } catch {
        // Isolation: a diagnostics failure is counted, never surfaced to the producer.
        this.#observerFailures += 1;
      }
    };
  }

  #now(): number {
    const now = this.#clock();
    if (typeof now !== 'number' || !Number.isFinite(now)) {
      throw new EngramDiagnosticsError(
        'ENGRAM_DIAGNOSTICS_INVALID_CONFIG',
        'the clock returned a non-finite time',
      );
    }
    return now;
  }

  #validAgentId(agentId: unknown): agentId is string {
    return typeof agentId === 'string' && agentId.length > 0 && agentId.length <= MAX_AGENT_ID_LENGTH;
  }

  /** True when `value` is a member of `set`; otherwise counts a rejection. */
  #known(set: ReadonlySet<unknown>, value: unknown): boolean {
    if (set.has(value)) return true;
    this.#recordsRejected += 1;
    return false;
  }

  /** `value` when it is a finite non-negative number; otherwise 0 and a counted rejection. */
  #amount(value: unknown): number {
    if (isCount(value)) return value;
    this.#recordsRejected += 1;
    return 0;
  }

  #push(ring: BoundedNumberRing, value: unknown): void {
    if (!ring.push(value as number)) this.#recordsRejected += 1;
  }

  #ring<K extends string>(rings: Rings<K>, key: K): BoundedNumberRing {
    let ring = rings[key];
    if (ring === undefined) {
      ring = new BoundedNumberRing(this.#sampleCapacity);
      rings[key] = ring;
    }
    return ring;
  }

  /** Moves the agent to the most-recent end, creating (and making room for) it when new. */
  #touch(agentId: unknown): AgentState | undefined {
    if (!this.#validAgentId(agentId)) {
      this.#recordsRejected += 1;
      return undefined;
    }
    const now = this.#now();
    let state = this.#agents.get(agentId);
    if (state !== undefined) {
      this.#agents.delete(agentId);
      // An agent idle past its TTL starts afresh; this checks only the touched entry (no sweep).
      if (now - state.lastSeenAt >= this.#agentTtlMs) {
        this.#agentsExpired += 1;
        state = undefined;
      }
    }
    if (state === undefined) {
      if (this.#agents.size >= this.#maxAgents) this.#makeRoom(now);
      state = { firstSeenAt: now, lastSeenAt: now, retrieval: {} };
    }
    state.lastSeenAt = now;
    this.#agents.set(agentId, state);
    return state;
  }

  #makeRoom(now: number): void {
    this.#sweep(now);
    while (this.#agents.size >= this.#maxAgents) {
      const oldest = this.#agents.keys().next();
      if (oldest.done === true) return;
      this.#agents.delete(oldest.value);
      this.#agentsEvicted += 1;
    }
  }

  #sweep(now: number): number {
    let dropped = 0;
    for (const [agentId, state] of this.#agents) {
      if (now - state.lastSeenAt >= this.#agentTtlMs) {
        this.#agents.delete(agentId);
        dropped += 1;
      }
    }
    this.#agentsExpired += dropped;
    return dropped;
  }

  #recordRetrieval(execution: RetrievalExecution): void {
    const purpose = execution.purpose;
    const outcome = execution.outcome;
    if (!this.#known(PURPOSES, purpose) || !this.#known(RETRIEVAL_OUTCOMES, outcome)) return;
    const agent = this.#touch(execution.agentId);
    if (agent === undefined) return;
    let state = agent.retrieval[purpose];
    if (state === undefined) {
      state = {
        operations: 0,
        outcomes: fillRecord(RETRIEVAL_OUTCOME_KEYS, zero),
        degradations: fillRecord(DEGRADATION_CAUSE_KEYS, zero),
        arms: fillRecord(RETRIEVAL_ARM_KEYS, zero),
        latency: {},
        candidates: {},
      };
      agent.retrieval[purpose] = state;
    }
    state.operations += 1;
    state.outcomes[outcome] += 1;

    // A set of causes: each distinct known cause counts once per operation.
    const degradations: readonly unknown[] = Array.isArray(execution.degradations)
      ? execution.degradations
      : [];
    let seen = 0;
    for (const cause of degradations) {
      if (!this.#known(DEGRADATIONS, cause)) continue;
      const bit = 1 << DEGRADATION_CAUSE_KEYS.indexOf(cause as DegradationCause);
      if ((seen & bit) !== 0) continue;
      seen |= bit;
      state.degradations[cause as DegradationCause] += 1;
    }

    // Optional: absent when no arm ran. Each distinct known arm counts once per call.
    const arms: unknown = execution.arms;
    if (Array.isArray(arms)) {
      let seenArms = 0;
      for (const arm of arms as readonly unknown[]) {
        if (!this.#known(ARMS, arm)) continue;
        const bit = 1 << RETRIEVAL_ARM_KEYS.indexOf(arm as RetrievalArm);
        if ((seenArms & bit) !== 0) continue;
        seenArms |= bit;
        state.arms[arm as RetrievalArm] += 1;
      }
    } else if (arms !== undefined) {
      this.#recordsRejected += 1;
    }

    const latencies = execution.latencies as Readonly<Record<string, unknown>> | undefined;
    if (latencies !== undefined && latencies !== null) {
      for (const stage of RETRIEVAL_STAGE_KEYS) {
        const value = latencies[stage];
        // A stage that did not run is absent, never 0.
        if (value !== undefined) this.#push(this.#ring(state.latency, stage), value);
      }
    }
    const candidates = execution.candidates as unknown as Readonly<Record<string, unknown>> | undefined;
    if (candidates !== undefined && candidates !== null) {
      for (const arm of CANDIDATE_KEYS) {
        const value = candidates[arm];
        if (value !== undefined) this.#push(this.#ring(state.candidates, arm), value);
      }
    }
  }

  #recordExtraction(report: ExtractionReport): void {
    const outcome = report.outcome;
    if (!this.#known(EXTRACTION_OUTCOMES, outcome)) return;
    const agent = this.#touch(report.agentId);
    if (agent === undefined) return;
    let state = agent.extraction;
    if (state === undefined) {
      state = {
        chunks: 0,
        outcomes: fillRecord(EXTRACTION_OUTCOME_KEYS, zero),
        decisions: fillRecord(EXTRACTION_DECISION_KEYS, zero),
        candidates: 0,
        invalidOutputs: 0,
        conflicts: 0,
        duration: new BoundedNumberRing(this.#sampleCapacity),
      };
      agent.extraction = state;
    }
    state.chunks += 1;
    state.outcomes[outcome] += 1;
    const decisions = report.decisions as Readonly<Record<string, unknown>> | undefined;
    if (decisions !== undefined && decisions !== null) {
      for (const decision of EXTRACTION_DECISION_KEYS) {
        const value = decisions[decision];
        if (value !== undefined) state.decisions[decision] += this.#amount(value);
      }
    }
    state.candidates += this.#amount(report.candidates);
    state.invalidOutputs += this.#amount(report.invalidOutputs);
    state.conflicts += this.#amount(report.conflicts);
    // A skipped chunk did no work (no model configured): its 0 ms is not a duration sample.
    if (outcome !== 'skipped') this.#push(state.duration, report.durationMs);
  }

  #recordDrainBatch(report: DrainBatchReport): void {
    const agent = this.#touch(report.agentId);
    if (agent === undefined) return;
    let state = agent.embedding;
    if (state === undefined) {
      state = {
        batches: 0,
        rows: 0,
        transitions: fillRecord(DRAIN_TRANSITION_KEYS, zero),
        batchSize: new BoundedNumberRing(this.#sampleCapacity),
        duration: new BoundedNumberRing(this.#sampleCapacity),
      };
      agent.embedding = state;
    }
    state.batches += 1;
    state.rows += this.#amount(report.batchSize);
    this.#push(state.batchSize, report.batchSize);
    this.#push(state.duration, report.durationMs);
    const transitions = report.transitions as Readonly<Record<string, unknown>> | undefined;
    if (transitions !== undefined && transitions !== null) {
      for (const transition of DRAIN_TRANSITION_KEYS) {
        const value = transitions[transition];
        if (value !== undefined) state.transitions[transition] += this.#amount(value);
      }
    }
  }

  #recordMaintenancePass(report: MaintenancePassReport): void {
    const cheapOutcome = report.cheap.outcome;
    const heavyOutcome = report.heavy.outcome;
    if (!this.#known(PHASE_OUTCOMES, cheapOutcome) || !this.#known(PHASE_OUTCOMES, heavyOutcome)) return;
    const agent = this.#touch(report.agentId);
    if (agent === undefined) return;
    let state = agent.maintenance;
    if (state === undefined) {
      state = {
        passes: 0,
        cheapOutcomes: fillRecord(PHASE_OUTCOME_KEYS, zero),
        repaired: 0,
        archived: 0,
        pruned: 0,
        heavyOutcomes: fillRecord(PHASE_OUTCOME_KEYS, zero),
        modelCalls: 0,
        inputTokens: 0,
        invalidOutputs: 0,
        conflicts: 0,
        denials: fillRecord(MAINTENANCE_STEP_KEYS, zero),
        steps: fillRecord(MAINTENANCE_STEP_KEYS, () => fillRecord(PHASE_OUTCOME_KEYS, zero)),
        duration: new BoundedNumberRing(this.#sampleCapacity),
      };
      agent.maintenance = state;
    }
    state.passes += 1;
    state.cheapOutcomes[cheapOutcome] += 1;
    state.repaired += this.#amount(report.cheap.repaired);
    state.archived += this.#amount(report.cheap.archived);
    state.pruned += this.#amount(report.cheap.pruned);
    state.heavyOutcomes[heavyOutcome] += 1;
    state.modelCalls += this.#amount(report.heavy.modelCalls);
    state.inputTokens += this.#amount(report.heavy.inputTokens);
    // Optional in the report: absent means none.
    const { invalidOutputs, conflicts } = report.heavy;
    if (invalidOutputs !== undefined) state.invalidOutputs += this.#amount(invalidOutputs);
    if (conflicts !== undefined) state.conflicts += this.#amount(conflicts);
    const denials = report.heavy.denials as Readonly<Record<string, unknown>> | undefined;
    const steps = report.heavy.steps as Readonly<Record<string, unknown>> | undefined;
    for (const step of MAINTENANCE_STEP_KEYS) {
      const denied = denials?.[step];
      if (denied !== undefined) state.denials[step] += this.#amount(denied);
      const stepOutcome = steps?.[step];
      if (stepOutcome !== undefined && this.#known(PHASE_OUTCOMES, stepOutcome)) {
        state.steps[step][stepOutcome as PhaseOutcome] += 1;
      }
    }
    this.#push(state.duration, report.durationMs);
  }

  // Process-wide gauges: absolute values, written whole or not at all.

  #recordExtractionQueue(gauge: { readonly depth: number; readonly oldestAgeMs: number }): void {
    const { depth, oldestAgeMs } = gauge;
    if (!isCount(depth) || !isCount(oldestAgeMs)) {
      this.#recordsRejected += 1;
      return;
    }
    const queue = this.#process.extractionQueue;
    queue.depth = depth;
    queue.oldestAgeMs = oldestAgeMs;
    queue.depthHighWater = Math.max(queue.depthHighWater ?? 0, depth);
    queue.updatedAt = this.#now();
  }

  #recordBacklog(gauge: { readonly total: number; readonly activeAgents: number }): void {
    const { total, activeAgents } = gauge;
    if (!isCount(total) || !isCount(activeAgents)) {
      this.#recordsRejected += 1;
      return;
    }
    const backlog = this.#process.embeddingBacklog;
    backlog.total = total;
    backlog.activeAgents = activeAgents;
    backlog.updatedAt = this.#now();
  }

  #recordVectorStores(gauge: { readonly openStores: number; readonly leases: number }): void {
    const { openStores, leases } = gauge;
    if (!isCount(openStores) || !isCount(leases)) {
      this.#recordsRejected += 1;
      return;
    }
    const stores = this.#process.vectorStores;
    stores.openStores = openStores;
    stores.leases = leases;
    stores.openStoresHighWater = Math.max(stores.openStoresHighWater ?? 0, openStores);
    stores.leasesHighWater = Math.max(stores.leasesHighWater ?? 0, leases);
    stores.updatedAt = this.#now();
  }

  #recordProviderQueue(gauge: {
    readonly kind: ProviderKind;
    readonly queued: number;
    readonly active: number;
  }): void {
    const { kind, queued, active } = gauge;
    if (!this.#known(PROVIDER_KINDS, kind)) return;
    if (!isCount(queued) || !isCount(active)) {
      this.#recordsRejected += 1;
      return;
    }
    const provider = this.#process.providers[kind];
    provider.queued = queued;
    provider.active = active;
    provider.queuedHighWater = Math.max(provider.queuedHighWater ?? 0, queued);
    provider.activeHighWater = Math.max(provider.activeHighWater ?? 0, active);
    provider.updatedAt = this.#now();
  }

  #countProvider(
    kind: unknown,
    field: 'admissions' | 'races',
    values: ReadonlySet<unknown>,
    value: unknown,
  ): void {
    if (!this.#known(PROVIDER_KINDS, kind) || !this.#known(values, value)) return;
    const counts = this.#process.providers[kind as ProviderKind][field] as Record<string, number>;
    counts[value as string] = (counts[value as string] ?? 0) + 1;
  }

  #recordCircuit(snapshot: CircuitSnapshot): void {
    const { state, failures, opened, halfOpenProbes, rejected } = snapshot;
    if (!this.#known(CIRCUIT_STATES, state)) return;
    if (!isCount(failures) || !isCount(opened) || !isCount(halfOpenProbes) || !isCount(rejected)) {
      this.#recordsRejected += 1;
      return;
    }
    const circuit = this.#process.queryEmbeddingCircuit;
    for (const key of CIRCUIT_STATE_KEYS) circuit.state[key] = key === state;
    circuit.failures = failures;
    circuit.opened = opened;
    circuit.halfOpenProbes = halfOpenProbes;
    circuit.rejected = rejected;
    circuit.reports += 1;
    circuit.updatedAt = this.#now();
  }

  // -------------------------------------------------------------------------------------------------------
  // Snapshot building (percentiles are computed here, never on the record path).

  #agentPart(states: readonly AgentState[]): AgentDiagnostics {
    if (states.length === 0) return createEmptyAgentDiagnostics();
    let firstSeenAt = Number.POSITIVE_INFINITY;
    let lastSeenAt = Number.NEGATIVE_INFINITY;
    for (const state of states) {
      firstSeenAt = Math.min(firstSeenAt, state.firstSeenAt);
      lastSeenAt = Math.max(lastSeenAt, state.lastSeenAt);
    }
    const extraction = states.map((s) => s.extraction);
    const embedding = states.map((s) => s.embedding);
    const maintenance = states.map((s) => s.maintenance);
    return {
      tracked: true,
      firstSeenAt,
      lastSeenAt,
      retrieval: fillRecord(RETRIEVAL_PURPOSE_KEYS, (purpose) => {
        const purposes = states.map((s) => s.retrieval[purpose]);
        return {
          operations: sumOf(purposes, (p) => p.operations),
          outcomes: sumBy(
            RETRIEVAL_OUTCOME_KEYS,
            purposes.map((p) => p?.outcomes),
          ),
          degradations: sumBy(
            DEGRADATION_CAUSE_KEYS,
            purposes.map((p) => p?.degradations),
          ),
          arms: sumBy(
            RETRIEVAL_ARM_KEYS,
            purposes.map((p) => p?.arms),
          ),
          latency: fillRecord(RETRIEVAL_STAGE_KEYS, (stage) =>
            summarize(...purposes.map((p) => p?.latency[stage])),
          ),
          candidates: fillRecord(CANDIDATE_KEYS, (arm) =>
            summarize(...purposes.map((p) => p?.candidates[arm])),
          ),
        };
      }),
      extraction: {
        chunks: sumOf(extraction, (e) => e.chunks),
        outcomes: sumBy(
          EXTRACTION_OUTCOME_KEYS,
          extraction.map((e) => e?.outcomes),
        ),
        decisions: sumBy(
          EXTRACTION_DECISION_KEYS,
          extraction.map((e) => e?.decisions),
        ),
        candidates: sumOf(extraction, (e) => e.candidates),
        invalidOutputs: sumOf(extraction, (e) => e.invalidOutputs),
        conflicts: sumOf(extraction, (e) => e.conflicts),
        duration: summarize(...extraction.map((e) => e?.duration)),
      },
      embedding: {
        batches: sumOf(embedding, (e) => e.batches),
        rows: sumOf(embedding, (e) => e.rows),
        transitions: sumBy(
          DRAIN_TRANSITION_KEYS,
          embedding.map((e) => e?.transitions),
        ),
        batchSize: summarize(...embedding.map((e) => e?.batchSize)),
        duration: summarize(...embedding.map((e) => e?.duration)),
      },
      maintenance: {
        passes: sumOf(maintenance, (m) => m.passes),
        cheap: {
          outcomes: sumBy(
            PHASE_OUTCOME_KEYS,
            maintenance.map((m) => m?.cheapOutcomes),
          ),
          repaired: sumOf(maintenance, (m) => m.repaired),
          archived: sumOf(maintenance, (m) => m.archived),
          pruned: sumOf(maintenance, (m) => m.pruned),
        },
        heavy: {
          outcomes: sumBy(
            PHASE_OUTCOME_KEYS,
            maintenance.map((m) => m?.heavyOutcomes),
          ),
          modelCalls: sumOf(maintenance, (m) => m.modelCalls),
          inputTokens: sumOf(maintenance, (m) => m.inputTokens),
          invalidOutputs: sumOf(maintenance, (m) => m.invalidOutputs),
          conflicts: sumOf(maintenance, (m) => m.conflicts),
          denials: sumBy(
            MAINTENANCE_STEP_KEYS,
            maintenance.map((m) => m?.denials),
          ),
          steps: fillRecord(MAINTENANCE_STEP_KEYS, (step) =>
            sumBy(
              PHASE_OUTCOME_KEYS,
              maintenance.map((m) => m?.steps[step]),
            ),
          ),
        },
        duration: summarize(...maintenance.map((m) => m?.duration)),
      },
    };
  }

  #processPart(): ProcessDiagnostics {
    const copy = structuredClone(this.#process);
    copy.collector = {
      agentsTracked: this.#agents.size,
      maxAgents: this.#maxAgents,
      agentTtlMs: this.#agentTtlMs,
      sampleCapacity: this.#sampleCapacity,
      agentsEvicted: this.#agentsEvicted,
      agentsExpired: this.#agentsExpired,
      recordsRejected: this.#recordsRejected,
      observerFailures: this.#observerFailures,
    };
    return copy;
  }
}

/** Creates a bounded in-memory diagnostics collector (64 agents, 24 h TTL, 256 samples per distribution by default). */
export function createDiagnosticsCollector(config: DiagnosticsCollectorConfig = {}): DiagnosticsCollector {
  return new MemoryDiagnosticsCollector(config);
}
