/**
 * Pure planning of an `any`-mode (OR) lexical query for the BM25 index. Each cleaned query term becomes one
 * group of index terms:
 *
 * - a single word (or a code identifier the tokenizer keeps whole, such as `getUserById`) is a free term: a
 *   row containing it is a candidate. A plain English stop word is dropped, unless every term is one;
 * - a run of several words (a path, `max_retries`, `NEAR(x)`) is a phrase: its terms count only for rows that
 *   contain the phrase (checked with the word index), so `src/auth/logout.ts` never matches `src/auth/login.ts`;
 * - a CJK run of 1–2 characters is its unigram or bigram, a free term (what a substring search would find);
 * - a longer CJK run contributes its bigrams as free terms and its characters as score-only terms: a row
 *   needs a shared two-character sequence to be a candidate, and single characters refine the score.
 */
import { cleanLexicalTerms, quoteFts } from './lexical-plan.js';
import { queryTokens } from './lexical-tokens.js';
import { codePointLength, splitCjkSegments } from './normalize.js';

/** A term's role in the query. */
export type Bm25Role =
  | { readonly kind: 'free' }
  | { readonly kind: 'score' }
  | { readonly kind: 'phrase'; readonly phrase: number };

/** One index term of a planned query. */
export interface Bm25Term {
  readonly term: string;
  readonly role: Bm25Role;
}

/** The planned BM25 query. */
export interface Bm25Plan {
  readonly terms: readonly Bm25Term[];
  /** FTS5 phrase expressions (quoted) over the word index, indexed by `role.phrase`. */
  readonly phrases: readonly string[];
  /** The 1–2 character CJK terms (matched exactly through their unigram or bigram). */
  readonly shortCjkTerms: readonly string[];
  /** Some word terms are searched. */
  readonly usesWords: boolean;
  /** Some CJK runs of 3 or more characters are searched. */
  readonly usesLongCjk: boolean;
  readonly droppedTerms: number;
}

/** At most this many phrases are checked per query (the rest are searched as free terms). */
export const MAX_PHRASES = 16;

/** One segment of a query term: its index terms and, for a multi-word segment, the phrase text. */
interface Unit {
  readonly terms: readonly Bm25Term[];
  readonly phrase: string | null;
}

interface Group {
  readonly units: Unit[];
  readonly short: string[];
  words: boolean;
  longCjk: boolean;
  stop: boolean;
}

function termUnits(term: string, g: Group): void {
  for (const seg of splitCjkSegments(term)) {
    const tokens = queryTokens(seg.text, false);
    if (tokens.length === 0) continue;
    if (seg.cjk) {
      const n = codePointLength(seg.text);
      if (n <= 2) {
        g.short.push(seg.text);
        // A 2-character run yields both characters and the bigram: the bigram alone is the exact match.
        const exact = tokens[tokens.length - 1] as string;
        g.units.push({ terms: [{ term: exact, role: { kind: 'free' } }], phrase: null });
      } else {
        g.longCjk = true;
        const terms = tokens.map(
          (t): Bm25Term => ({ term: t, role: { kind: codePointLength(t) === 2 ? 'free' : 'score' } }),
        );
        g.units.push({ terms, phrase: null });
      }
      continue;
    }
    g.words = true;
    if (tokens.length === 1) {
      g.units.push({ terms: [{ term: tokens[0] as string, role: { kind: 'free' } }], phrase: null });
    } else {
      g.units.push({
        terms: tokens.map((t): Bm25Term => ({ term: t, role: { kind: 'free' } })),
        phrase: seg.text.trim(),
      });
    }
  }
}

/** Plans an OR query over the BM25 index (see the module comment). Bad input is a typed error. */
export function planBm25Query(input: readonly string[]): Bm25Plan {
  const cleaned = cleanLexicalTerms(input);
  let dropped = cleaned.dropped;
  const groups: Group[] = [];
  for (const term of cleaned.terms) {
    const g: Group = { units: [], short: [], words: false, longCjk: false, stop: false };
    termUnits(term, g);
    if (g.units.length === 0) {
      dropped += 1;
      continue;
    }
    const only = g.units[0];
    g.stop =
      g.units.length === 1 &&
      g.short.length === 0 &&
      !g.longCjk &&
      only !== undefined &&
      only.phrase === null &&
      queryTokens(term, true).length === 0;
    groups.push(g);
  }
  let used = groups;
  if (groups.some((g) => !g.stop)) {
    used = groups.filter((g) => !g.stop);
    dropped += groups.length - used.length;
  }
  const terms: Bm25Term[] = [];
  const phrases: string[] = [];
  const short: string[] = [];
  const seen = new Set<string>();
  const addUnique = (t: Bm25Term): void => {
    const key = `${t.role.kind}\u0000${t.term}`;
    if (seen.has(key)) return;
    seen.add(key);
    terms.push(t);
  };
  for (const g of used) {
    for (const unit of g.units) {
      if (unit.phrase !== null && phrases.length < MAX_PHRASES) {
        const phrase = phrases.length;
        phrases.push(quoteFts(unit.phrase));
        for (const t of unit.terms) terms.push({ term: t.term, role: { kind: 'phrase', phrase } });
      } else {
        for (const t of unit.terms) addUnique(t);
      }
    }
    for (const s of g.short) if (!short.includes(s)) short.push(s);
  }
  return {
    terms,
    phrases,
    shortCjkTerms: short,
    usesWords: used.some((g) => g.words),
    usesLongCjk: used.some((g) => g.longCjk),
    droppedTerms: dropped,
  };
}
