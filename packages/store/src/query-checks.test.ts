import { BAD_VECTOR_QUERIES } from '@engram/test-support';
import { describe, expect, it } from 'vitest';
import { EngramStoreError } from './errors.js';
import { validateVectorQuery } from './query-checks.js';

/** The error `fn` throws (undefined when it returns). */
function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  return undefined;
}

const v = new Float32Array([1, 0, 0, 0]);

describe('the vector query validator both stores share', () => {
  it('refuses the conformance table of bad queries with its code and message', () => {
    expect(BAD_VECTOR_QUERIES.length).toBeGreaterThan(40);
    for (const c of BAD_VECTOR_QUERIES) {
      const err = thrown(() => validateVectorQuery(c.query, 4));
      expect(err, c.what).toBeInstanceOf(EngramStoreError);
      expect(err, c.what).toMatchObject({ code: c.code, message: c.message });
    }
  });

  it('refuses a store without an index after the agent id and before the vector', () => {
    expect(thrown(() => validateVectorQuery({ agentId: '', vector: v, k: 1 }, null))).toMatchObject({
      code: 'ENGRAM_STORE_INVALID_INPUT',
    });
    expect(
      thrown(() => validateVectorQuery({ agentId: 'a', vector: new Float32Array(3), k: 0 }, null)),
    ).toMatchObject({ code: 'ENGRAM_STORE_VECTOR_UNAVAILABLE' });
  });

  it('normalises what it accepts: k clamped, kinds and tags deduplicated in order, filters checked', () => {
    expect(validateVectorQuery({ agentId: 'a', vector: v, k: 5000 }, 4)).toEqual({
      agentId: 'a',
      vector: v,
      k: 1000,
      kinds: null,
      tags: [],
      filter: null,
      time: null,
      restricted: false,
    });
    const q = validateVectorQuery(
      {
        agentId: 'a',
        vector: v,
        k: 3,
        kinds: ['fact', 'event', 'fact'],
        tags: ['b:1', 'a:1', 'b:1'],
        filter: { userId: 'u', metadata: [{ key: 'x', op: 'eq', value: 1 }] },
        time: { asOf: 5, includeHistory: true },
      },
      4,
    );
    expect(q.kinds).toEqual(['fact', 'event']);
    expect(q.tags).toEqual(['b:1', 'a:1']);
    expect(q.filter).toEqual({
      userId: 'u',
      forUser: null,
      sessionId: null,
      conditions: [{ path: '$."x"', op: 'in', values: [1] }],
    });
    expect(q.time).toEqual({ asOf: 5, includeHistory: true });
    expect(q.restricted).toBe(true);
  });

  it('counts only filters that can restrict as restricting', () => {
    const base = { agentId: 'a', vector: v, k: 3 };
    const restricted = (extra: object): boolean => validateVectorQuery({ ...base, ...extra }, 4).restricted;
    expect(restricted({ tags: [], filter: {}, kinds: undefined })).toBe(false);
    expect(restricted({ filter: { metadata: [] } })).toBe(false);
    expect(restricted({ kinds: [] })).toBe(true);
    expect(restricted({ tags: ['a:1'] })).toBe(true);
    expect(restricted({ filter: { sessionId: 's' } })).toBe(true);
    // A user's view leaves out other users' rows, so the vector arm must refill for it.
    expect(restricted({ filter: { forUser: 'bob' } })).toBe(true);
    expect(restricted({ time: {} })).toBe(true);
  });
});
