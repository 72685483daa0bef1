import type { FixtureMemory, FixtureQuery } from '../fixture.js';
import { type DatasetFixture, type DatasetSplit, splitName } from './common.js';
import { LOCOMO_DEV_CONVERSATIONS, locomoToFixture } from './locomo.js';

/** Consecutive sessions of one conversation that make one memory of `locomo-long`. */
export const LOCOMO_LONG_SESSIONS = 5;

/** The one agent of `locomo-long`: every conversation's memories are in one haystack. */
export const LOCOMO_LONG_AGENT = 'locomo10';

/**
 * LoCoMo as a set of long memories (`locomo-long`): each conversation's sessions joined five at a time, in order,
 * into one memory (`sample_id/sessions_F-T`, the sessions separated by a blank line; 10k–20k characters, a dozen
 * or more chunks each), and every conversation's memories in one agent, so a question searches all of them, its
 * own conversation's and the others'. A question's relevant memories are those holding its evidence sessions.
 * A memory's `createdAt` is its first session's date; memories carry no session, so conversation scoring leaves
 * them alone. The split keeps the corpus whole and takes the questions of the first five conversations (`dev`)
 * or of the rest (`test`).
 */
export function locomoLongToFixture(
  data: unknown,
  options: { readonly split?: DatasetSplit } = {},
): DatasetFixture {
  const split = options.split ?? 'all';
  const { fixture, stats } = locomoToFixture(data, { granularity: 'session' });
  const memoryOf = new Map<string, string>();
  const merged = new Map<string, { first: FixtureMemory; parts: { n: number; content: string }[] }>();
  const samples: string[] = [];
  for (const row of fixture.corpus) {
    const n = Number(row.sessionId?.replace('session_', ''));
    if (!samples.includes(row.agentId)) samples.push(row.agentId);
    const from = Math.floor((n - 1) / LOCOMO_LONG_SESSIONS) * LOCOMO_LONG_SESSIONS + 1;
    const id = `${row.agentId}/sessions_${from}-${from + LOCOMO_LONG_SESSIONS - 1}`;
    memoryOf.set(row.id, id);
    const entry = merged.get(id);
    if (entry === undefined) merged.set(id, { first: row, parts: [{ n, content: row.content }] });
    else {
      entry.parts.push({ n, content: row.content });
      if (n < Number(entry.first.sessionId?.replace('session_', ''))) entry.first = row;
    }
  }
  const corpus: FixtureMemory[] = [...merged].map(([id, { first, parts }]) => ({
    id,
    agentId: LOCOMO_LONG_AGENT,
    kind: first.kind,
    content: parts
      .sort((a, b) => a.n - b.n)
      .map((p) => p.content)
      .join('\n\n'),
    importance: first.importance,
    ...(first.createdAt === undefined ? {} : { createdAt: first.createdAt }),
  }));
  const queries: FixtureQuery[] = [];
  for (const q of fixture.queries) {
    const conversation = samples.indexOf(q.agentId);
    if (split === 'dev' && conversation >= LOCOMO_DEV_CONVERSATIONS) continue;
    if (split === 'test' && conversation < LOCOMO_DEV_CONVERSATIONS) continue;
    const relevantIds = [...new Set(q.relevantIds.map((id) => memoryOf.get(id) as string))];
    queries.push({ ...q, agentId: LOCOMO_LONG_AGENT, relevantIds });
  }
  return {
    fixture: { ...fixture, name: splitName('locomo10-long', split), corpus, queries },
    stats: { ...stats, agents: 1, rows: corpus.length, queries: queries.length },
  };
}
