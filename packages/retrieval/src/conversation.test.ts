import { describe, expect, it } from 'vitest';
import { type ConversationInput, conversationTerms, NO_CONVERSATION_SCORING } from './conversation.js';
import { memoryRecord } from './memory-record.fixture.js';

/** A lexical candidate: a row of session `s` at positions `from..to` (or without a session) and its score. */
function turn(
  id: string,
  score: number,
  s: string | null,
  from: number | null,
  to = from,
): ConversationInput {
  return { record: memoryRecord({ id, sessionId: s, seqFrom: from, seqTo: to }), score };
}

describe('conversationTerms', () => {
  const input = [
    turn('s1-2', 8, 's1', 2),
    turn('s2-5', 4, 's2', 5),
    turn('s1-3', 0, 's1', 3),
    turn('s1-4', 2, 's1', 4),
    turn('s1-7', 1, 's1', 5, 8),
    turn('loose', 6, null, null),
  ];

  it("adds a share of the best neighbour's score and the session's share of the top hits", () => {
    const terms = conversationTerms(input, { neighbour: 0.5, session: 1, depth: 20 });
    // Session sums over the hits: s1 = 8 + 2 + 1 = 11, s2 = 4; the top score is 8.
    expect(terms[0]).toEqual({ neighbour: 0, session: 8 });
    expect(terms[1]).toEqual({ neighbour: 0, session: (8 * 4) / 11 });
    // s1-3 touches s1-2 (8) and s1-4 (2): half of the better one.
    expect(terms[2]).toEqual({ neighbour: 4, session: 8 });
    // s1-4 touches s1-3 (0) and the range 5..8 right after it (1): half of 1.
    expect(terms[3]).toEqual({ neighbour: 0.5, session: 8 });
    expect(terms[4]).toEqual({ neighbour: 1, session: 8 });
    // Without a session, nothing changes.
    expect(terms[5]).toBeNull();
  });

  it('counts rows at the same or the next position as neighbours in a session of single positions', () => {
    const single = [turn('a', 4, 's', 1), turn('b', 0, 's', 2), turn('c', 2, 's', 4), turn('d', 1, 's', 2)];
    const terms = conversationTerms(single, { neighbour: 1, session: 0, depth: 20 });
    expect(terms.map((t) => t?.neighbour ?? 0)).toEqual([1, 4, 0, 4]);
  });

  it('sums a session over the first `depth` hits only', () => {
    const terms = conversationTerms(input, { neighbour: 0, session: 1, depth: 2 });
    // The first two hits by score: s1-2 (8) and the loose row (6): only s1 has a sum.
    expect(terms[0]).toEqual({ neighbour: 0, session: 8 });
    expect(terms[1]).toBeNull();
  });

  it('changes nothing when off, and nothing for rows without a position', () => {
    expect(conversationTerms(input, NO_CONVERSATION_SCORING).every((t) => t === null)).toBe(true);
    const unplaced = [turn('a', 3, 's1', null), turn('b', 2, null, null)];
    expect(conversationTerms(unplaced, { neighbour: 0.5, session: 1, depth: 20 })).toEqual([null, null]);
  });
});
