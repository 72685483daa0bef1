/**
 * Observer ports of background memory work (DESIGN.md, "Maintenance"): reports hold numbers, booleans,
 * timestamps and closed enums only. Observers are called synchronously and must not throw; producers
 * isolate them anyway. Every port has a no-op default.
 */

/** Terminal outcomes of one extraction chunk. */
export const EXTRACTION_OUTCOMES = ['completed', 'cancelled', 'failed', 'skipped'] as const;
/** An extraction outcome. */
export type ExtractionOutcome = (typeof EXTRACTION_OUTCOMES)[number];

/** Decisions the extraction model may take for a candidate memory. */
export const EXTRACTION_DECISIONS = ['ADD', 'UPDATE', 'SUPERSEDE', 'NOOP', 'CHALLENGE'] as const;
/** An extraction decision. */
export type ExtractionDecision = (typeof EXTRACTION_DECISIONS)[number];

/** Steps of the heavy maintenance phase, each reserving from one budget per pass. */
export const MAINTENANCE_STEPS = ['challenge', 'merge', 'reflection', 'persona'] as const;
/** A heavy-phase step. */
export type MaintenanceStep = (typeof MAINTENANCE_STEPS)[number];

/** Outcomes of a maintenance phase. `gated`: the heavy phase's cool-down had not elapsed. */
export const PHASE_OUTCOMES = ['completed', 'skipped', 'gated', 'failed', 'cancelled'] as const;
/** A phase outcome. */
export type PhaseOutcome = (typeof PHASE_OUTCOMES)[number];

/** Provider admission decisions of the gateway. */
export const ADMISSION_DECISIONS = ['admitted', 'rateLimited', 'capacityRejected'] as const;
/** An admission decision. */
export type AdmissionDecision = (typeof ADMISSION_DECISIONS)[number];

/** Races the gateway settles: a deadline fired, the caller aborted, or the provider answered after either. */
export const PROVIDER_RACES = ['deadline', 'aborted', 'lateSettled'] as const;
/** A provider race event. */
export type ProviderRace = (typeof PROVIDER_RACES)[number];

/** The provider kinds the gateway fronts. */
export const PROVIDER_KINDS = ['embedding', 'model'] as const;
/** A provider kind. */
export type ProviderKind = (typeof PROVIDER_KINDS)[number];

/**
 * One drained batch of one agent. A batch of an all-agents run that holds rows of several agents is
 * reported once per agent (its rows, its transitions); `agentId` is always a real agent id.
 */
export interface DrainBatchReport {
  readonly agentId: string;
  readonly batchSize: number;
  readonly durationMs: number;
  readonly transitions: {
    readonly ready: number;
    readonly error: number;
    readonly ftsOnly: number;
    readonly stale: number;
  };
}

/** One extraction chunk. */
export interface ExtractionReport {
  readonly agentId: string;
  readonly outcome: ExtractionOutcome;
  readonly durationMs: number;
  readonly candidates: number;
  readonly decisions: Readonly<Record<ExtractionDecision, number>>;
  /** Model outputs rejected by validation (counted, never half-applied). */
  readonly invalidOutputs: number;
  /** Re-decisions after a real compare-and-set conflict. */
  readonly conflicts: number;
}

/** One maintenance pass of one agent. */
export interface MaintenancePassReport {
  readonly agentId: string;
  readonly durationMs: number;
  readonly cheap: {
    readonly outcome: PhaseOutcome;
    readonly repaired: number;
    readonly archived: number;
    readonly pruned: number;
  };
  readonly heavy: {
    readonly outcome: PhaseOutcome;
    readonly modelCalls: number;
    readonly inputTokens: number;
    /** Denied budget reservations per step. */
    readonly denials: Readonly<Record<MaintenanceStep, number>>;
    readonly steps: Readonly<Record<MaintenanceStep, PhaseOutcome>>;
    /** Model answers rejected by validation in this pass. */
    readonly invalidOutputs?: number;
    /** Compare-and-set conflicts met by heavy steps (the write was skipped, never retried blindly). */
    readonly conflicts?: number;
  };
}

/** Observer port of the drain, ingestion, extraction and maintenance passes. */
export interface MaintenanceObserver {
  onDrainBatch?(report: DrainBatchReport): void;
  /** Absolute backlog gauge, read from the store's counts after each drain run. */
  onEmbeddingBacklog?(gauge: { readonly total: number; readonly activeAgents: number }): void;
  onExtraction?(report: ExtractionReport): void;
  /** Absolute gauge of the process-wide extraction queue. */
  onExtractionQueue?(gauge: { readonly depth: number; readonly oldestAgeMs: number }): void;
  onMaintenancePass?(report: MaintenancePassReport): void;
}

/** Observer port of the provider gateway (process-wide figures). */
export interface ProviderObserver {
  /** Absolute gauge: requests waiting for a slot. */
  onQueue?(gauge: { readonly kind: ProviderKind; readonly queued: number; readonly active: number }): void;
  onAdmission?(kind: ProviderKind, decision: AdmissionDecision): void;
  onRace?(kind: ProviderKind, race: ProviderRace): void;
}

/** The no-op maintenance observer. */
export const noopMaintenanceObserver: MaintenanceObserver = Object.freeze({});
/** The no-op provider observer. */
export const noopProviderObserver: ProviderObserver = Object.freeze({});
