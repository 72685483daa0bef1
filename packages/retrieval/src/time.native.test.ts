// Time in queries through the whole retriever on a real store (PostgreSQL on PGlite): a memory of the named
// window moves up and its explanation says how much the window added; a query that names no time, a decision
// lookup and `time: false` rank as before.
import type { PostgresMemoryStore } from '@engram/store-postgres';
import { describe, expect, it } from 'vitest';
import { openPgStore } from './pg-store.fixture.js';
import { createRetriever } from './retriever.js';

const MAY_20 = Date.UTC(2023, 4, 20, 12);

async function seeded(): Promise<PostgresMemoryStore> {
  const store = await openPgStore({ embedding: null });
  await store.insertMemories([
    // The better lexical match (shorter, the same words) is from March; the other is from last week.
    {
      id: 'march',
      agentId: 'a',
      kind: 'fact',
      content: 'We deployed the billing service',
      validFrom: Date.UTC(2023, 2, 3),
    },
    {
      id: 'may',
      agentId: 'a',
      kind: 'fact',
      content: 'We deployed the billing service again after the outage',
      validFrom: Date.UTC(2023, 4, 10),
    },
  ]);
  return store;
}

describe('a time the query names', () => {
  it('lifts the memory of that window and says so in its explanation', async () => {
    const store = await seeded();
    const retriever = createRetriever({ store, time: { boost: 1 }, trackAccess: false, now: () => MAY_20 });
    const plain = await retriever.search('a', 'deployed billing service');
    expect(plain.results[0]?.record.id).toBe('march');
    expect(plain.results.every((r) => r.explanation.time === undefined)).toBe(true);

    const timed = await retriever.search('a', 'deployed billing service last week');
    expect(timed.results[0]?.record.id).toBe('may');
    const time = timed.results[0]?.explanation.time;
    expect(time).toEqual({ from: Date.UTC(2023, 4, 8), to: Date.UTC(2023, 4, 15), gain: expect.any(Number) });
    expect(time?.gain).toBeGreaterThan(0);
    expect(timed.results.find((r) => r.record.id === 'march')?.explanation.time).toBeUndefined();

    // Counted from the caller's reference time instead of the clock: "last week" of 10 March is March's.
    const then = await retriever.search('a', 'deployed billing service last week', {
      referenceTime: Date.UTC(2023, 2, 10),
    });
    expect(then.results[0]?.record.id).toBe('march');
    expect(then.results[0]?.explanation.time?.gain).toBeGreaterThan(0);
    await store.close();
  });

  it('changes nothing when turned off, or for a decision lookup', async () => {
    const store = await seeded();
    const off = createRetriever({ store, time: false, trackAccess: false, now: () => MAY_20 });
    const query = 'deployed billing service last week';
    expect((await off.search('a', query)).results[0]?.record.id).toBe('march');
    const on = createRetriever({ store, time: { boost: 1 }, trackAccess: false, now: () => MAY_20 });
    const decision = await on.decision('a', query);
    expect(decision.results[0]?.record.id).toBe('march');
    expect(decision.results.every((r) => r.explanation.time === undefined)).toBe(true);
    await store.close();
  });

  it('refuses a reference time that is not epoch milliseconds', async () => {
    const store = await seeded();
    const retriever = createRetriever({ store, trackAccess: false });
    await expect(retriever.search('a', 'last week', { referenceTime: Number.NaN })).rejects.toMatchObject({
      code: 'ENGRAM_RETRIEVAL_INVALID_INPUT',
    });
    expect(() => createRetriever({ store, time: { boost: -1 } })).toThrow(
      expect.objectContaining({ code: 'ENGRAM_RETRIEVAL_INVALID_CONFIG' }),
    );
    await store.close();
  });
});
