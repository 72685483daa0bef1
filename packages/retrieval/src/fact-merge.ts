/**
 * The fact-merge guard and the similarity measures `memory_remember` uses to find near duplicates
 * (DESIGN.md, "Data model": near duplicates merge, but never across a number, a negation or a named entity).
 */
import { extractKeywords } from './keywords.js';

/** Why two similar facts must stay separate. */
export type FactMergeBlock = 'number' | 'negation' | 'entity';

/** The verdict of {@link canMergeFacts}. */
export type FactMergeVerdict =
  | { readonly ok: true }
  | { readonly ok: false; readonly reason: FactMergeBlock };

const NUMBER_WORDS = new Set([
  'zero',
  'one',
  'two',
  'three',
  'four',
  'five',
  'six',
  'seven',
  'eight',
  'nine',
  'ten',
  'eleven',
  'twelve',
  'twenty',
  'hundred',
  'thousand',
  'million',
  'billion',
  'half',
  'twice',
]);
const NEGATION_WORDS = new Set([
  'not',
  'no',
  'never',
  'none',
  'nobody',
  'nothing',
  'nowhere',
  'neither',
  'nor',
  'without',
  'cannot',
  'avoid',
]);
const DIGITS = /\d+(?:[.,]\d+)*/g;
const CJK_NUMERALS = /[零〇一二三四五六七八九十百千万亿两]+/g;
const CJK_NEGATIONS = /禁止|不|没|別|别|无|無|非|未|勿|莫/g;
const LATIN_WORD = /[\p{L}\p{N}]+(?:'[\p{L}]+)?/gu;
const CAPITALISED = /^\p{Lu}/u;
// What may precede a capitalised word that starts a sentence (after skipping spaces, quotes and brackets).
const SENTENCE_BREAK = /[.!?;:\n\-*•>#。！？；：]/u;
const SKIPPABLE_BEFORE_WORD = /[\s"'“”‘’([{«]/u;

function normalise(text: string): string {
  return text.normalize('NFKC').replace(/[\u2018\u2019\u02bc]/g, "'");
}

function sameMultiset(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  const x = [...a].sort();
  const y = [...b].sort();
  return x.every((value, i) => value === y[i]);
}

function sameSet(a: Iterable<string>, b: Iterable<string>): boolean {
  const x = new Set(a);
  const y = new Set(b);
  if (x.size !== y.size) return false;
  for (const value of x) if (!y.has(value)) return false;
  return true;
}

function numbersOf(text: string): string[] {
  const numbers = [...text.matchAll(DIGITS)].map((m) => m[0].replace(/,/g, ''));
  for (const m of text.matchAll(CJK_NUMERALS)) numbers.push(m[0]);
  for (const m of text.toLowerCase().matchAll(LATIN_WORD)) if (NUMBER_WORDS.has(m[0])) numbers.push(m[0]);
  return numbers;
}

function negationCount(text: string): number {
  let count = 0;
  for (const m of text.toLowerCase().matchAll(LATIN_WORD)) {
    const word = m[0];
    if (NEGATION_WORDS.has(word) || word.endsWith("n't")) count += 1;
  }
  for (const _ of text.matchAll(CJK_NEGATIONS)) count += 1;
  return count;
}

function isSentenceStart(text: string, index: number): boolean {
  let i = index - 1;
  while (i >= 0 && SKIPPABLE_BEFORE_WORD.test(text[i] ?? '')) i -= 1;
  return i < 0 || SENTENCE_BREAK.test(text[i] ?? '');
}

function entitiesOf(text: string): Set<string> {
  const entities = new Set<string>();
  for (const m of text.matchAll(LATIN_WORD)) {
    const word = m[0];
    if (!CAPITALISED.test(word) || word === 'I' || word.startsWith("I'")) continue;
    if (isSentenceStart(text, m.index)) continue;
    entities.add(word.toLowerCase());
  }
  // Paths and code identifiers name things too: `src/a.ts` and `src/b.ts` are different facts.
  const { terms, kinds } = extractKeywords(text, { maxTerms: 64 });
  terms.forEach((term, i) => {
    if (kinds[i] === 'path' || kinds[i] === 'identifier') entities.add(term.toLowerCase());
  });
  return entities;
}

/**
 * Decides whether two near-duplicate facts may be merged: never when they differ in a number ("port 8080"
 * vs "port 3000", also CJK and English number words), in negation ("use pnpm" vs "don't use pnpm"; not, no,
 * never, without, n't, 不, 没, 别 …) or in a named entity (a capitalised word not at a sentence start —
 * "English" vs "Spanish" — or a path or code identifier). Pure; it does not judge similarity itself.
 */
export function canMergeFacts(a: string, b: string): FactMergeVerdict {
  const x = normalise(a);
  const y = normalise(b);
  if (!sameMultiset(numbersOf(x), numbersOf(y))) return { ok: false, reason: 'number' };
  if (negationCount(x) !== negationCount(y)) return { ok: false, reason: 'negation' };
  if (!sameSet(entitiesOf(x), entitiesOf(y))) return { ok: false, reason: 'entity' };
  return { ok: true };
}

/** Tokens for {@link tokenJaccard}: lower-cased words with a plural `s` stripped, and CJK character bigrams. */
export function similarityTokens(text: string): Set<string> {
  const tokens = new Set<string>();
  const normalised = normalise(text).toLowerCase();
  for (const m of normalised.matchAll(/[\p{L}\p{N}]+/gu)) {
    const word = m[0];
    if (/[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u.test(word)) {
      const chars = Array.from(word);
      if (chars.length === 1) tokens.add(word);
      for (let i = 0; i + 1 < chars.length; i += 1) tokens.add(`${chars[i]}${chars[i + 1]}`);
      continue;
    }
    tokens.add(word.length > 3 && word.endsWith('s') && !word.endsWith('ss') ? word.slice(0, -1) : word);
  }
  return tokens;
}

/** Jaccard similarity of the two texts' {@link similarityTokens} (0 when either has none). */
export function tokenJaccard(a: string, b: string): number {
  const x = similarityTokens(a);
  const y = similarityTokens(b);
  if (x.size === 0 || y.size === 0) return 0;
  let shared = 0;
  for (const token of x) if (y.has(token)) shared += 1;
  return shared / (x.size + y.size - shared);
}

/** Cosine similarity of two vectors of the same length (0 when either is all zeros or lengths differ). */
export function cosineSimilarity(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) return 0;
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i += 1) {
    const x = a[i] ?? 0;
    const y = b[i] ?? 0;
    dot += x * y;
    na += x * x;
    nb += y * y;
  }
  if (na === 0 || nb === 0) return 0;
  return dot / Math.sqrt(na * nb);
}
