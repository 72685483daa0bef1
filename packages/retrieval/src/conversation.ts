import type { MemoryBrief } from '@engram/store';

/**
 * Conversation structure in the lexical arm. A memory logged in a conversation carries its session and its
 * place in it (`sessionId`, `seqFrom`..`seqTo`); such a memory's lexical score becomes
 *
 * `score + neighbour · best neighbour's score + session · top score · S(session) / max S`
 *
 * where a neighbour is another memory of the same session whose positions touch or overlap its own
 * (`seqFrom − 1 .. seqTo + 1`), and `S(session)` is the sum of the lexical scores of the session's memories
 * among the call's first `depth` lexical hits (the session prior: a conversation that holds several matching
 * turns is the likely place of the answer). A memory without a session or a position keeps its score.
 * Scores stay in the lexical arm's units, so fusion normalises them as before.
 */
export interface ConversationScoring {
  /** Share of the best neighbour's score a memory gains (0 turns the neighbour bonus off). */
  readonly neighbour: number;
  /** Weight of the session prior, as a share of the call's top lexical score (0 turns it off). */
  readonly session: number;
  /** How many of the first lexical hits the session prior sums over. */
  readonly depth: number;
}

/** Off: every memory keeps its own lexical score. */
export const NO_CONVERSATION_SCORING: ConversationScoring = Object.freeze({
  neighbour: 0,
  session: 0,
  depth: 20,
});

/**
 * Default conversation scoring: 0.35 of the best neighbour's score, 0.75 of the top score times the
 * session's share of the first 5 hits — chosen on the development split of LoCoMo by one rule (see
 * docs/design/fusion.md, "Conversation scoring").
 */
export const DEFAULT_CONVERSATION_SCORING: ConversationScoring = Object.freeze({
  neighbour: 0.35,
  session: 0.75,
  depth: 5,
});

/** One lexical candidate: its row's brief and its own score (0 for a neighbour that matched no term). */
export interface ConversationInput {
  readonly record: MemoryBrief;
  readonly score: number;
}

/** A candidate's conversation terms: what its neighbours and its session added to its own score. */
export interface ConversationTerms {
  readonly neighbour: number;
  readonly session: number;
}

interface Placed {
  readonly index: number;
  readonly from: number;
  readonly to: number;
  readonly score: number;
}

/** True when the scoring changes anything. */
export function conversationScoringOn(scoring: ConversationScoring): boolean {
  return scoring.neighbour > 0 || scoring.session > 0;
}

/**
 * The conversation terms of each candidate (in input order; null for a candidate without a session and a
 * position, or when both terms are 0). `input` is the lexical arm's candidates in its order (best first).
 * Pure.
 */
export function conversationTerms(
  input: readonly ConversationInput[],
  scoring: ConversationScoring,
): (ConversationTerms | null)[] {
  const out: (ConversationTerms | null)[] = new Array(input.length).fill(null);
  if (!conversationScoringOn(scoring)) return out;
  const sessions = new Map<string, Placed[]>();
  let top = 0;
  for (let i = 0; i < input.length; i += 1) {
    const { record, score } = input[i] as ConversationInput;
    if (score > top) top = score;
    if (record.sessionId === null || record.seqFrom === null) continue;
    const placed: Placed = { index: i, from: record.seqFrom, to: record.seqTo ?? record.seqFrom, score };
    const list = sessions.get(record.sessionId);
    if (list === undefined) sessions.set(record.sessionId, [placed]);
    else list.push(placed);
  }
  if (sessions.size === 0 || top <= 0) return out;
  // The session prior: each session's sum over the first `depth` hits (by score, ties in input order).
  const prior = new Map<string, number>();
  if (scoring.session > 0) {
    const ranked = input
      .map((c, index) => ({ c, index }))
      .filter(({ c }) => c.score > 0)
      .sort((a, b) => b.c.score - a.c.score || a.index - b.index)
      .slice(0, scoring.depth);
    let best = 0;
    for (const { c } of ranked) {
      if (c.record.sessionId === null || c.record.seqFrom === null) continue;
      const sum = (prior.get(c.record.sessionId) ?? 0) + c.score;
      prior.set(c.record.sessionId, sum);
      if (sum > best) best = sum;
    }
    for (const [key, sum] of prior) prior.set(key, best > 0 ? (scoring.session * top * sum) / best : 0);
  }
  for (const [sessionId, list] of sessions) {
    const sessionTerm = prior.get(sessionId) ?? 0;
    const best = scoring.neighbour > 0 ? neighbourScores(list) : null;
    for (let k = 0; k < list.length; k += 1) {
      const p = list[k] as Placed;
      const neighbour = best === null ? 0 : (best[k] as number);
      const neighbourTerm = scoring.neighbour * neighbour;
      if (neighbourTerm > 0 || sessionTerm > 0)
        out[p.index] = { neighbour: neighbourTerm, session: sessionTerm };
    }
  }
  return out;
}

/**
 * The best neighbour score of each placed row of one session (another row whose positions touch or overlap
 * its own). Rows of one position each (a logged turn) are looked up by position; a session holding ranges
 * (extracted memories) is scanned pairwise.
 */
function neighbourScores(list: readonly Placed[]): number[] {
  const out: number[] = new Array(list.length).fill(0);
  if (list.every((p) => p.from === p.to)) {
    const at = new Map<number, number[]>();
    list.forEach((p, k) => {
      const ks = at.get(p.from);
      if (ks === undefined) at.set(p.from, [k]);
      else ks.push(k);
    });
    list.forEach((p, k) => {
      let best = 0;
      for (const pos of [p.from - 1, p.from, p.from + 1]) {
        for (const j of at.get(pos) ?? []) {
          const q = list[j] as Placed;
          if (j !== k && q.score > best) best = q.score;
        }
      }
      out[k] = best;
    });
    return out;
  }
  list.forEach((p, k) => {
    let best = 0;
    for (const q of list) {
      if (q === p || q.from > p.to + 1 || q.to < p.from - 1) continue;
      if (q.score > best) best = q.score;
    }
    out[k] = best;
  });
  return out;
}
