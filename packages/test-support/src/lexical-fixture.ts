/**
 * The small lexical corpus the store's BM25 tests write and query (`@engram/test-support/lexical-fixture`):
 * short notes over ten words, every third with a CJK run, and the search of every query whose hits, scores and
 * chunks a test compares before and after a change (a migration, a merge, another postings level). Imports
 * nothing, so a store test can use it without the rest of the test helpers.
 */

/** The ten words the notes are made of. */
export const LEXICAL_WORDS: readonly string[] = [
  'deploy',
  'pipeline',
  'walrus',
  'ferns',
  'cache',
  'token',
  'retry',
  'budget',
  'schema',
  'index',
];

/** The `k`-th word of note `i`; `shift` also moves the choice every eight notes (more distinct notes). */
export function lexicalWord(i: number, k: number, shift = false): string {
  return LEXICAL_WORDS[(i * 7 + k * 3 + (shift ? i >> 3 : 0)) % LEXICAL_WORDS.length] as string;
}

/** Note `i`: six words (one repeated), a CJK run in every third note, then `tail`. */
export function lexicalNote(
  i: number,
  options: { readonly shift?: boolean; readonly tail?: string } = {},
): string {
  const w = (k: number): string => lexicalWord(i, k, options.shift);
  return `note ${i} ${w(0)} ${w(1)} ${w(1)} ${w(2)} ${i % 3 === 0 ? '数据库连接池' : 'plain'} ${w(i % 4)}${options.tail ?? ''}`;
}

/** What `searchLexicalAll` needs of a store. */
export interface LexicalSearcher {
  searchLexical(query: { agentId: string; terms: readonly string[]; limit: number }): Promise<{
    readonly hits: readonly { readonly id: string; readonly score: number; readonly chunk?: unknown }[];
  }>;
}

/** Every query for every agent at every limit: the hits' ids, scores and chunks as one JSON string. */
export async function searchLexicalAll(
  store: LexicalSearcher,
  search: {
    readonly agents: readonly string[];
    readonly queries: readonly (readonly string[])[];
    readonly limits: readonly number[];
  },
): Promise<string> {
  const out: unknown[] = [];
  for (const agentId of search.agents) {
    for (const terms of search.queries) {
      for (const limit of search.limits) {
        const r = await store.searchLexical({ agentId, terms, limit });
        out.push(r.hits.map((h) => [h.id, h.score, h.chunk ?? null]));
      }
    }
  }
  return JSON.stringify(out);
}
