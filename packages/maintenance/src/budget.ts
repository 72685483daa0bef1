import { MAINTENANCE_STEPS, type MaintenanceStep } from '@engram/contracts';

/** Limits of one heavy-phase budget: model calls per step, total calls and estimated input tokens. */
export interface PassBudgetLimits {
  /** Maximum model calls per step. */
  readonly stepCalls: Readonly<Record<MaintenanceStep, number>>;
  /** Maximum model calls of the whole pass. */
  readonly totalCalls: number;
  /** Maximum estimated input tokens of the whole pass (see `estimateTokens`). */
  readonly inputTokens: number;
}

/** The default budget: challenge 4, merge 2, reflection 1, persona 1 (total 8) model calls and 24,000 input tokens. */
export const DEFAULT_PASS_BUDGET: PassBudgetLimits = Object.freeze({
  stepCalls: Object.freeze({ challenge: 4, merge: 2, reflection: 1, persona: 1 }),
  totalCalls: 8,
  inputTokens: 24_000,
});

/** What a step asks for before a model call. */
export interface BudgetRequest {
  readonly calls: number;
  readonly tokens: number;
}

/** Figures of a budget so far. */
export interface PassBudgetSnapshot {
  readonly calls: number;
  readonly tokens: number;
  readonly callsByStep: Readonly<Record<MaintenanceStep, number>>;
  readonly tokensByStep: Readonly<Record<MaintenanceStep, number>>;
  /** Denied reservations per step. */
  readonly denials: Readonly<Record<MaintenanceStep, number>>;
}

/**
 * One budget per maintenance pass: each model call is reserved first; a reservation is all-or-nothing and
 * is denied (and counted for its step) when it would exceed the step's calls, the total calls or the tokens.
 */
export interface PassBudget {
  readonly limits: PassBudgetLimits;
  /** Reserves `calls` model calls and `tokens` estimated input tokens for `step`; false (counted) when denied. */
  reserve(step: MaintenanceStep, request: BudgetRequest): boolean;
  snapshot(): PassBudgetSnapshot;
}

function zeroSteps(): Record<MaintenanceStep, number> {
  return { challenge: 0, merge: 0, reflection: 0, persona: 0 };
}

function checkLimit(name: string, value: number): void {
  if (!Number.isInteger(value) || value < 0)
    throw new RangeError(`pass budget: ${name} must be a non-negative integer`);
}

/** Merges partial limits over the defaults. */
export function resolvePassBudgetLimits(
  limits: {
    readonly stepCalls?: Partial<Readonly<Record<MaintenanceStep, number>>>;
    readonly totalCalls?: number;
    readonly inputTokens?: number;
  } = {},
): PassBudgetLimits {
  const stepCalls = { ...DEFAULT_PASS_BUDGET.stepCalls, ...limits.stepCalls };
  const resolved: PassBudgetLimits = {
    stepCalls,
    totalCalls: limits.totalCalls ?? DEFAULT_PASS_BUDGET.totalCalls,
    inputTokens: limits.inputTokens ?? DEFAULT_PASS_BUDGET.inputTokens,
  };
  for (const step of MAINTENANCE_STEPS) checkLimit(`stepCalls.${step}`, resolved.stepCalls[step]);
  checkLimit('totalCalls', resolved.totalCalls);
  checkLimit('inputTokens', resolved.inputTokens);
  return resolved;
}

/** Creates the budget of one pass (defaults: {@link DEFAULT_PASS_BUDGET}). */
export function createPassBudget(limits: PassBudgetLimits = DEFAULT_PASS_BUDGET): PassBudget {
  const frozen = resolvePassBudgetLimits(limits);
  const callsByStep = zeroSteps();
  const tokensByStep = zeroSteps();
  const denials = zeroSteps();
  let calls = 0;
  let tokens = 0;
  return {
    limits: frozen,
    reserve(step: MaintenanceStep, request: BudgetRequest): boolean {
      const c = Math.max(0, Math.ceil(request.calls));
      const t = Math.max(0, Math.ceil(request.tokens));
      if (!Number.isFinite(c) || !Number.isFinite(t)) {
        denials[step] += 1;
        return false;
      }
      const fits =
        callsByStep[step] + c <= frozen.stepCalls[step] &&
        calls + c <= frozen.totalCalls &&
        tokens + t <= frozen.inputTokens;
      if (!fits) {
        denials[step] += 1;
        return false;
      }
      callsByStep[step] += c;
      tokensByStep[step] += t;
      calls += c;
      tokens += t;
      return true;
    },
    snapshot(): PassBudgetSnapshot {
      return {
        calls,
        tokens,
        callsByStep: { ...callsByStep },
        tokensByStep: { ...tokensByStep },
        denials: { ...denials },
      };
    },
  };
}
