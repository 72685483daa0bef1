/**
 * The heavy maintenance phase, one step per model task: challenge (settle a contradiction), merge (fold
 * near-duplicates into one row), reflection (higher-level insights) and persona (a reviewed summary). Each
 * step reserves its model call from the pass budget, validates the answer, and writes by compare-and-set.
 * The challenge step also settles the open contradiction links between facts.
 *
 * Users are boundaries: merge, reflection and persona work per user group (rows of one user, or the agent's
 * own rows without a user), so no step folds, summarises or describes one user's memories with another's, and
 * every row a step writes carries the user of its group. A pass for one user (`StepContext.passUser`) reads
 * and writes that user's group only.
 *
 * Over 400 lines on purpose: the steps share one closure (the budgeted, validated model call, the runner's
 * per-agent state and the order user groups are served in), which splitting would have to thread through
 * every step.
 */
import type { MaintenanceStep, PhaseOutcome } from '@engram/contracts';
import { normalizeContent } from '@engram/contracts';
import { engramErrorCode } from '@engram/contracts/errors';
import type { MemoryRecord } from '@engram/store';
import type { z } from 'zod';
import type { PassBudget, PassBudgetLimits } from './budget.js';
import type { Clock } from './clock.js';
import { isRevisionConflict } from './errors.js';
import { callModel, type ModelCallResult } from './model-call.js';
import {
  challengeOutputSchema,
  type InvalidModelOutput,
  MODEL_OUTPUT_SCHEMA_NAMES,
  type ModelOutputSchemaName,
  mergeOutputSchema,
  personaOutputSchema,
  reflectionOutputSchema,
} from './model-output.js';
import type { ModelMessage, ModelPort } from './ports.js';
import { mayMerge, textSimilarity } from './similarity.js';
import { type DecisionRetriever, type MaintenanceStore, trustedNeighbours } from './store-ports.js';
import { estimateMessagesTokens } from './tokens.js';
import {
  groupByUser,
  groupFilter,
  groupKey,
  inGroup,
  servingOrder,
  userField,
  writeScope,
} from './user-scope.js';

/** When a row last changed: its last edit once revised, else its creation (an import's write time is not a change). */
function changedAt(r: MemoryRecord): number {
  return r.revision > 1 ? r.updatedAt : r.createdAt;
}

/** Most rows one merge folds together (the source and its qualifying neighbours). */
const MERGE_GROUP_MAX = 5;

/** Tag that marks a persona draft needing review. */
export const REVIEW_NEEDED_TAG = 'review:needed';

/** What one heavy step runs with: the agent, the model, the pass budget, the caller's signal, counters. */
export interface StepContext {
  readonly agentId: string;
  /** The user a pass is for: only that user's memories are read and written (null: the whole agent). */
  readonly passUser: string | null;
  readonly model: ModelPort;
  readonly budget: PassBudget;
  readonly signal: AbortSignal | undefined;
  counters: { invalidOutputs: number; conflicts: number };
  /** Invalid answers of this pass: schema, field and issue (bounded; never content). */
  readonly invalid: InvalidModelOutput[];
  /** Ids of the rows this pass inserted (merged rows, reflections, personas), to embed before it ends. */
  readonly written: string[];
}

/** At most this many invalid answers are described in one pass result (all are counted). */
export const MAX_INVALID_DESCRIBED = 16;

/** Stops a step as `failed` or `cancelled` (a model failure, an invalid answer, an abort). */
export class StepFailed extends Error {
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

/** Runs a compare-and-set write; a real conflict is counted and skipped (the row changed: decide next pass). */
export async function cas(
  ctx: { counters: { conflicts: number } },
  write: () => Promise<unknown>,
): Promise<boolean> {
  try {
    await write();
    return true;
  } catch (error) {
    if (isRevisionConflict(error) || engramErrorCode(error) === 'ENGRAM_STORE_NOT_FOUND') {
      ctx.counters.conflicts += 1;
      return false;
    }
    throw error;
  }
}

/** What the heavy steps need from the runner: its store, retriever, clock, limits and per-agent state. */
export interface HeavyStepDeps {
  readonly store: MaintenanceStore;
  readonly retriever: DecisionRetriever | null;
  readonly clock: Clock;
  readonly limits: PassBudgetLimits;
  readonly similarityFloor: number;
  readonly maxSources: number;
  readonly reflectionThreshold: number;
  readonly reviewThreshold: number;
  readonly maxOutputTokens: number | undefined;
  /** Newest reflection time per agent and user group (`groupKey`), so a pass reflects only on what came after. */
  readonly reflectionWatermark: Map<string, number>;
  /** When (a serial) each step last served each user group, so a spent budget's left-out groups go first next. */
  readonly servedGroups: Map<string, number>;
  /** Records a per-agent value in a bounded map. */
  remember<V>(map: Map<string, V>, key: string, value: V): void;
}

/** One heavy step. */
export type HeavyStep = (ctx: StepContext) => Promise<PhaseOutcome>;

/** The heavy steps, in the order a pass runs them. */
export function createHeavySteps(deps: HeavyStepDeps): readonly (readonly [MaintenanceStep, HeavyStep])[] {
  const {
    store,
    retriever,
    clock,
    limits,
    similarityFloor,
    maxSources,
    reflectionThreshold,
    reviewThreshold,
    maxOutputTokens,
    reflectionWatermark,
    servedGroups,
    remember,
  } = deps;
  let serial = 0;

  const servedKey = (ctx: StepContext, step: MaintenanceStep, user: string | null): string =>
    `${step}\u0001${groupKey(ctx.agentId, user)}`;
  /** The groups in the order this step serves them (least recently served first). */
  function order(
    ctx: StepContext,
    step: MaintenanceStep,
    groups: Iterable<string | null>,
  ): (string | null)[] {
    return servingOrder([...groups], (u) => servedGroups.get(servedKey(ctx, step, u)));
  }
  function served(ctx: StepContext, step: MaintenanceStep, user: string | null): void {
    serial += 1;
    remember(servedGroups, servedKey(ctx, step, user), serial);
  }
  /** The listing filter of a pass: a pass for one user lists that user's rows only. */
  const passFilter = (ctx: StepContext) => groupFilter(ctx.passUser);

  /** Reserves the call, asks the model, validates. Returns null when the budget denied it. */
  async function ask<T>(
    ctx: StepContext,
    step: MaintenanceStep,
    schema: z.ZodType<T>,
    name: ModelOutputSchemaName,
    messages: readonly ModelMessage[],
  ): Promise<T | null> {
    if (ctx.signal?.aborted === true) throw new StepFailed('cancelled');
    if (!ctx.budget.reserve(step, { calls: 1, tokens: estimateMessagesTokens(messages) })) return null;
    const answer: ModelCallResult<T> = await callModel(ctx.model, schema, name, messages, {
      signal: ctx.signal,
      maxOutputTokens,
    });
    if (answer.ok) return answer.value;
    if (answer.reason === 'invalid') {
      ctx.counters.invalidOutputs += 1;
      if (ctx.invalid.length < MAX_INVALID_DESCRIBED) {
        ctx.invalid.push({ schema: name, path: answer.path, issue: answer.issue });
      }
    }
    throw new StepFailed(answer.reason === 'aborted' ? 'cancelled' : 'failed');
  }

  /**
   * Settles the open contradiction links between facts (linked when a fact contradicting a current one was
   * remembered): the model says which holds; the other is superseded by it (closed now, kept in its history),
   * or both stay current. A link whose side is no longer current is dismissed without a model call. A link
   * is settled only within one user (both sides that still exist of the same user, and of the pass's user in
   * a pass for one user); any other is left open. Returns `exhausted` when the budget ran out, `none` when no
   * link of the pass's scope was open.
   */
  async function settleLinks(ctx: StepContext): Promise<'none' | 'settled' | 'exhausted'> {
    const { listConflicts, resolveConflict } = store;
    if (listConflicts === undefined || resolveConflict === undefined) return 'none';
    const links = await listConflicts.call(store, ctx.agentId, {
      state: 'open',
      // A pass for one user filters the links by their rows' user: it reads more to still find its own.
      limit: ctx.passUser === null ? Math.max(1, limits.stepCalls.challenge * 2) : 100,
    });
    let handled = false;
    for (const link of links) {
      const [older, newer] = await Promise.all([
        store.getMemory(ctx.agentId, link.olderId),
        store.getMemory(ctx.agentId, link.newerId),
      ]);
      const users = new Set([older, newer].filter((r) => r !== null).map((r) => r.userId ?? null));
      // Never across users, and a pass for one user settles that user's links only.
      if (users.size > 1) continue;
      const user = users.size === 1 ? ([...users][0] ?? null) : null;
      if (ctx.passUser !== null && (users.size === 0 || user !== ctx.passUser)) continue;
      handled = true;
      const settle = (resolution: Parameters<typeof resolveConflict>[3]) =>
        cas(ctx, () =>
          resolveConflict.call(store, ctx.agentId, link.olderId, link.newerId, {
            ...resolution,
            actor: 'maintenance',
          }),
        );
      if (older?.lifecycle !== 'active' || newer?.lifecycle !== 'active') {
        await settle({ outcome: 'dismiss', reason: 'no longer current' });
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
              'Two facts an agent remembered say different things about the same subject. Return JSON {"verdict"}: "keepExisting" when the older (existing) one is still right, "keepChallenger" when the newer challenger replaces it, "keepBoth" when both can be true.',
          },
          { role: 'user', content: JSON.stringify({ existing: older.content, challenger: newer.content }) },
        ],
      );
      if (verdict === null) return 'exhausted';
      if (verdict.verdict === 'keepBoth') await settle({ outcome: 'dismiss', reason: 'both hold' });
      else {
        const keepId = verdict.verdict === 'keepChallenger' ? newer.id : older.id;
        await settle({ outcome: 'supersede', keepId, reason: 'contradiction resolved' });
      }
    }
    return handled ? 'settled' : 'none';
  }

  async function challengeStep(ctx: StepContext): Promise<PhaseOutcome> {
    const conflicted = await store.listMemories(ctx.agentId, {
      lifecycles: ['conflicted'],
      limit: Math.max(1, limits.stepCalls.challenge * 2),
      ...(ctx.passUser === null ? {} : { filter: { userId: ctx.passUser } }),
    });
    const links = await settleLinks(ctx);
    if (links === 'exhausted') return 'completed';
    if (conflicted.length === 0) return links === 'none' ? 'skipped' : 'completed';
    for (const existing of conflicted) {
      const user = existing.userId ?? null;
      // The challenger is of the same user as the row it contradicts; writes are scoped to that user.
      const scope = writeScope(user);
      const challengers = await store.listMemories(ctx.agentId, {
        lifecycles: ['active'],
        tags: [`challenges:${existing.id}`],
        limit: 10,
        ...(user === null ? {} : { filter: { userId: user } }),
      });
      const challenger = challengers.find((r) => inGroup(r, user));
      if (challenger === undefined) {
        // Nothing contradicts it any more: restore it without a model call.
        await cas(ctx, () =>
          store.setLifecycle(ctx.agentId, existing.id, existing.revision, 'active', scope),
        );
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
      const restore = () => store.setLifecycle(ctx.agentId, existing.id, existing.revision, 'active', scope);
      if (verdict.verdict === 'keepExisting') {
        if (await cas(ctx, restore)) {
          await cas(ctx, () => store.archiveMemory(ctx.agentId, challenger.id, challenger.revision, scope));
        }
      } else if (verdict.verdict === 'keepChallenger') {
        await cas(ctx, () => store.archiveMemory(ctx.agentId, existing.id, existing.revision, scope));
      } else {
        await cas(ctx, restore);
      }
    }
    return 'completed';
  }

  async function mergeStep(ctx: StepContext): Promise<PhaseOutcome> {
    if (retriever === null) return 'skipped';
    const filter = passFilter(ctx);
    const pool = await store.listMemories(ctx.agentId, {
      kinds: ['fact', 'semantic', 'episodic'],
      lifecycles: ['active'],
      limit: 1000,
      ...(filter === undefined ? {} : { filter }),
    });
    const sources = [...pool]
      .sort((a, b) => changedAt(b) - changedAt(a) || (a.id < b.id ? -1 : 1))
      .slice(0, maxSources);
    const used = new Set<string>();
    let asked = false;
    for (const source of sources) {
      if (used.has(source.id)) continue;
      if (ctx.signal?.aborted === true) throw new StepFailed('cancelled');
      // Only rows of the source's own user group fold with it (the agent's own rows with agent-own rows).
      const user = source.userId ?? null;
      const hits = await trustedNeighbours(retriever, ctx.agentId, source.content, {
        limit: user === null ? 10 : 5,
        kinds: [source.kind],
        filter: groupFilter(user),
        signal: ctx.signal,
      });
      // Every neighbour that qualifies joins the group: three near-duplicates fold into one row at once.
      const others = hits
        .map((h) => h.record)
        .filter(
          (r) =>
            r.id !== source.id &&
            !used.has(r.id) &&
            r.agentId === ctx.agentId &&
            inGroup(r, user) &&
            r.kind === source.kind &&
            r.lifecycle === 'active' &&
            textSimilarity(r.content, source.content) >= similarityFloor &&
            mayMerge(r.content, source.content),
        )
        .filter((r, i, all) => all.findIndex((o) => o.id === r.id) === i)
        .slice(0, MERGE_GROUP_MAX - 1);
      if (others.length === 0) continue;
      const group = [source, ...others];
      for (const r of group) used.add(r.id);
      asked = true;
      // The rows as `{ a, b, c … }`: a pair reads `{ a, b }`.
      const shown: Record<string, string> = {};
      group.forEach((r, i) => {
        shown[String.fromCharCode(97 + i)] = r.content;
      });
      const verdict = await ask(ctx, 'merge', mergeOutputSchema, MODEL_OUTPUT_SCHEMA_NAMES.merge, [
        {
          role: 'system',
          content:
            'Some memories of an agent look alike. Return JSON {"merge","content"}: merge true with one sentence that keeps every detail of all of them when they say the same thing; merge false (content null) otherwise.',
        },
        { role: 'user', content: JSON.stringify(shown) },
      ]);
      if (verdict === null) break;
      if (!verdict.merge || verdict.content === null) continue;
      const merged = verdict.content;
      // One transaction: the merged row is inserted and every source is superseded by it (lineage on each),
      // compare-and-set on each source; if any changed meanwhile nothing is written (decided next pass).
      await cas(ctx, async () => {
        const result = await store.mergeMemories(
          ctx.agentId,
          group.map((r) => ({ id: r.id, expectedRevision: r.revision })),
          {
            agentId: ctx.agentId,
            kind: source.kind,
            content: merged,
            importance: Math.max(...group.map((r) => r.importance)),
            confidence: Math.min(...group.map((r) => r.confidence)),
            tags: ['source:merge'],
            ...userField(user),
          },
          writeScope(user),
        );
        ctx.written.push(result.merged.id);
      });
    }
    return asked ? 'completed' : 'skipped';
  }

  /** Importance-ordered rows (ties by id). */
  const byImportance = (rows: readonly MemoryRecord[]): MemoryRecord[] =>
    [...rows].sort((a, b) => b.importance - a.importance || (a.id < b.id ? -1 : 1));

  /**
   * Reflects per user group: a group whose memories created since its own watermark (its newest reflection,
   * or the last time it reflected) weigh enough is asked about, with its own memories only; the reflections
   * carry the group's user. Groups are served in turn within the step's budget.
   */
  async function reflectionStep(ctx: StepContext): Promise<PhaseOutcome> {
    const filter = passFilter(ctx);
    const scoped = filter === undefined ? {} : { filter };
    const reflections = groupByUser(
      await store.listMemories(ctx.agentId, { kinds: ['reflection'], limit: 1000, ...scoped }),
    );
    const rows = groupByUser(
      await store.listMemories(ctx.agentId, {
        kinds: ['fact', 'semantic', 'episodic'],
        lifecycles: ['active'],
        limit: 2000,
        ...scoped,
      }),
    );
    const due = new Map<string | null, MemoryRecord[]>();
    for (const [user, list] of rows) {
      let watermark = reflectionWatermark.get(groupKey(ctx.agentId, user)) ?? 0;
      for (const r of reflections.get(user) ?? []) watermark = Math.max(watermark, r.createdAt);
      const recent = list.filter((r) => r.createdAt > watermark);
      let sum = 0;
      for (const r of recent) sum += r.importance;
      if (sum >= reflectionThreshold && recent.length > 0) due.set(user, recent);
    }
    if (due.size === 0) return 'skipped';
    for (const user of order(ctx, 'reflection', due.keys())) {
      const top = byImportance(due.get(user) ?? []).slice(0, 40);
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
      if (answer === null) break;
      served(ctx, 'reflection', user);
      const now = clock.now();
      for (const r of answer.reflections) {
        const row = await store.insertMemory({
          agentId: ctx.agentId,
          kind: 'reflection',
          content: r.content,
          importance: r.importance,
          tags: ['source:reflection'],
          createdAt: now,
          ...userField(user),
        });
        ctx.written.push(row.id);
      }
      remember(reflectionWatermark, groupKey(ctx.agentId, user), now);
    }
    return 'completed';
  }

  /**
   * A persona per user group: the agent's own from its own facts; a user's from that user's facts, with the
   * agent's own facts as context after them. The persona rows carry the group's user. Groups are served in
   * turn within the step's budget.
   */
  async function personaStep(ctx: StepContext): Promise<PhaseOutcome> {
    // A pass for one user reads that user's rows and the agent's own (the context), never another user's.
    const visible = ctx.passUser === null ? {} : { filter: { forUser: ctx.passUser } };
    const facts = groupByUser(
      await store.listMemories(ctx.agentId, {
        kinds: ['fact'],
        lifecycles: ['active'],
        limit: 1000,
        ...visible,
      }),
    );
    const groups = [...facts.keys()].filter((u) => ctx.passUser === null || u === ctx.passUser);
    if (groups.length === 0) return 'skipped';
    const personas = await store.listMemories(ctx.agentId, {
      kinds: ['persona'],
      lifecycles: ['active'],
      limit: ctx.passUser === null ? 1000 : 100,
      ...visible,
    });
    const shared = byImportance(facts.get(null) ?? []);
    for (const user of order(ctx, 'persona', groups)) {
      const own = byImportance(user === null ? [] : (facts.get(user) ?? []));
      const top = [...own, ...shared].slice(0, 60);
      const mine = personas.filter((p) => inGroup(p, user));
      if (!(await personaFor(ctx, user, top, mine))) break;
      served(ctx, 'persona', user);
    }
    return 'completed';
  }

  /** Asks for one group's persona and writes it (scoped to the group's user); false when the budget denied it. */
  async function personaFor(
    ctx: StepContext,
    user: string | null,
    top: readonly MemoryRecord[],
    personas: readonly MemoryRecord[],
  ): Promise<boolean> {
    const current = newest(personas.filter((p) => !p.tags.includes(REVIEW_NEEDED_TAG)));
    const draft = newest(personas.filter((p) => p.tags.includes(REVIEW_NEEDED_TAG)));
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
    if (answer === null) return false;
    const next = answer.persona;
    const scope = writeScope(user);
    // An answer that says what is already stored (the approved persona, or the draft awaiting review) writes
    // nothing: the step is `completed` (the model was asked), so repeated passes never pile up rows.
    if (current !== undefined && samePersona(current.content, next)) return true;
    if (draft !== undefined && samePersona(draft.content, next)) return true;
    const change = current === undefined ? 1 : 1 - textSimilarity(current.content, next);
    if (current !== undefined && change <= reviewThreshold) {
      await cas(ctx, async () => {
        const { replacement } = await store.supersedeMemory(
          ctx.agentId,
          current.id,
          current.revision,
          {
            agentId: ctx.agentId,
            kind: 'persona',
            content: next,
            importance: current.importance,
            tags: ['source:persona'],
            ...userField(user),
          },
          scope,
        );
        ctx.written.push(replacement.id);
      });
      return true;
    }
    // Too big a change (or a first persona): a draft that needs review; an older draft is replaced.
    const row = {
      agentId: ctx.agentId,
      kind: 'persona' as const,
      content: next,
      importance: 0.5,
      tags: ['source:persona', REVIEW_NEEDED_TAG],
      ...userField(user),
    };
    if (draft === undefined) ctx.written.push((await store.insertMemory(row)).id);
    else
      await cas(ctx, async () => {
        ctx.written.push(
          (await store.supersedeMemory(ctx.agentId, draft.id, draft.revision, row, scope)).replacement.id,
        );
      });
    return true;
  }

  return [
    ['challenge', challengeStep],
    ['merge', mergeStep],
    ['reflection', reflectionStep],
    ['persona', personaStep],
  ];
}
