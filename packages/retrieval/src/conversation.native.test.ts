// Conversation scoring through the whole retriever on a real store (PostgreSQL on PGlite): the neighbours of a
// matching turn join as candidates, the explanation says what came from neighbours and session, and memories
// without a session are scored as before.
import type { PostgresMemoryStore } from '@engram/store-postgres';
import { describe, expect, it } from 'vitest';
import { openPgStore } from './pg-store.fixture.js';
import { createRetriever } from './retriever.js';

const ON = { neighbour: 0.5, session: 0.5, depth: 10 } as const;

async function seeded(): Promise<PostgresMemoryStore> {
  const store = await openPgStore({ embedding: null });
  const turns = [
    'Ann: How was your weekend?',
    'Bob: We went hiking on Mount Tamalpais with my sister.',
    'Ann: That sounds lovely, who drove there?',
    'Bob: She did, in her new electric car.',
  ];
  await store.insertMemories([
    ...turns.map((content, i) => ({
      id: `s1-${i + 1}`,
      agentId: 'a',
      kind: 'event' as const,
      content,
      sessionId: 's1',
      seqFrom: i + 1,
      seqTo: i + 1,
      tags: i === 2 ? ['topic:car'] : [],
    })),
    {
      id: 's2-1',
      agentId: 'a',
      kind: 'event',
      content: 'Bob: I bought groceries.',
      sessionId: 's2',
      seqFrom: 1,
    },
    { id: 'loose', agentId: 'a', kind: 'fact', content: 'Hiking boots need new laces' },
  ]);
  return store;
}

describe('conversation scoring in the lexical arm', () => {
  it("brings a matching turn's neighbours in and explains what they owe to it", async () => {
    const store = await seeded();
    const on = createRetriever({ store, conversation: ON, trackAccess: false });
    const { results } = await on.search('a', 'hiking Mount Tamalpais', { limit: 10 });
    const ids = results.map((r) => r.record.id);
    expect(ids[0]).toBe('s1-2');
    // Turns 1 and 3 share no word with the query: they are there because they sit next to turn 2.
    expect(ids).toEqual(expect.arrayContaining(['s1-1', 's1-3', 'loose']));
    expect(ids).not.toContain('s1-4');
    expect(ids).not.toContain('s2-1');
    const top = results[0]?.explanation;
    const third = results.find((r) => r.record.id === 's1-3')?.explanation;
    expect(third?.arms).toEqual(['lexical']);
    expect(third?.conversation?.neighbour).toBeCloseTo(
      0.5 * ((top?.lexicalScore ?? 0) - (top?.conversation?.session ?? 0)),
      9,
    );
    expect(third?.conversation?.session).toBeGreaterThan(0);
    expect(third?.lexicalScore).toBeCloseTo(
      (third?.conversation?.neighbour ?? 0) + (third?.conversation?.session ?? 0),
      9,
    );

    // Off: only the matching rows, and a memory without a session is scored the same either way.
    const off = createRetriever({ store, conversation: false, trackAccess: false });
    const plain = await off.search('a', 'hiking Mount Tamalpais', { limit: 10 });
    expect(plain.results.map((r) => r.record.id).sort()).toEqual(['loose', 's1-2']);
    const loose = (rs: typeof results) => rs.find((r) => r.record.id === 'loose')?.explanation;
    expect(loose(results)?.conversation).toBeUndefined();
    expect(loose(results)?.lexicalScore).toBe(loose(plain.results)?.lexicalScore);

    // A decision lookup (the facts most like a new one) ranks by each memory's own match only.
    const decision = await on.decision('a', 'hiking Mount Tamalpais', { limit: 10 });
    expect(decision.results.map((r) => r.record.id).sort()).toEqual(['loose', 's1-2']);
    expect(decision.results.every((r) => r.explanation.conversation === undefined)).toBe(true);
  });

  it("applies the call's filters to the neighbours too", async () => {
    const store = await seeded();
    const on = createRetriever({ store, conversation: ON, trackAccess: false });
    const tagged = await on.search('a', 'hiking Mount Tamalpais', { limit: 10, tags: ['topic:car'] });
    expect(tagged.results.map((r) => r.record.id)).toEqual([]);
    const scoped = await on.search('a', 'hiking Mount Tamalpais', {
      limit: 10,
      filter: { sessionId: 's1' },
    });
    expect(scoped.results.map((r) => r.record.id).sort()).toEqual(['s1-1', 's1-2', 's1-3']);
  });
});
