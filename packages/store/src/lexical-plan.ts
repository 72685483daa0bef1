/**
 * Pure planning of a lexical query: term clean-up, routing (word index, trigram index, bounded LIKE) and the
 * FTS5 expressions. Every term is emitted as a quoted FTS5 string, so no user text can inject syntax.
 */
import { invalidInput } from './errors.js';
import { codePointLength, splitCjkSegments } from './normalize.js';
import type { TermMode } from './types.js';

/** At most this many terms are used; the rest are counted in `droppedTerms`. */
export const MAX_LEXICAL_TERMS = 64;
/** At most this many trigram windows are OR'ed in `any` mode. */
export const MAX_TRIGRAM_WINDOWS = 32;
/** At most this many 1–2 character CJK terms go through the LIKE path. */
export const MAX_LIKE_TERMS = 8;
/**
 * A term is cut to its first this many code points (after NFKC): a phrase of a few hundred thousand tokens or
 * trigrams would cost FTS5 seconds to minutes, so one huge term could stall the store.
 */
export const MAX_TERM_LENGTH = 256;

/** The first `max` code points of a string (never splits a surrogate pair). */
function firstCodePoints(text: string, max: number): string {
  if (text.length <= max) return text;
  let out = '';
  let n = 0;
  for (const cp of text) {
    if (n >= max) break;
    out += cp;
    n += 1;
  }
  return out;
}

/** A short standard English stop-word list (Lucene's), dropped from word terms in `any` mode. */
export const ENGLISH_STOP_WORDS: ReadonlySet<string> = new Set([
  'a',
  'an',
  'and',
  'are',
  'as',
  'at',
  'be',
  'but',
  'by',
  'for',
  'if',
  'in',
  'into',
  'is',
  'it',
  'no',
  'not',
  'of',
  'on',
  'or',
  'such',
  'that',
  'the',
  'their',
  'then',
  'there',
  'these',
  'they',
  'this',
  'to',
  'was',
  'will',
  'with',
]);

/** The routed form of a lexical query. */
export interface LexicalPlan {
  readonly mode: TermMode;
  /** FTS5 expression over the word index's `content` column, or null when no word term remains. */
  readonly wordsExpr: string | null;
  /** FTS5 expression over the trigram index's `content` column, or null when no ≥3 CJK term remains. */
  readonly trigramExpr: string | null;
  /** The 1–2 character CJK terms for the LIKE path. */
  readonly likeTerms: readonly string[];
  /** Their LIKE patterns (`%term%`, with `\` escaping `%`, `_` and `\`). */
  readonly likePatterns: readonly string[];
  readonly droppedTerms: number;
}

/** Quotes a string as an FTS5 string literal: everything inside is searched literally. */
export function quoteFts(text: string): string {
  return `"${text.replaceAll('"', '""')}"`;
}

/** Escapes `%`, `_` and `\` for `LIKE … ESCAPE '\'`. */
export function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

const TOKEN_CHAR = /[\p{L}\p{N}\p{Co}]/u;

/** Overlapping windows of `size` code points (the whole string when shorter). */
export function codePointWindows(text: string, size: number): string[] {
  const cps = [...text];
  if (cps.length <= size) return [text];
  const out: string[] = [];
  for (let i = 0; i + size <= cps.length; i += 1) out.push(cps.slice(i, i + size).join(''));
  return out;
}

interface Group {
  readonly words: string[];
  readonly trigram: string[];
  readonly like: string[];
  stop: boolean;
}

/** Validated, cleaned query terms: NFKC + trim, cut to 256 code points, no empties or duplicates, at most 64. */
export interface CleanedTerms {
  readonly terms: readonly string[];
  /** Terms dropped as empty, duplicate or over the cap. */
  readonly dropped: number;
}

/** Cleans query terms (shared by the FTS planner and the BM25 planner); bad input is a typed error. */
export function cleanLexicalTerms(terms: readonly string[]): CleanedTerms {
  if (!Array.isArray(terms)) throw invalidInput('terms must be an array of strings');
  let dropped = 0;
  const seen = new Set<string>();
  const out: string[] = [];
  for (const raw of terms) {
    if (typeof raw !== 'string') throw invalidInput('terms must be an array of strings');
    // Cut before NFKC (bounded work on huge input) and after it (NFKC may expand a character).
    const term = firstCodePoints(
      firstCodePoints(raw, MAX_TERM_LENGTH * 4)
        .normalize('NFKC')
        .trim(),
      MAX_TERM_LENGTH,
    ).trim();
    if (term.length === 0) {
      dropped += 1;
      continue;
    }
    const key = term.toLowerCase();
    if (seen.has(key)) {
      dropped += 1;
      continue;
    }
    if (out.length >= MAX_LEXICAL_TERMS) {
      dropped += 1;
      continue;
    }
    seen.add(key);
    out.push(term);
  }
  return { terms: out, dropped };
}

/**
 * Plans a lexical query: NFKC + trim, cut each term to 256 code points, drop empties and duplicates, cap at 64 terms; split each term into
 * CJK runs and the rest; route CJK runs of ≥ 3 code points to the trigram index (`any`: overlapping 3-grams,
 * `all`: one phrase), 1–2 code points to LIKE, the rest to the word index; in `any` mode drop English stop
 * words unless nothing else would remain.
 */
export function planLexicalQuery(terms: readonly string[], mode: TermMode = 'any'): LexicalPlan {
  if (!Array.isArray(terms)) throw invalidInput('terms must be an array of strings');
  if (mode !== 'any' && mode !== 'all') throw invalidInput('mode must be "any" or "all"');
  const cleaned = cleanLexicalTerms(terms);
  let dropped = cleaned.dropped;
  const groups: Group[] = [];
  for (const term of cleaned.terms) {
    const group: Group = { words: [], trigram: [], like: [], stop: false };
    for (const seg of splitCjkSegments(term)) {
      if (seg.cjk) {
        const n = codePointLength(seg.text);
        if (n >= 3) {
          if (mode === 'any') for (const w of codePointWindows(seg.text, 3)) group.trigram.push(w);
          else group.trigram.push(seg.text);
        } else {
          group.like.push(seg.text);
        }
      } else {
        const text = seg.text.trim();
        if (TOKEN_CHAR.test(text)) group.words.push(text);
      }
    }
    if (group.words.length + group.trigram.length + group.like.length === 0) {
      dropped += 1;
      continue;
    }
    group.stop =
      mode === 'any' &&
      group.trigram.length === 0 &&
      group.like.length === 0 &&
      group.words.length === 1 &&
      ENGLISH_STOP_WORDS.has((group.words[0] as string).toLowerCase());
    groups.push(group);
  }
  let used = groups;
  if (mode === 'any' && groups.some((g) => !g.stop)) {
    used = groups.filter((g) => !g.stop);
    dropped += groups.length - used.length;
  }

  const words: string[] = [];
  const trigram: string[] = [];
  const like: string[] = [];
  const wordSeen = new Set<string>();
  const triSeen = new Set<string>();
  const likeSeen = new Set<string>();
  for (const g of used) {
    for (const w of g.words) {
      const k = w.toLowerCase();
      if (!wordSeen.has(k)) {
        wordSeen.add(k);
        words.push(w);
      }
    }
    for (const t of g.trigram) {
      const k = t.toLowerCase();
      if (triSeen.has(k)) continue;
      if (mode === 'any' && triSeen.size >= MAX_TRIGRAM_WINDOWS) continue;
      triSeen.add(k);
      trigram.push(t);
    }
    for (const l of g.like) {
      if (likeSeen.has(l)) continue;
      if (likeSeen.size >= MAX_LIKE_TERMS) {
        dropped += 1;
        continue;
      }
      likeSeen.add(l);
      like.push(l);
    }
  }
  const joiner = mode === 'any' ? ' OR ' : ' AND ';
  return {
    mode,
    wordsExpr: words.length > 0 ? words.map(quoteFts).join(joiner) : null,
    trigramExpr: trigram.length > 0 ? trigram.map(quoteFts).join(joiner) : null,
    likeTerms: like,
    likePatterns: like.map((l) => `%${escapeLike(l)}%`),
    droppedTerms: dropped,
  };
}

/** The full MATCH string: the agent token scoped to the `agent` column AND the content expression. */
export function buildMatch(agentToken: string, contentExpr: string): string {
  return `agent : ${quoteFts(agentToken)} AND content : (${contentExpr})`;
}
