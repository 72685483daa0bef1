import {
  type MaintenanceObserver,
  type MaintenancePassReport,
  type MaintenanceStep,
  MEMORY_KINDS,
  noopMaintenanceObserver,
  normalizeContent,
  type PhaseOutcome,
} from '@engram/contracts';
import type { MemoryRecord } from '@engram/store';
import type { z } from 'zod';
import {
  createPassBudget,
  type PassBudget,
  type PassBudgetLimits,
  resolvePassBudgetLimits,
} from './budget.js';
import { type Clock, systemClock } from './clock.js';
import { DEFAULT_DECAY, type DecayConfig, shouldArchiveByDecay } from './decay.js';
import { checkIdArgument, EngramMaintenanceError, errorCodeOf, isRevisionConflict } from './errors.js';
import { callModel, type ModelCallResult } from './model-call.js';
import {
  challengeOutputSchema,
  MODEL_OUTPUT_SCHEMA_NAMES,
  mergeOutputSchema,
  personaOutputSchema,
  reflectionOutputSchema,
} from './model-output.js';
import type { ModelMessage, ModelPort } from './ports.js';
import { safeNotify } from './safe-observer.js';
import { mayMerge, textSimilarity } from './similarity.js';
import { type DecisionRetriever, type MaintenanceStore, trustedNeighbours } from './store-ports.js';
import { estimateMessagesTokens } from './tokens.js';

const HOUR = 60 * 60 * 1000;

/** Tag that marks a persona draft needing review. */
export const REVIEW_NEEDED_TAG = 'review:needed';

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

interface StepContext {
  readonly agentId: string;
  readonly model: ModelPort;
  readonly budget: PassBudget;
  readonly signal: AbortSignal | undefined;
  counters: { invalidOutputs: number; conflicts: number };
}

class StepFailed extends Error {
  constructor(readonly outcome: 'failed' | 'cancelled') {
    super('maintenance step stopped');
  }
}

function newest(rows: readonly MemoryRecord[]): MemoryRecord | undefined {
  let best: MemoryRecord | undefined;
  for (const r of rows)
    if (
      best === undefined ||
      r.updatedAt > best.updatedAt ||
      (r.updatedAt === best.updatedAt && r.id > best.id)
    )
      best = r;
  return best;
}

/**
 * Whether two persona texts say the same thing: equal after the store's hash normalisation (NFKC, case,
 * whitespace), or the same token set (punctuation and word order aside).
 */
function samePersona(a: string, b: string): boolean {
  return normalizeContent(a) === normalizeContent(b) || textSimilarity(a, b) === 1;
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
  const similarityFloor = config.merge?.similarityFloor ?? 0.6;
  const maxSources = config.merge?.maxSources ?? 20;
  const reflectionThreshold = config.reflection?.importanceThreshold ?? 5;
  const reviewThreshold = config.persona?.reviewThreshold ?? 0.5;
  const maxOutputTokens = config.maxOutputTokens;

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

  /** Reserves the call, asks the model, validates. Returns null when the budget denied it. */
  async function ask<T>(
    ctx: StepContext,
    step: MaintenanceStep,
    schema: z.ZodType<T>,
    name: string,
    messages: readonly ModelMessage[],
  ): Promise<T | null> {
    if (ctx.signal?.aborted === true) throw new StepFailed('cancelled');
    if (!ctx.budget.reserve(step, { calls: 1, tokens: estimateMessagesTokens(messages) })) return null;
    const answer: ModelCallResult<T> = await callModel(ctx.model, schema, name, messages, {
      signal: ctx.signal,
      maxOutputTokens,
    });
    if (answer.ok) return answer.value;
    if (answer.reason === 'invalid') ctx.counters.invalidOutputs += 1;
    throw new StepFailed(answer.reason === 'aborted' ? 'cancelled' : 'failed');
  }

  /** Runs a compare-and-set write; a real conflict is counted and skipped (the row changed: decide next pass). */
  async function cas(
    ctx: { counters: { conflicts: number } },
    write: () => Promise<unknown>,
  ): Promise<boolean> {
    try {
      await write();
      return true;
    } catch (error) {
      if (isRevisionConflict(error) || errorCodeOf(error) === 'ENGRAM_STORE_NOT_FOUND') {
        ctx.counters.conflicts += 1;
        return false;
      }
      throw error;
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

  async function challengeStep(ctx: StepContext): Promise<PhaseOutcome> {
    const conflicted = await store.listMemories(ctx.agentId, {
      lifecycles: ['conflicted'],
      limit: Math.max(1, limits.stepCalls.challenge * 2),
    });
    if (conflicted.length === 0) return 'skipped';
    for (const existing of conflicted) {
      const challengers = await store.listMemories(ctx.agentId, {
        lifecycles: ['active'],
        tags: [`challenges:${existing.id}`],
        limit: 1,
      });
      const challenger = challengers[0];
      if (challenger === undefined) {
        // Nothing contradicts it any more: restore it without a model call.
        await cas(ctx, () => store.setLifecycle(ctx.agentId, existing.id, existing.revision, 'active'));
        continue;
      }
      const verdict = await ask(
        ctx,
        'challenge',
        challengeOutputSchema,
        MODEL_OUTPUT_SCHEMA_NAMES.challenge,
        [
          {
            role: 'system',
            content:
              'Two memories of an agent contradict each other. Return JSON {"verdict"}: "keepExisting" when the existing one is right, "keepChallenger" when the newer challenger is right, "keepBoth" when both can be true.',
          },
          {
            role: 'user',
            content: JSON.stringify({ existing: existing.content, challenger: challenger.content }),
          },
        ],
      );
      if (verdict === null) break;
      if (verdict.verdict === 'keepExisting') {
        if (await cas(ctx, () => store.setLifecycle(ctx.agentId, existing.id, existing.revision, 'active'))) {
          await cas(ctx, () => store.archiveMemory(ctx.agentId, challenger.id, challenger.revision));
        }
      } else if (verdict.verdict === 'keepChallenger') {
        await cas(ctx, () => store.archiveMemory(ctx.agentId, existing.id, existing.revision));
      } else {
        await cas(ctx, () => store.setLifecycle(ctx.agentId, existing.id, existing.revision, 'active'));
      }
    }
    return 'completed';
  }

  async function mergeStep(ctx: StepContext): Promise<PhaseOutcome> {
    if (retriever === null) return 'skipped';
    const pool = await store.listMemories(ctx.agentId, {
      kinds: ['fact', 'semantic', 'episodic'],
      lifecycles: ['active'],
      limit: 1000,
    });
    const sources = [...pool]
      .sort((a, b) => b.updatedAt - a.updatedAt || (a.id < b.id ? -1 : 1))
      .slice(0, maxSources);
    const used = new Set<string>();
    let asked = false;
    for (const source of sources) {
      if (used.has(source.id)) continue;
      if (ctx.signal?.aborted === true) throw new StepFailed('cancelled');
      const hits = await trustedNeighbours(retriever, ctx.agentId, source.content, {
        limit: 5,
        kinds: [source.kind],
        signal: ctx.signal,
      });
      const other = hits
        .map((h) => h.record)
        .find(
          (r) =>
            r.id !== source.id &&
            !used.has(r.id) &&
            r.agentId === ctx.agentId &&
            r.kind === source.kind &&
            r.lifecycle === 'active' &&
            textSimilarity(r.content, source.content) >= similarityFloor &&
            mayMerge(r.content, source.content),
        );
      if (other === undefined) continue;
      used.add(source.id);
      used.add(other.id);
      asked = true;
      const verdict = await ask(ctx, 'merge', mergeOutputSchema, MODEL_OUTPUT_SCHEMA_NAMES.merge, [
        {
          role: 'system',
          content:
            'Two memories of an agent look alike. Return JSON {"merge","content"}: merge true with one sentence that keeps every detail of both when they say the same thing; merge false (content null) otherwise.',
        },
        { role: 'user', content: JSON.stringify({ a: source.content, b: other.content }) },
      ]);
      if (verdict === null) break;
      if (!verdict.merge || verdict.content === null) continue;
      const merged = verdict.content;
      // Supersede the first (one compare-and-set transaction), then retire the second; a conflict on the
      // second leaves it active (its text is in the merged row too, so nothing is lost).
      const first = await cas(ctx, () =>
        store.supersedeMemory(ctx.agentId, source.id, source.revision, {
          agentId: ctx.agentId,
          kind: source.kind,
          content: merged,
          importance: Math.max(source.importance, other.importance),
          confidence: Math.min(source.confidence, other.confidence),
          tags: ['source:merge'],
        }),
      );
      if (first)
        await cas(ctx, () => store.setLifecycle(ctx.agentId, other.id, other.revision, 'superseded'));
    }
    return asked ? 'completed' : 'skipped';
  }

  async function reflectionStep(ctx: StepContext): Promise<PhaseOutcome> {
    const reflections = await store.listMemories(ctx.agentId, { kinds: ['reflection'], limit: 1000 });
    let watermark = reflectionWatermark.get(ctx.agentId) ?? 0;
    for (const r of reflections) watermark = Math.max(watermark, r.createdAt);
    const recent = (
      await store.listMemories(ctx.agentId, {
        kinds: ['fact', 'semantic', 'episodic'],
        lifecycles: ['active'],
        limit: 2000,
      })
    ).filter((r) => r.createdAt > watermark);
    let sum = 0;
    for (const r of recent) sum += r.importance;
    if (sum < reflectionThreshold || recent.length === 0) return 'skipped';
    const top = [...recent]
      .sort((a, b) => b.importance - a.importance || (a.id < b.id ? -1 : 1))
      .slice(0, 40);
    const answer = await ask(
      ctx,
      'reflection',
      reflectionOutputSchema,
      MODEL_OUTPUT_SCHEMA_NAMES.reflection,
      [
        {
          role: 'system',
          content:
            'Reflect on an agent\'s recent memories. Return JSON {"reflections":[{"content","importance"}]} with at most 3 higher-level insights, each one self-contained sentence.',
        },
        { role: 'user', content: JSON.stringify(top.map((r) => r.content)) },
      ],
    );
    if (answer === null) return 'completed';
    const now = clock.now();
    for (const r of answer.reflections) {
      await store.insertMemory({
        agentId: ctx.agentId,
        kind: 'reflection',
        content: r.content,
        importance: r.importance,
        tags: ['source:reflection'],
        createdAt: now,
      });
    }
    remember(reflectionWatermark, ctx.agentId, now);
    return 'completed';
  }

  async function personaStep(ctx: StepContext): Promise<PhaseOutcome> {
    const facts = await store.listMemories(ctx.agentId, {
      kinds: ['fact'],
      lifecycles: ['active'],
      limit: 1000,
    });
    if (facts.length === 0) return 'skipped';
    const personas = await store.listMemories(ctx.agentId, {
      kinds: ['persona'],
      lifecycles: ['active'],
      limit: 100,
    });
    const current = newest(personas.filter((p) => !p.tags.includes(REVIEW_NEEDED_TAG)));
    const draft = newest(personas.filter((p) => p.tags.includes(REVIEW_NEEDED_TAG)));
    const top = [...facts].sort((a, b) => b.importance - a.importance || (a.id < b.id ? -1 : 1)).slice(0, 60);
    const answer = await ask(ctx, 'persona', personaOutputSchema, MODEL_OUTPUT_SCHEMA_NAMES.persona, [
      {
        role: 'system',
        content:
          'Write a short persona of the user and the working context an agent serves, from its facts. Return JSON {"persona"}. Keep what the current persona says unless a fact contradicts it.',
      },
      {
        role: 'user',
        content: JSON.stringify({ current: current?.content ?? null, facts: top.map((f) => f.content) }),
      },
    ]);
    if (answer === null) return 'completed';
    const next = answer.persona;
    // An answer that says what is already stored (the approved persona, or the draft awaiting review) writes
    // nothing: the step is `completed` (the model was asked), so repeated passes never pile up rows.
    if (current !== undefined && samePersona(current.content, next)) return 'completed';
    if (draft !== undefined && samePersona(draft.content, next)) return 'completed';
    const change = current === undefined ? 1 : 1 - textSimilarity(current.content, next);
    if (current !== undefined && change <= reviewThreshold) {
      await cas(ctx, () =>
        store.supersedeMemory(ctx.agentId, current.id, current.revision, {
          agentId: ctx.agentId,
          kind: 'persona',
          content: next,
          importance: current.importance,
          tags: ['source:persona'],
        }),
      );
      return 'completed';
    }
    // Too big a change (or a first persona): a draft that needs review; an older draft is replaced.
    const row = {
      agentId: ctx.agentId,
      kind: 'persona' as const,
      content: next,
      importance: 0.5,
      tags: ['source:persona', REVIEW_NEEDED_TAG],
    };
    if (draft === undefined) await store.insertMemory(row);
    else await cas(ctx, () => store.supersedeMemory(ctx.agentId, draft.id, draft.revision, row));
    return 'completed';
  }

  const STEPS: readonly [MaintenanceStep, (ctx: StepContext) => Promise<PhaseOutcome>][] = [
    ['challenge', challengeStep],
    ['merge', mergeStep],
    ['reflection', reflectionStep],
    ['persona', personaStep],
  ];

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
