import type { CircuitSnapshot } from '@engram/contracts';
import { describe, expect, it } from 'vitest';
import { createCircuitBreaker } from './circuit.js';

function setup(threshold = 3, cooldownMs = 1000) {
  let now = 0;
  const transitions: CircuitSnapshot[] = [];
  const breaker = createCircuitBreaker({
    failureThreshold: threshold,
    cooldownMs,
    now: () => now,
    onTransition: (s) => transitions.push(s),
  });
  return {
    breaker,
    transitions,
    advance: (ms: number) => {
      now += ms;
    },
  };
}

describe('createCircuitBreaker', () => {
  it('opens after N consecutive failures and rejects during the cool-down', () => {
    const { breaker, transitions, advance } = setup(3, 1000);
    breaker.acquire()?.failure();
    breaker.acquire()?.failure();
    expect(breaker.snapshot().state).toBe('closed');
    breaker.acquire()?.failure();
    expect(breaker.snapshot()).toEqual({
      state: 'open',
      failures: 3,
      opened: 1,
      halfOpenProbes: 0,
      rejected: 0,
    });
    expect(transitions.map((t) => t.state)).toEqual(['open']);
    expect(breaker.acquire()).toBeNull();
    advance(999);
    expect(breaker.acquire()).toBeNull();
    expect(breaker.snapshot().rejected).toBe(2);
  });

  it('needs consecutive failures: a success resets the streak', () => {
    const { breaker } = setup(3);
    breaker.acquire()?.failure();
    breaker.acquire()?.failure();
    breaker.acquire()?.success();
    breaker.acquire()?.failure();
    breaker.acquire()?.failure();
    expect(breaker.snapshot().state).toBe('closed');
    expect(breaker.snapshot().failures).toBe(4);
  });

  it('lets exactly one half-open probe through after the cool-down; a failed probe re-opens', () => {
    const { breaker, transitions, advance } = setup(1, 1000);
    breaker.acquire()?.failure();
    advance(1000);
    const probe = breaker.acquire();
    expect(probe?.probe).toBe(true);
    expect(breaker.snapshot().state).toBe('halfOpen');
    expect(breaker.acquire()).toBeNull();
    probe?.failure();
    expect(breaker.snapshot().state).toBe('open');
    expect(breaker.acquire()).toBeNull();
    advance(1000);
    const second = breaker.acquire();
    second?.success();
    expect(breaker.snapshot()).toEqual({
      state: 'closed',
      failures: 2,
      opened: 2,
      halfOpenProbes: 2,
      rejected: 2,
    });
    expect(transitions.map((t) => t.state)).toEqual(['open', 'halfOpen', 'open', 'halfOpen', 'closed']);
    expect(breaker.acquire()?.probe).toBe(false);
  });

  it('frees the probe slot without a verdict when the probe is released (cancelled)', () => {
    const { breaker, advance } = setup(1, 10);
    breaker.acquire()?.failure();
    advance(10);
    breaker.acquire()?.release();
    expect(breaker.snapshot().state).toBe('halfOpen');
    const again = breaker.acquire();
    expect(again?.probe).toBe(true);
    again?.success();
    expect(breaker.snapshot().state).toBe('closed');
  });

  it('ignores a second verdict on the same permit and stragglers admitted while closed', () => {
    const { breaker } = setup(1, 10);
    const straggler = breaker.acquire();
    const permit = breaker.acquire();
    permit?.failure();
    permit?.failure();
    expect(breaker.snapshot()).toMatchObject({ state: 'open', failures: 1, opened: 1 });
    straggler?.success();
    expect(breaker.snapshot().state).toBe('open');
  });

  it('isolates a throwing transition observer', () => {
    const breaker = createCircuitBreaker({
      failureThreshold: 1,
      onTransition: () => {
        throw new Error('observer down');
      },
    });
    expect(() => breaker.acquire()?.failure()).not.toThrow();
    expect(breaker.snapshot().state).toBe('open');
  });
});
