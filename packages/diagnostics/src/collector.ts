/**
 * The in-memory diagnostics collector: bounded per-agent state, process-wide gauges, and the observer ports
 * the producers call. The recorders live one module per port (`record-*.ts`) over a shared
 * {@link CollectorState}; `snapshot.ts` assembles the DTO.
 */

import type { ProviderKind } from '@engram/contracts/enums';
import {
  DEFAULT_AGENT_TTL_MS,
  DEFAULT_MAX_AGENTS,
  DEFAULT_SAMPLE_CAPACITY,
  type DiagnosticsSnapshot,
  type DiagnosticsSnapshotAll,
} from '@engram/contracts/health';
import type {
  CircuitSnapshot,
  DrainBatchReport,
  EmbeddingBacklogReport,
  ExtractionQueueReport,
  ExtractionReport,
  MaintenanceObserver,
  MaintenancePassReport,
  ProviderObserver,
  ProviderQueueReport,
  RetrievalExecution,
  RetrievalObserver,
  StoreObserver,
  VectorStoreGauge,
} from '@engram/contracts/observers';
import { isValidAgentId, MAX_AGENT_ID_LENGTH } from '@engram/contracts/rules';
import { EngramDiagnosticsError } from './errors.js';
import {
  recordBacklog,
  recordDrainBatch,
  recordExtraction,
  recordExtractionQueue,
  recordMaintenancePass,
} from './record-maintenance.js';
import { recordAdmission, recordProviderQueue, recordRace } from './record-provider.js';
import { recordCircuit, recordRetrieval } from './record-retrieval.js';
import { recordStatement, recordVectorStores, recordVectorWarmup } from './record-store.js';
import { buildSnapshot, buildSnapshotAll } from './snapshot.js';
import { CollectorState } from './state.js';

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
  readonly #state: CollectorState;

  /** Validates and freezes the configuration; throws `ENGRAM_DIAGNOSTICS_INVALID_CONFIG` for a bad option. */
  constructor(config: DiagnosticsCollectorConfig = {}) {
    if (config.now !== undefined && typeof config.now !== 'function') {
      throw new EngramDiagnosticsError('ENGRAM_DIAGNOSTICS_INVALID_CONFIG', 'now must be a function');
    }
    const state = new CollectorState({
      maxAgents: positiveInteger(config.maxAgents, DEFAULT_MAX_AGENTS, 'maxAgents'),
      agentTtlMs: positiveInteger(config.agentTtlMs, DEFAULT_AGENT_TTL_MS, 'agentTtlMs'),
      sampleCapacity: positiveInteger(config.sampleCapacity, DEFAULT_SAMPLE_CAPACITY, 'sampleCapacity'),
      clock: config.now ?? Date.now,
    });
    this.#state = state;
    // Isolation: a diagnostics failure is counted, never surfaced to the producer.
    // One- and two-argument wrappers: a rest parameter would allocate an array on every record.
    const guard =
      <A>(record: (a: A) => void): ((a: A) => void) =>
      (a: A): void => {
        try {
          record(a);
        } catch {
          state.observerFailures += 1;
        }
      };
    const guard2 =
      <A, B>(record: (a: A, b: B) => void): ((a: A, b: B) => void) =>
      (a: A, b: B): void => {
        try {
          record(a, b);
        } catch {
          state.observerFailures += 1;
        }
      };
    this.retrievalObserver = Object.freeze({
      onRetrieval: guard((execution: RetrievalExecution) => recordRetrieval(state, execution)),
      onCircuitState: guard((snapshot: CircuitSnapshot) => recordCircuit(state, snapshot)),
    });
    this.maintenanceObserver = Object.freeze({
      onDrainBatch: guard((report: DrainBatchReport) => recordDrainBatch(state, report)),
      onEmbeddingBacklog: guard((gauge: EmbeddingBacklogReport) => recordBacklog(state, gauge)),
      onExtraction: guard((report: ExtractionReport) => recordExtraction(state, report)),
      onExtractionQueue: guard((gauge: ExtractionQueueReport) => recordExtractionQueue(state, gauge)),
      onMaintenancePass: guard((report: MaintenancePassReport) => recordMaintenancePass(state, report)),
    });
    this.providerObserver = Object.freeze({
      onQueue: guard((gauge: ProviderQueueReport) => recordProviderQueue(state, gauge)),
      onAdmission: guard2((kind: ProviderKind, decision: unknown) => recordAdmission(state, kind, decision)),
      onRace: guard2((kind: ProviderKind, race: unknown) => recordRace(state, kind, race)),
    });
    this.storeObserver = Object.freeze({
      onStatement: guard((kind: unknown) => recordStatement(state, kind)),
      onVectorStores: guard((gauge: VectorStoreGauge) => recordVectorStores(state, gauge)),
      onVectorWarmup: guard((outcome: unknown) => recordVectorWarmup(state, outcome)),
    });
  }

  /** See {@link DiagnosticsCollector.snapshot}; throws for an agent id the agent-id rule refuses. */
  snapshot(agentId?: string): DiagnosticsSnapshot {
    if (agentId !== undefined && !isValidAgentId(agentId)) {
      throw new EngramDiagnosticsError(
        'ENGRAM_DIAGNOSTICS_INVALID_ARGUMENT',
        `agentId must be a non-empty string of at most ${MAX_AGENT_ID_LENGTH} characters, without control characters or lone surrogates`,
      );
    }
    return buildSnapshot(this.#state, agentId);
  }

  /** See {@link DiagnosticsCollector.snapshotAll}. */
  snapshotAll(): DiagnosticsSnapshotAll {
    return buildSnapshotAll(this.#state);
  }

  /** See {@link DiagnosticsCollector.listAgents}. */
  listAgents(): readonly string[] {
    this.#state.sweep(this.#state.now());
    return this.#state
      .byRecency()
      .reverse()
      .map(([agentId]) => agentId);
  }

  /** See {@link DiagnosticsCollector.cleanup}. */
  cleanup(): number {
    return this.#state.sweep(this.#state.now());
  }
}

/** Creates a bounded in-memory diagnostics collector (64 agents, 24 h TTL, 256 samples per distribution by default). */
export function createDiagnosticsCollector(config: DiagnosticsCollectorConfig = {}): DiagnosticsCollector {
  return new MemoryDiagnosticsCollector(config);
}
