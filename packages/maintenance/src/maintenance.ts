import { randomUUID } from 'node:crypto';
import {
  backgroundTimers,
  type MaintenanceObserver,
  type MaintenancePassReport,
  type MaintenanceStep,
  MEMORY_KINDS,
  type ModelOutputSchema,
  noopMaintenanceObserver,
  type PhaseOutcome,
  type Timers,
} from '@engram/contracts';
import {
  createPassBudget,
  type PassBudget,
  type PassBudgetLimits,
  resolvePassBudgetLimits,
} from './budget.js';
import { type Clock, systemClock } from './clock.js';
import { DEFAULT_DECAY, type DecayConfig, decayAgeMs, decayScore, shouldArchiveByDecay } from './decay.js';
import type { EmbeddingDrain } from './drain.js';
import { checkIdArgument, EngramMaintenanceError } from './errors.js';
import { cas, createHeavySteps, type StepContext, StepFailed } from './heavy-steps.js';
import { type PassLease, takeLease } from './lease-keeper.js';
import type { InvalidModelOutput } from './model-output.js';
import type {
  MaintenancePassDetails,
  MaintenancePassOptions,
  MaintenancePassResult,
  PlannedArchive,
} from './pass-types.js';
import type { ModelPort } from './ports.js';
import { safeNotify } from './safe-observer.js';
import type { DecisionRetriever, MaintenanceStore } from './store-ports.js';
import { checkUserId, groupFilter, groupKey, writeScope } from './user-scope.js';

const HOUR = 60 * 60 * 1000;

/** Construction of a maintenance runner. */
export interface MaintenanceRunnerConfig {
  readonly store: MaintenanceStore;
  /** Needed by the `merge` step (neighbours); without it `merge` is skipped. */
  readonly retriever?: DecisionRetriever | null;
  /** Without a model the heavy phase is `skipped`. */
  readonly model?: ModelPort | null;
  /**
   * Embeds the rows the heavy phase wrote (merged rows, reflections, personas) before the pass ends, so they
   * are found by vector at once. Without it they stay `pending` until the next drain.
   */
  readonly drain?: Pick<EmbeddingDrain, 'run'> | null;
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
  /**
   * How long the agent's maintenance lease lasts (default {@link DEFAULT_MAINTENANCE_LEASE_MS}, 30 s), when the
   * store has one: a pass takes it first and skips the agent (`skipped: 'claimed'`) while another worker holds
   * it; it is released when the pass ends, and expires on its own one lease length after a process that died
   * last renewed it. While the pass runs it is renewed every third of its length (every 5 s at most), so a
   * pass may outlast it; if a renewal finds it taken (this process stalled past its expiry, or a forced pass
   * took it over), the pass stops as cancelled. A forced pass (`force`) takes over a lease another holds.
   */
  readonly leaseMs?: number;
  /** Timers of the lease renewal (default: unref'd system timers, which never keep a process alive). */
  readonly timers?: Timers;
}

/** The default maintenance lease: short, so a pass whose process died blocks the next one for 30 s at most. */
export const DEFAULT_MAINTENANCE_LEASE_MS = 30_000;

export type {
  MaintenancePassDetails,
  MaintenancePassOptions,
  MaintenancePassResult,
  PlannedArchive,
} from './pass-types.js';

/**
 * Maintenance passes: a cheap phase (integrity repair, archive by decay, prune orphaned index entries) and,
 * when a model is configured and the cool-down has elapsed, a heavy phase whose steps `challenge`, `merge`,
 * `reflection`, `persona` reserve every model call from one {@link PassBudget}. One pass per agent at a time:
 * a second call while one runs returns `{ skipped: 'busy' }`; across runners and processes, when the store
 * has a maintenance lease, a pass for an agent whose lease another worker holds returns `{ skipped: 'claimed' }`.
 * Cool-down state is kept in memory.
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

function isAborted(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true;
}

/** Invalid answers counted by schema name (the closed set of `MODEL_OUTPUT_SCHEMA_NAMES`). */
function countBySchema(invalid: readonly InvalidModelOutput[]): Partial<Record<ModelOutputSchema, number>> {
  const out: Partial<Record<ModelOutputSchema, number>> = {};
  for (const i of invalid) out[i.schema] = (out[i.schema] ?? 0) + 1;
  return out;
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
    ageFrom: config.decay?.ageFrom ?? DEFAULT_DECAY.ageFrom,
  };
  if (decay.ageFrom !== 'stored' && decay.ageFrom !== 'created') {
    throw new EngramMaintenanceError(
      'ENGRAM_MAINTENANCE_INVALID_CONFIG',
      'Invalid maintenance setting: decay.ageFrom.',
    );
  }
  const drain = config.drain ?? null;
  const decayKinds = MEMORY_KINDS.filter((k) => !(decay.exemptKinds ?? []).includes(k));
  const maxScan = nonNegative('maxScanPerPass', config.maxScanPerPass ?? 2000);
  const leaseMs = config.leaseMs ?? DEFAULT_MAINTENANCE_LEASE_MS;
  if (!(Number.isSafeInteger(leaseMs) && leaseMs >= 1 && leaseMs <= 24 * HOUR)) {
    throw new EngramMaintenanceError(
      'ENGRAM_MAINTENANCE_INVALID_CONFIG',
      'Invalid maintenance setting: leaseMs.',
    );
  }
  // The runner's name as a lease owner: two runners are two workers, even over one store instance.
  const leaseOwner = `maintenance-${randomUUID()}`;
  const timers = config.timers ?? backgroundTimers;

  const running = new Set<string>();
  // Per-agent state, bounded: the oldest entries are dropped past the cap (then that agent's gate is open).
  const MAX_TRACKED = 1024;
  const heavyState = new Map<string, HeavyState>();
  const scanCursor = new Map<string, string>();
  const reflectionWatermark = new Map<string, number>();
  const servedGroups = new Map<string, number>();
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
    user: string | null,
    signal: AbortSignal | undefined,
    counters: { conflicts: number },
    plan: PlannedArchive[] | null,
    archive: { archived: number; scanned: number; complete: boolean },
  ) {
    const dryRun = plan !== null;
    let repaired = 0;
    let archived = 0;
    let pruned = 0;
    // Integrity repair resets rows of every user: a pass for one user leaves it to the agent's passes.
    if (!dryRun && user === null && store.repairEmbeddingIntegrity !== undefined) {
      repaired = (await store.repairEmbeddingIntegrity(agentId)).repaired;
    }
    const now = clock.now();
    let scanned = 0;
    // A pass for one user scans that user's rows only, with a cursor of its own.
    const cursorKey = groupKey(agentId, user);
    const filter = groupFilter(user);
    const scope = writeScope(user);
    const startCursor = scanCursor.get(cursorKey);
    let afterId = startCursor;
    let wrapped = false;
    // The scan is complete once it has seen every row of the agent once: it reached the end of the rows
    // having started at the beginning, or wrapped around back to where it started.
    let complete = decayKinds.length === 0;
    scan: while (scanned < maxScan && decayKinds.length > 0) {
      if (signal?.aborted === true) throw new StepFailed('cancelled');
      const page = await store.listMemories(agentId, {
        kinds: decayKinds,
        lifecycles: ['active'],
        limit: Math.min(500, maxScan - scanned),
        ...(afterId === undefined ? {} : { afterId }),
        ...(filter === undefined ? {} : { filter }),
      });
      if (page.length === 0) {
        // End of the agent's rows: the next pass starts from the beginning.
        if (!dryRun) scanCursor.delete(cursorKey);
        if (startCursor === undefined || wrapped) {
          complete = true;
          break;
        }
        // Rows before the cursor are still unseen by this pass: wrap around once.
        afterId = undefined;
        wrapped = true;
        continue;
      }
      for (const row of page) {
        if (wrapped && startCursor !== undefined && row.id > startCursor) {
          complete = true;
          break scan;
        }
        // Checked per row too: a pass that lost its lease (or was cancelled) stops writing at once.
        if (isAborted(signal)) throw new StepFailed('cancelled');
        scanned += 1;
        afterId = row.id;
        if (!dryRun) remember(scanCursor, cursorKey, row.id);
        if (!shouldArchiveByDecay(now, row, decay)) continue;
        if (plan !== null) {
          const age = decayAgeMs(now, row, decay.ageFrom);
          plan.push({
            id: row.id,
            kind: row.kind,
            importance: row.importance,
            ageDays: Math.floor(age / (24 * HOUR)),
            score: decayScore(age, row.importance),
          });
          archived += 1;
        } else if (await cas({ counters }, () => store.archiveMemory(agentId, row.id, row.revision, scope))) {
          archived += 1;
        }
      }
    }
    archive.archived = archived;
    archive.scanned = scanned;
    archive.complete = complete;
    if (!dryRun && store.pruneOrphanedVectors !== undefined) {
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
    servedGroups,
    remember,
    similarityFloor: config.merge?.similarityFloor ?? 0.6,
    maxSources: config.merge?.maxSources ?? 20,
    reflectionThreshold: config.reflection?.importanceThreshold ?? 5,
    reviewThreshold: config.persona?.reviewThreshold ?? 0.5,
    maxOutputTokens: config.maxOutputTokens,
  });

  async function pass(
    agentId: string,
    options: MaintenancePassOptions,
  ): Promise<{ report: MaintenancePassReport; details: MaintenancePassDetails }> {
    const signal = options.signal;
    const dryRun = options.dryRun === true;
    const user = options.userId ?? null;
    const started = clock.now();
    const counters = { invalidOutputs: 0, conflicts: 0 };
    const plan: PlannedArchive[] | null = dryRun ? [] : null;
    const archive = { archived: 0, scanned: 0, complete: false };
    let cheapOutcome: PhaseOutcome = 'completed';
    let cheap = { repaired: 0, archived: 0, pruned: 0 };
    try {
      // Archive conflicts are benign (the row changed: it is fresh) and are not reported.
      cheap = await cheapPhase(agentId, user, signal, { conflicts: 0 }, plan, archive);
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
    const invalid: InvalidModelOutput[] = [];
    const written: string[] = [];
    let heavyOutcome: PhaseOutcome;
    // The cool-down is kept per scope: a pass for one user is gated by that user's last pass only.
    const gateKey = groupKey(agentId, user);
    const state = heavyState.get(gateKey);
    const now = clock.now();
    if (model === null || dryRun) {
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
      const ctx: StepContext = { agentId, passUser: user, model, budget, signal, counters, invalid, written };
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
        remember(heavyState, gateKey, { at: clock.now(), failed: heavyOutcome === 'failed' });
      }
    }
    const embedded = await embedWritten(agentId, written, signal);
    const spent = budget.snapshot();
    const report: MaintenancePassReport = {
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
        ...(invalid.length === 0 ? {} : { invalidBySchema: countBySchema(invalid) }),
      },
    };
    return {
      report,
      details: {
        dryRun,
        archive,
        plan: plan ?? [],
        written: { rows: written.length, ...embedded },
        invalidOutputs: invalid,
      },
    };
  }

  /** Embeds the rows the heavy phase wrote, in this pass; returns how many are embedded and still pending. */
  async function embedWritten(
    agentId: string,
    ids: readonly string[],
    signal: AbortSignal | undefined,
  ): Promise<{ embedded: number; pending: number }> {
    if (ids.length === 0) return { embedded: 0, pending: 0 };
    if (drain !== null && signal?.aborted !== true) {
      try {
        await drain.run({ agentId, ids, ...(signal === undefined ? {} : { signal }) });
      } catch {
        // the rows stay pending for the next drain; counted below
      }
    }
    let embedded = 0;
    let pending = 0;
    for (const id of ids) {
      const row = await store.getMemory(agentId, id);
      if (row === null) continue;
      if (row.embeddingState === 'ready') embedded += 1;
      else if (row.embeddingState === 'pending') pending += 1;
    }
    return { embedded, pending };
  }

  return {
    async run(agentId: string, options: MaintenancePassOptions = {}): Promise<MaintenancePassResult> {
      checkIdArgument(agentId, 'agentId');
      checkUserId(options.userId);
      if (running.has(agentId)) return { skipped: 'busy', report: null };
      running.add(agentId);
      let lease: PassLease | null = null;
      try {
        // A dry run writes nothing, so it needs no lease.
        if (options.dryRun !== true) {
          const taken = await takeLease(
            store,
            timers,
            agentId,
            { leaseMs, owner: leaseOwner },
            options.force === true,
          );
          if (taken === 'claimed') return { skipped: 'claimed', report: null };
          lease = taken;
        }
        const passOptions = lease === null ? options : { ...options, signal: lease.signal(options.signal) };
        const { report, details } = await pass(agentId, passOptions);
        if (!details.dryRun) safeNotify(() => observer.onMaintenancePass?.(report));
        return {
          skipped: null,
          report,
          details: lease?.tookOver === true ? { ...details, tookOverLease: true } : details,
        };
      } finally {
        // Released before the agent is free in the runner, so a next pass's lease is never dropped by this one.
        await lease?.release();
        running.delete(agentId);
      }
    },
  };
}
