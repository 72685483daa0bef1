import type { CircuitState } from '@engram/contracts/enums';
import type { CircuitSnapshot } from '@engram/contracts/observers';

/** Configuration of the query-embedding circuit breaker. */
export interface CircuitBreakerConfig {
  /** Consecutive failures that open the circuit (integer ≥ 1, default 5). */
  readonly failureThreshold?: number;
  /** How long the circuit stays open before one half-open probe is let through (ms ≥ 0, default 30,000). */
  readonly cooldownMs?: number;
  /** Clock in epoch ms (default `Date.now`). */
  readonly now?: () => number;
  /** Called on every state transition with the new snapshot; isolated (an exception is swallowed). */
  readonly onTransition?: (snapshot: CircuitSnapshot) => void;
}

/** A permit to call the embedder; settle it exactly once with `success`, `failure` or `release`. */
export interface CircuitPermit {
  /** True when this call is the half-open probe. */
  readonly probe: boolean;
  /** The call succeeded: a probe closes the circuit, and the failure streak resets. */
  success(): void;
  /** The call failed (error or deadline): counts towards opening; a failed probe re-opens. */
  failure(): void;
  /** The call ended without a verdict (cancelled by the caller): a probe slot is freed, nothing counted. */
  release(): void;
}

/** A `closed` → `open` → `halfOpen` circuit breaker with an injected clock. */
export interface CircuitBreaker {
  /** A permit, or `null` when the circuit rejects the call (open and cooling down, or a probe in flight). */
  acquire(): CircuitPermit | null;
  /** Current state and lifetime counters. */
  snapshot(): CircuitSnapshot;
}

/** Default consecutive failures before the circuit opens. */
export const DEFAULT_FAILURE_THRESHOLD = 5;
/** Default cool-down of an open circuit, in ms. */
export const DEFAULT_COOLDOWN_MS = 30_000;

/**
 * Creates a circuit breaker: `failureThreshold` consecutive failures open it; after `cooldownMs` the next
 * call becomes the single `halfOpen` probe (concurrent calls are rejected meanwhile); the probe's success
 * closes the circuit, its failure re-opens it for another cool-down. Every transition is reported.
 */
export function createCircuitBreaker(config: CircuitBreakerConfig = {}): CircuitBreaker {
  const threshold = config.failureThreshold ?? DEFAULT_FAILURE_THRESHOLD;
  const cooldownMs = config.cooldownMs ?? DEFAULT_COOLDOWN_MS;
  const now = config.now ?? Date.now;
  const onTransition = config.onTransition;
  let state: CircuitState = 'closed';
  let streak = 0;
  let openedAt = 0;
  let probeInFlight = false;
  let failures = 0;
  let opened = 0;
  let halfOpenProbes = 0;
  let rejected = 0;

  const snapshot = (): CircuitSnapshot => ({ state, failures, opened, halfOpenProbes, rejected });
  const transition = (next: CircuitState): void => {
    state = next;
    if (next === 'open') {
      opened += 1;
      openedAt = now();
    }
    if (onTransition === undefined) return;
    try {
      onTransition(snapshot());
    } catch {
      // An observer failure must never change the breaker or a result.
    }
  };

  const permit = (probe: boolean): CircuitPermit => {
    let settled = false;
    const settle = (verdict: 'success' | 'failure' | 'release'): void => {
      if (settled) return;
      settled = true;
      if (probe) probeInFlight = false;
      if (verdict === 'release') return;
      if (verdict === 'success') {
        streak = 0;
        if (probe && state === 'halfOpen') transition('closed');
        return;
      }
      failures += 1;
      streak += 1;
      // A straggler that was admitted while closed cannot move an open or half-open circuit.
      if (probe ? state === 'halfOpen' : state === 'closed' && streak >= threshold) transition('open');
    };
    return {
      probe,
      success: () => settle('success'),
      failure: () => settle('failure'),
      release: () => settle('release'),
    };
  };

  return {
    acquire(): CircuitPermit | null {
      if (state === 'closed') return permit(false);
      if (state === 'open' && now() - openedAt >= cooldownMs) transition('halfOpen');
      if (state === 'halfOpen' && !probeInFlight) {
        probeInFlight = true;
        halfOpenProbes += 1;
        return permit(true);
      }
      rejected += 1;
      return null;
    },
    snapshot,
  };
}
