// Long memories through the whole retriever on a real store (PostgreSQL on PGlite): a long memory whose
// evidence is spread over its chunks ranks as a whole memory would, its explanation says how much that added,
// and `longMemory: false` or an answer without chunked memories ranks by best chunks as before.
import type { PostgresMemoryStore } from '@engram/store-postgres';
import { describe, expect, it } from 'vitest';
import { openPgStore } from './pg-store.fixture.js';
import { createRetriever } from './retriever.js';

/** A diary of eight ~400-character paragraphs; with `words`, each of the query's words is in a different one. */
function diary(words: boolean): string {
  const added: Record<number, string> = {
    0: ' We went hiking in the hills.',
    3: ' We booked the trip in the evening.',
    7: ' At last we reached Denver.',
  };
  return Array.from({ length: 8 }, (_, i) =>
    `Day ${i} of the diary: breakfast, a slow morning and long talks.${words ? (added[i] ?? '') : ''}`.padEnd(
      400,
      ' .',
    ),
  ).join('\n\n');
}

async function seeded(): Promise<PostgresMemoryStore> {
  const store = await openPgStore({ embedding: null });
  await store.insertMemories([
    { id: 'diary', agentId: 'a', kind: 'episodic', content: diary(true) },
    ...Array.from({ length: 3 }, (_, i) => ({
      id: `week${i}`,
      agentId: 'a',
      kind: 'episodic' as const,
      content: `Week ${i}. ${diary(false)}`,
    })),
    { id: 'note', agentId: 'a', kind: 'fact', content: 'Hiking, again.' },
    ...Array.from({ length: 6 }, (_, i) => ({
      id: `other${i}`,
      agentId: 'a',
      kind: 'fact' as const,
      content: `Unrelated note ${i} about groceries and the weekly plan.`,
    })),
  ]);
  return store;
}

describe('long memories', () => {
  it('rank by their whole evidence, and the explanation says how much it added', async () => {
    const store = await seeded();
    const retriever = createRetriever({ store, trackAccess: false });
    const query = 'hiking trip to Denver';
    const found = await retriever.search('a', query);
    expect(found.results[0]?.record.id).toBe('diary');
    expect(found.results[0]?.explanation.longMemory).toBeGreaterThan(0);

    const off = await createRetriever({ store, longMemory: false, trackAccess: false }).search('a', query);
    expect(off.results[0]?.record.id).toBe('note');
    expect(off.results.every((r) => r.explanation.longMemory === undefined)).toBe(true);
    await store.close();
  });

  it('leave an answer without chunked memories as it was', async () => {
    const store = await seeded();
    const query = 'groceries weekly plan';
    const on = await createRetriever({ store, trackAccess: false }).search('a', query);
    const off = await createRetriever({ store, longMemory: false, trackAccess: false }).search('a', query);
    expect(on.results.map((r) => r.record.id)).toEqual(off.results.map((r) => r.record.id));
    const lexical = (r: { explanation: { lexicalScore?: number } }) => r.explanation.lexicalScore;
    expect(on.results.map(lexical)).toEqual(off.results.map(lexical));
    expect(on.results.every((r) => r.explanation.longMemory === undefined)).toBe(true);
    await store.close();
  });

  it('refuses a weight that is not a number from 0 to 4', () => {
    expect(() => createRetriever({ store: {} as never, longMemory: { weight: -1 } })).toThrow(/longMemory/);
    expect(() => createRetriever({ store: {} as never, longMemory: { weight: 5 } })).toThrow(/longMemory/);
  });
});
