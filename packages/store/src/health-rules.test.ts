import { describe, expect, it } from 'vitest';
import { healthFailure, healthFromCounts } from './health-rules.js';

describe('health counts', () => {
  it('list every kind, lifecycle and state, zero when absent, and count the active facts', () => {
    const result = healthFromCounts(
      [
        { kind: 'fact', lifecycle: 'active', state: 'ready', n: '3' },
        { kind: 'fact', lifecycle: 'archived', state: 'pending', n: 1 },
        { kind: 'episode', lifecycle: 'active', state: 'pending', n: 2 },
      ],
      5,
      1,
      { state: 'ok', checkedAt: 10 },
    );
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.health.totals).toEqual({ memories: 6, events: 5, facts: 3, skills: 1 });
    expect(result.health.byKind.fact).toBe(4);
    expect(result.health.byKind.event).toBe(0);
    expect(result.health.byLifecycle.superseded).toBe(0);
    expect(result.health.byEmbeddingState.pending).toBe(3);
    expect(result.health.integrity).toEqual({ state: 'ok', checkedAt: 10 });
  });

  it('answer with the failed check when the store cannot be counted because of it', () => {
    expect(healthFailure('ENGRAM_STORE_CORRUPT', { state: 'failed', checkedAt: 3 })).toEqual({
      ok: false,
      code: 'ENGRAM_STORE_CORRUPT',
      integrity: { state: 'failed', checkedAt: 3 },
    });
    expect(healthFailure('ENGRAM_STORE_IO', { state: 'ok', checkedAt: 3 })).toEqual({
      ok: false,
      code: 'ENGRAM_STORE_IO',
    });
  });
});
