import {
  type MaintenanceObserver,
  type MaintenancePassReport,
  type MaintenanceStep,
  MEMORY_KINDS,
  noopMaintenanceObserver,
  type PhaseOutcome,
} from '@engram/contracts';
import {
  createPassBudget,
  type PassBudget,
  type PassBudgetLimits,
  resolvePassBudgetLimits,
} from './budget.js';
import { type Clock, systemClock } from './clock.js';
import { DEFAULT_DECAY, type DecayConfig, shouldArchiveByDecay } from './decay.js';
import { checkIdArgument, EngramMaintenanceError } from './errors.js';
import { cas, createHeavySteps, type StepContext, StepFailed } from './heavy-steps.js';
import type { ModelPort } from './ports.js';
import { safeNotify } from './safe-observer.js';
import type { DecisionRetriever, MaintenanceStore } from './store-ports.js';

const HOUR = 60 * 60 * 1000;

/** Construction of a maintenance runner. */
export interface MaintenanceRunnerConfig {
  readonly store: MaintenanceStore;
  /** Needed by the `merge` step (neighbours); without it `merge` is skipped. */
  readonly retriever?: DecisionRetriever | null;
  /** Without a model the heavy phase is `skipped`. */
  readonly model?: ModelPort | null;
  readonly observer?: MaintenanceObserver;
  readonly clock?: Clock;
  /** Partial limits over {@link DEFAULT_PASS_BUDGET}: one budget per pass. */
  readonly budget?: {
    readonly stepCalls?: Partial<Readonly<Record<MaintenanceStep, number>>>;
    readonly totalCalls?: number;
    readonly inputTokens?: number;
  };
  /** The heavy phase runs again only this long after its last run (default 6 h). */
  readonly heavyCooldownMs?: number;
  /** …or this long after a failed heavy phase (default 15 min; sooner than the normal cool-down). */
  readonly failureCooldownMs?: number;
  /** Decay archiving (defaults: floor 0.05, minimum age 14 days, `fact`/`persona`/`skill` exempt). */
  readonly decay?: Partial<DecayConfig>;
  /** Rows the cheap phase scans for decay per pass (default 2,000); the scan resumes where it stopped. */
  readonly maxScanPerPass?: number;
  readonly merge?: {
    /** Token-set similarity at or above which two same-kind memories are merge candidates (default 0.6). */
    readonly similarityFloor?: number;
    /** Recent memories considered as merge sources per pass (default 20). */
    readonly maxSources?: number;
  };
  readonly reflection?: {
    /** Summed importance of memories created since the last reflection needed to reflect (default 5). */
    readonly importanceThreshold?: number;
  };
  readonly persona?: {
    /**
     * A persona that changes by more than this (1 − token similarity) becomes a draft tagged `review:needed`
     * (default 0.5). An answer equal to the approved persona or to the pending draft writes nothing (step `completed`).
     */
    readonly reviewThreshold?: number;
  };
  readonly maxOutputTokens?: number;
}

/** Options of one pass. */
export interface MaintenancePassOptions {
  readonly signal?: AbortSignal;
  /** Run the heavy phase even inside its cool-down. */
  readonly force?: boolean;
}

/** The answer of one pass: its report, or `busy` when a pass for the agent was already running (nothing done). */
export type MaintenancePassResult =
  | { readonly skipped: 'busy'; readonly report: null }
  | { readonly skipped: null; readonly report: MaintenancePassReport };

/**
 * Maintenance passes: a cheap phase (integrity repair, archive by decay, prune orphaned index entries) and,
 * when a model is configured and the cool-down has elapsed, a heavy phase whose steps `challenge`, `merge`,
 * `reflection`, `persona` reserve every model call from one {@link PassBudget}. One pass per agent at a time:
 * a second call while one runs returns `{ skipped: 'busy' }`. Cool-down state is kept in memory.
 */
export interface MaintenanceRunner {
  run(agentId: string, options?: MaintenancePassOptions): Promise<MaintenancePassResult>;
}

interface HeavyState {
  at: number;
  failed: boolean;
}

function nonNegative(name: string, value: number): number {
  if (!(Number.isFinite(value) && value >= 0)) {
    throw new EngramMaintenanceError(
      'ENGRAM_MAINTENANCE_INVALID_CONFIG',
      `Invalid maintenance setting: ${name}.`,
    );
  }
  return value;
}

/** Creates a maintenance runner. */
export function createMaintenanceRunner(config: MaintenanceRunnerConfig): MaintenanceRunner {
  const store = config.store;
  const retriever = config.retriever ?? null;
  const model = config.model ?? null;
  const observer = config.observer ?? noopMaintenanceObserver;
  const clock = config.clock ?? systemClock;
  const limits: PassBudgetLimits = resolvePassBudgetLimits(config.budget);
  const heavyCooldownMs = nonNegative('heavyCooldownMs', config.heavyCooldownMs ?? 6 * HOUR);
  const failureCooldownMs = nonNegative('failureCooldownMs', config.failureCooldownMs ?? HOUR / 4);
  const decay: DecayConfig = {
    floor: nonNegative('decay.floor', config.decay?.floor ?? DEFAULT_DECAY.floor),
    minAgeMs: nonNegative('decay.minAgeMs', config.decay?.minAgeMs ?? DEFAULT_DECAY.minAgeMs),
    exemptKinds: config.decay?.exemptKinds ?? DEFAULT_DECAY.exemptKinds,
  };
  const decayKinds = MEMORY_KINDS.filter((k) => !(decay.exemptKinds ?? []).includes(k));
  const maxScan = nonNegative('maxScanPerPass', config.maxScanPerPass ?? 2000);

  const running = new Set<string>();
  // Per-agent state, bounded: the oldest entries are dropped past the cap (then that agent's gate is open).
  const MAX_TRACKED = 1024;
  const heavyState = new Map<string, HeavyState>();
  const scanCursor = new Map<string, string>();
  const reflectionWatermark = new Map<string, number>();
  function remember<V>(map: Map<string, V>, key: string, value: V): void {
    map.delete(key);
    map.set(key, value);
    if (map.size > MAX_TRACKED) {
      const first = map.keys().next();
      if (first.done !== true) map.delete(first.value);
    }
  }

  async function cheapPhase(
    agentId: string,
    signal: AbortSignal | undefined,
    counters: { conflicts: number },
  ) {
    let repaired = 0;
    let archived = 0;
    let pruned = 0;
    if (store.repairEmbeddingIntegrity !== undefined) {
      repaired = (await store.repairEmbeddingIntegrity(agentId)).repaired;
    }
    const now = clock.now();
    let scanned = 0;
    let afterId = scanCursor.get(agentId);
    let wrapped = false;
    while (scanned < maxScan && decayKinds.length > 0) {
      if (signal?.aborted === true) throw new StepFailed('cancelled');
      const page = await store.listMemories(agentId, {
        kinds: decayKinds,
        lifecycles: ['active'],
        limit: Math.min(500, maxScan - scanned),
        ...(afterId === undefined ? {} : { afterId }),
      });
      if (page.length === 0) {
        // End of the agent's rows: next pass starts from the beginning.
        scanCursor.delete(agentId);
        if (afterId === undefined || wrapped) break;
        afterId = undefined;
        wrapped = true;
        continue;
      }
      for (const row of page) {
        if (shouldArchiveByDecay(now, row, decay)) {
          if (await cas({ counters }, () => store.archiveMemory(agentId, row.id, row.revision)))
            archived += 1;
        }
      }
      scanned += page.length;
      afterId = page[page.length - 1]?.id;
      if (afterId !== undefined) remember(scanCursor, agentId, afterId);
    }
    if (store.pruneOrphanedVectors !== undefined) {
      pruned = (await store.pruneOrphanedVectors(agentId)).pruned;
    }
    return { repaired, archived, pruned };
  }

  const STEPS = createHeavySteps({
    store,
    retriever,
    clock,
    limits,
    reflectionWatermark,
    remember,
    similarityFloor: config.merge?.similarityFloor ?? 0.6,
    maxSources: config.merge?.maxSources ?? 20,
    reflectionThreshold: config.reflection?.importanceThreshold ?? 5,
    reviewThreshold: config.persona?.reviewThreshold ?? 0.5,
    maxOutputTokens: config.maxOutputTokens,
  });

  async function pass(agentId: string, options: MaintenancePassOptions): Promise<MaintenancePassReport> {
    const signal = options.signal;
    const started = clock.now();
    const counters = { invalidOutputs: 0, conflicts: 0 };
    let cheapOutcome: PhaseOutcome = 'completed';
    let cheap = { repaired: 0, archived: 0, pruned: 0 };
    try {
      // Archive conflicts are benign (the row changed: it is fresh) and are not reported.
      cheap = await cheapPhase(agentId, signal, { conflicts: 0 });
    } catch (error) {
      cheapOutcome = error instanceof StepFailed || signal?.aborted === true ? 'cancelled' : 'failed';
    }
    const budget = createPassBudget(limits);
    const steps: Record<MaintenanceStep, PhaseOutcome> = {
      challenge: 'skipped',
      merge: 'skipped',
      reflection: 'skipped',
      persona: 'skipped',
    };
    let heavyOutcome: PhaseOutcome;
    const state = heavyState.get(agentId);
    const now = clock.now();
    if (model === null) {
      heavyOutcome = 'skipped';
    } else if (cheapOutcome === 'cancelled' || signal?.aborted === true) {
      heavyOutcome = 'cancelled';
    } else if (
      options.force !== true &&
      state !== undefined &&
      now - state.at < (state.failed ? failureCooldownMs : heavyCooldownMs)
    ) {
      heavyOutcome = 'gated';
    } else {
      heavyOutcome = 'completed';
      const ctx: StepContext = { agentId, model, budget, signal, counters };
      const aborted = (): boolean => signal?.aborted === true;
      for (const [step, runStep] of STEPS) {
        if (aborted()) {
          steps[step] = 'cancelled';
          heavyOutcome = 'cancelled';
          continue;
        }
        try {
          steps[step] = await runStep(ctx);
        } catch (error) {
          steps[step] = error instanceof StepFailed ? error.outcome : 'failed';
          if (steps[step] === 'cancelled') heavyOutcome = 'cancelled';
          else if (heavyOutcome !== 'cancelled') heavyOutcome = 'failed';
        }
      }
      // A cancelled heavy phase does not move the gate: the next pass may run it.
      if (heavyOutcome !== 'cancelled') {
        remember(heavyState, agentId, { at: clock.now(), failed: heavyOutcome === 'failed' });
      }
    }
    const spent = budget.snapshot();
    return {
      agentId,
      durationMs: Math.max(0, clock.now() - started),
      cheap: { outcome: cheapOutcome, ...cheap },
      heavy: {
        outcome: heavyOutcome,
        modelCalls: spent.calls,
        inputTokens: spent.tokens,
        denials: spent.denials,
        steps,
        invalidOutputs: counters.invalidOutputs,
        conflicts: counters.conflicts,
      },
    };
  }

  return {
    async run(agentId: string, options: MaintenancePassOptions = {}): Promise<MaintenancePassResult> {
      checkIdArgument(agentId, 'agentId');
      if (running.has(agentId)) return { skipped: 'busy', report: null };
      running.add(agentId);
      try {
        const report = await pass(agentId, options);
        safeNotify(() => observer.onMaintenancePass?.(report));
        return { skipped: null, report };
      } finally {
        running.delete(agentId);
      }
    },
  };
}
