/**
 * The tokenizer of the BM25 index: the same function turns a memory's content into index terms and a query
 * term into search terms, so the two always agree.
 *
 * - Text is NFKC-normalised and lower-cased.
 * - CJK runs (Han, kana, Hangul) become character unigrams plus overlapping bigrams, so a two-character word
 *   matches wherever it occurs, and a one-character term still matches (the usual n-gram indexing of
 *   Chinese, Japanese and Korean for BM25).
 * - Other runs of letters, digits and private-use characters are words: diacritics folded, Porter-stemmed
 *   (the stemmer FTS5's `porter` tokenizer also uses), cut to 64 code points.
 * - English stop words are dropped from queries only, never from the index (document lengths stay exact).
 */
import { CJK_CLASS_SOURCE } from '@engram/contracts/rules';
import { stemmer } from 'stemmer';

/** Words longer than this many code points are cut (the Porter stemmer's own limit in SQLite). */
export const MAX_TOKEN_LENGTH = 64;

// The contracts' CJK class without its brackets, so it can be negated and combined below.
const CJK_CLASS = CJK_CLASS_SOURCE.slice(1, -1);
// Runs of letters, digits, marks and private-use characters; a run holding CJK is split further.
const TOKEN_RUN = /[\p{L}\p{N}\p{Co}\p{M}]+/gu;
const CJK_TEST = new RegExp(`[${CJK_CLASS}]`, 'u');
// Inside a run: a CJK run, or a run of other characters.
const CJK_SPLIT = new RegExp(`([${CJK_CLASS}]+)|([^${CJK_CLASS}]+)`, 'gu');
const ASCII = /^[\x00-\x7f]*$/;
const MARKS = /\p{M}/gu;

/**
 * English stop words dropped from queries: the NLTK English list (itself the Snowball list of Porter's
 * stemmer project, with the fragments a word tokenizer leaves of contractions: `don`, `t`, `ll` …).
 */
export const QUERY_STOP_WORDS: ReadonlySet<string> = new Set(
  `i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she her hers
  herself it its itself they them their theirs themselves what which who whom this that these those am is are
  was were be been being have has had having do does did doing a an the and but if or because as until while
  of at by for with about against between into through during before after above below to from up down in out
  on off over under again further then once here there when where why how all any both each few more most
  other some such no nor not only own same so than too very s t can will just don should now d ll m o re ve y
  ain aren couldn didn doesn hadn hasn haven isn ma mightn mustn needn shan shouldn wasn weren won wouldn`
    .split(/\s+/u)
    .filter((w) => w.length > 0),
);

/** A word token before stemming: diacritics folded (after NFKC and lower-casing), cut to the length limit. */
function foldWord(run: string): string {
  const folded = ASCII.test(run) ? run : run.normalize('NFD').replace(MARKS, '').normalize('NFC');
  if (folded.length <= MAX_TOKEN_LENGTH) return folded;
  return [...folded].slice(0, MAX_TOKEN_LENGTH).join('');
}

const STEM_CACHE_MAX = 50_000;
const stemCache = new Map<string, string>();

/** Stems one folded word (words of one or two characters are kept as they are); memoised, bounded. */
export function stem(word: string): string {
  if (word.length <= 2) return word;
  let out = stemCache.get(word);
  if (out === undefined) {
    out = stemmer(word);
    if (stemCache.size >= STEM_CACHE_MAX) stemCache.clear();
    stemCache.set(word, out);
  }
  return out;
}

function emitWord(raw: string, stopWords: ReadonlySet<string> | null, onWord: (word: string) => void): void {
  const word = foldWord(raw);
  if (word.length === 0 || stopWords?.has(word)) return;
  onWord(word);
}

function emitCjk(run: string, emit: (term: string) => void): void {
  const cps = [...run];
  for (const c of cps) emit(c);
  for (let i = 0; i + 1 < cps.length; i += 1) emit(`${cps[i]}${cps[i + 1]}`);
}

/**
 * Calls `onWord` for each word of lower-case ASCII text: its runs of letters and digits (in ASCII text the token
 * runs are exactly those: no marks, CJK or private use, and no diacritic to fold), cut to the length limit. One
 * pass over the character codes: no regular expression and no match object per word.
 */
function eachAsciiWord(
  lower: string,
  stopWords: ReadonlySet<string> | null,
  onWord: (word: string) => void,
): void {
  const n = lower.length;
  let start = -1;
  // Reads stay within the string (a read past its end would cost the optimised loop its bounds check).
  for (let i = 0; i < n; i += 1) {
    const c = lower.charCodeAt(i);
    if ((c >= 97 && c <= 122) || (c >= 48 && c <= 57)) {
      if (start < 0) start = i;
    } else if (start >= 0) {
      asciiWord(lower, start, i, stopWords, onWord);
      start = -1;
    }
  }
  if (start >= 0) asciiWord(lower, start, n, stopWords, onWord);
}

/** The word `lower[start, end)`, cut to the length limit, unless it is a stop word. */
function asciiWord(
  lower: string,
  start: number,
  end: number,
  stopWords: ReadonlySet<string> | null,
  onWord: (word: string) => void,
): void {
  const word = lower.slice(start, end - start <= MAX_TOKEN_LENGTH ? end : start + MAX_TOKEN_LENGTH);
  if (stopWords === null || !stopWords.has(word)) onWord(word);
}

/**
 * Splits `text` into its tokens, in order: `onWord` gets each word before stemming (folded, cut to the length
 * limit; its term is `stem(word)`), `onCjk` each CJK unigram and bigram (a term as it is).
 */
function eachWord(
  text: string,
  stopWords: ReadonlySet<string> | null,
  onWord: (word: string) => void,
  onCjk: (term: string) => void,
): void {
  // NFKC leaves ASCII text as it is, so ASCII text skips it (the common case).
  if (ASCII.test(text)) {
    eachAsciiWord(text.toLowerCase(), stopWords, onWord);
    return;
  }
  const lower = text.normalize('NFKC').toLowerCase();
  if (ASCII.test(lower)) {
    eachAsciiWord(lower, stopWords, onWord);
    return;
  }
  for (const match of lower.matchAll(TOKEN_RUN)) {
    const run = match[0];
    if (!CJK_TEST.test(run)) {
      emitWord(run, stopWords, onWord);
      continue;
    }
    for (const part of run.matchAll(CJK_SPLIT)) {
      if (part[1] !== undefined) emitCjk(part[1], onCjk);
      else emitWord(part[2] ?? '', stopWords, onWord);
    }
  }
}

/** Calls `emit` for each index term of `text`, in order. */
function eachToken(text: string, stopWords: ReadonlySet<string> | null, emit: (term: string) => void): void {
  eachWord(text, stopWords, (word) => emit(stem(word)), emit);
}

/**
 * The index terms of a text, in order, with repeats (their count is the unit's length in tokens), without the
 * array of {@link indexTokens}: `onWord` gets each word before stemming (its term is `stem(word)`, so a caller
 * can stem each distinct word once), `onCjk` each CJK term.
 */
export function forEachIndexWord(
  text: string,
  onWord: (word: string) => void,
  onCjk: (term: string) => void,
): void {
  eachWord(text, null, onWord, onCjk);
}

/** The index terms of a text, with repeats (their count is the document length). */
export function indexTokens(text: string): string[] {
  const out: string[] = [];
  eachToken(text, null, (t) => out.push(t));
  return out;
}

/** Term frequencies of a text and its length in tokens. */
export function termFrequencies(text: string): { readonly tf: Map<string, number>; readonly length: number } {
  const tf = new Map<string, number>();
  let length = 0;
  eachToken(text, null, (t) => {
    tf.set(t, (tf.get(t) ?? 0) + 1);
    length += 1;
  });
  return { tf, length };
}

/**
 * The search terms of one query term. A single plain word that is an English stop word yields nothing (the
 * caller keeps it when nothing else would remain); words inside a path or an identifier are never dropped.
 */
export function queryTokens(term: string, dropStopWords: boolean): string[] {
  const out: string[] = [];
  eachToken(term, null, (t) => out.push(t));
  if (!dropStopWords) return out;
  const words: string[] = [];
  eachToken(term, QUERY_STOP_WORDS, (t) => words.push(t));
  // Only a term that is one plain word is subject to the stop list.
  return out.length === 1 && words.length === 0 ? [] : out;
}
