import type { StatementKind, VectorWarmupOutcome } from '@engram/contracts';
import { describe, expect, it } from 'vitest';
import { AdapterContext, notifyObserver } from './adapter-context.js';

class Ctx extends AdapterContext {}

describe('the adapter context', () => {
  it('counts statements for the observer, even when handed on as a callback', () => {
    const kinds: StatementKind[] = [];
    const ctx = new Ctx({
      observer: { onStatement: (k) => kinds.push(k) },
      now: () => 1,
      idFactory: () => 'id',
      limits: { maxContentLength: 10 },
    });
    const count = ctx.count;
    count('read');
    ctx.count('write');
    expect(kinds).toEqual(['read', 'write']);
  });

  it('reports the warm-up once per binding', () => {
    const outcomes: VectorWarmupOutcome[] = [];
    const ctx = new Ctx({
      observer: { onVectorWarmup: (o) => outcomes.push(o) },
      now: () => 1,
      idFactory: () => 'id',
      limits: { maxContentLength: 10 },
    });
    const outcome: VectorWarmupOutcome = 'warm';
    ctx.bindProfile({ id: 'p', dimensions: 2 }, 'p:2');
    ctx.emitWarmup(outcome);
    ctx.emitWarmup(outcome);
    expect(outcomes).toHaveLength(1);
    ctx.bindProfile(null, 'none');
    expect(ctx.profile).toBeNull();
    expect(ctx.fingerprint).toBe('none');
    ctx.emitWarmup(outcome);
    expect(outcomes).toHaveLength(2);
  });

  it('never lets a throwing observer change a result', () => {
    expect(() =>
      notifyObserver(
        {
          onStatement: () => {
            throw new Error('observer down');
          },
        },
        'onStatement',
        'read',
      ),
    ).not.toThrow();
    expect(() => notifyObserver({}, 'onStatement', 'read')).not.toThrow();
  });
});
