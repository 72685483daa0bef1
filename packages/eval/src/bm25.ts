import { hasCjk } from '@engram/contracts';
import type { RetrievalFixture } from './fixture.js';

/**
 * The plain BM25 reference every report prints beside the production variants: what a 40-line script
 * scores on the same fixture, with no store, no fusion and no tuning.
 *
 * Text is lower-cased; a CJK run (the store's CJK class) becomes its character unigrams plus bigrams; any
 * other run of letters, digits or `_` is a word, dropped when it is an English stop word (NLTK's list).
 * Statistics (document frequency, average length) are per agent, as the store's are. A query term adds
 * `idf · tf · (k1 + 1) / (tf + k1 · (1 − b + b · dl / avgdl))` with `idf = ln(1 + (N − df + 0.5) / (df + 0.5))`
 * (Lucene's), each distinct query term once (OR semantics); ties keep corpus order.
 */

/** k1 and b of the reference. */
export const BM25_REFERENCE_PARAMETERS: { readonly k1: 0.9; readonly b: 0.4 } = Object.freeze({
  k1: 0.9,
  b: 0.4,
});

// NLTK's English stop words (179), the list the published LoCoMo reference figures were computed with.
const STOP_WORDS: ReadonlySet<string> = new Set(
  `i me my myself we our ours ourselves you you're you've you'll you'd your yours yourself yourselves he him his
himself she she's her hers herself it it's its itself they them their theirs themselves what which who whom this that
that'll these those am is are was were be been being have has had having do does did doing a an the and but if or
because as until while of at by for with about against between into through during before after above below to from
up down in out on off over under again further then once here there when where why how all any both each few more
most other some such no nor not only own same so than too very s t can will just don don't should should've now d ll
m o re ve y ain aren aren't couldn couldn't didn didn't doesn doesn't hadn hadn't hasn hasn't haven haven't isn isn't
ma mightn mightn't mustn mustn't needn needn't shan shan't shouldn shouldn't wasn wasn't weren weren't won won't
wouldn wouldn't`.split(/\s+/),
);

const WORD_CHAR = /[\p{L}\p{N}_]/u;

// Code points below U+1100 (Hangul Jamo) are never CJK: skip the regular expression for them.
const isCjk = (char: string): boolean => (char.codePointAt(0) ?? 0) >= 0x1100 && hasCjk(char);

/** The reference's terms of a text, in order, with repeats (see the module comment). */
export function bm25Terms(text: string): string[] {
  const terms: string[] = [];
  let word = '';
  let run: string[] = [];
  const flushWord = (): void => {
    if (word !== '' && !STOP_WORDS.has(word)) terms.push(word);
    word = '';
  };
  const flushRun = (): void => {
    for (let i = 0; i < run.length; i += 1) {
      terms.push(run[i] as string);
      if (i + 1 < run.length) terms.push(`${run[i]}${run[i + 1]}`);
    }
    run = [];
  };
  for (const char of text.toLowerCase()) {
    if (isCjk(char)) {
      flushWord();
      run.push(char);
    } else {
      flushRun();
      if (WORD_CHAR.test(char)) word += char;
      else flushWord();
    }
  }
  flushWord();
  flushRun();
  return terms;
}

interface AgentIndex {
  readonly ids: string[];
  readonly lengths: number[];
  readonly postings: Map<string, { doc: number; tf: number }[]>;
  totalLength: number;
}

/**
 * Ranks every query of a fixture with the BM25 reference over its own agent's rows; returns the top `depth`
 * ids per query id, best first (only rows sharing a term with the query).
 */
export function bm25Rankings(fixture: RetrievalFixture, depth: number): Map<string, string[]> {
  const { k1, b } = BM25_REFERENCE_PARAMETERS;
  const agents = new Map<string, AgentIndex>();
  for (const row of fixture.corpus) {
    let index = agents.get(row.agentId);
    if (index === undefined) {
      index = { ids: [], lengths: [], postings: new Map(), totalLength: 0 };
      agents.set(row.agentId, index);
    }
    const terms = bm25Terms(row.content);
    const doc = index.ids.length;
    index.ids.push(row.id);
    index.lengths.push(terms.length);
    index.totalLength += terms.length;
    const counts = new Map<string, number>();
    for (const term of terms) counts.set(term, (counts.get(term) ?? 0) + 1);
    for (const [term, tf] of counts) {
      const list = index.postings.get(term);
      if (list === undefined) index.postings.set(term, [{ doc, tf }]);
      else list.push({ doc, tf });
    }
  }
  const rankings = new Map<string, string[]>();
  for (const query of fixture.queries) {
    const index = agents.get(query.agentId);
    if (index === undefined) {
      rankings.set(query.id, []);
      continue;
    }
    const n = index.ids.length;
    const avgdl = index.totalLength / n || 1;
    const scores = new Map<number, number>();
    for (const term of new Set(bm25Terms(query.text))) {
      const list = index.postings.get(term);
      if (list === undefined) continue;
      const idf = Math.log(1 + (n - list.length + 0.5) / (list.length + 0.5));
      for (const { doc, tf } of list) {
        const norm = tf + k1 * (1 - b + (b * (index.lengths[doc] as number)) / avgdl);
        scores.set(doc, (scores.get(doc) ?? 0) + (idf * tf * (k1 + 1)) / norm);
      }
    }
    const ranked = [...scores]
      .sort((x, y) => y[1] - x[1] || x[0] - y[0])
      .slice(0, depth)
      .map(([doc]) => index.ids[doc] as string);
    rankings.set(query.id, ranked);
  }
  return rankings;
}
