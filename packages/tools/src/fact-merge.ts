/**
 * The fact-merge guard and the similarity measures `memory_remember` uses to find near duplicates
 * (near duplicates merge, but never across a number, a negation or a named entity).
 */
import { hasCjk } from '@engram/contracts/rules';
import { extractKeywords } from '@engram/retrieval';

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
const CJK_NUMERAL_CHARS = '零〇一二三四五六七八九十百千万亿两';
const CJK_NUMERALS = new RegExp(`[${CJK_NUMERAL_CHARS}]+`, 'g');
const CJK_NEGATION_CHARS = '禁止不没別别无無非未勿莫';
const CJK_NEGATIONS = /禁止|不|没|別|别|无|無|非|未|勿|莫/g;
// Characters that carry content in CJK text: the CJK class minus Hiragana, which is mostly grammar.
// check-shape: not the CJK rule — one script of it (Hiragana), excluded from the content characters.
const HIRAGANA = /\p{Script=Hiragana}/u;
// Chinese structural particles, copulas, pronouns, auxiliaries and classifiers: rewording them changes nothing.
const CJK_FUNCTION_CHARS: ReadonlySet<string> = new Set([
  ...'的了着过地得之是在和与及或也都就很把被对个这那吗呢吧啊呀么其而且并还又所为于从向给让已经会要能可以该应当请',
  ...CJK_NUMERAL_CHARS,
  ...CJK_NEGATION_CHARS,
]);
const LATIN_WORD = /[\p{L}\p{N}]+(?:'[\p{L}]+)?/gu;
const LATIN_RUN = /\p{Script=Latin}[\p{Script=Latin}\p{N}]+/gu;
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
  // In CJK text a Latin word is a name or a term (`使用 pnpm`, `部署到 AWS`), whatever its case.
  if (hasCjk(text)) {
    for (const m of text.matchAll(LATIN_RUN)) entities.add(m[0].toLowerCase());
  }
  for (const m of text.matchAll(LATIN_WORD)) {
    const word = m[0];
    if (hasCjk(word)) continue;
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

/** The content characters of CJK text (see {@link canMergeFacts}); empty for text without CJK. */
function cjkContentOf(text: string): Set<string> {
  const chars = new Set<string>();
  for (const char of text) {
    if (hasCjk(char) && !HIRAGANA.test(char) && !CJK_FUNCTION_CHARS.has(char)) chars.add(char);
  }
  return chars;
}

function lowerWords(text: string): Set<string> {
  return new Set(Array.from(text.toLowerCase().matchAll(LATIN_WORD), (m) => m[0]));
}

/** True when the entity sets differ in a name that is not merely re-cased in the other text. */
function entitiesDiffer(x: string, y: string): boolean {
  const ex = entitiesOf(x);
  const ey = entitiesOf(y);
  if (sameSet(ex, ey)) return false;
  const wx = lowerWords(x);
  const wy = lowerWords(y);
  for (const entity of ex) if (!ey.has(entity) && !wy.has(entity)) return true;
  for (const entity of ey) if (!ex.has(entity) && !wx.has(entity)) return true;
  return false;
}

/**
 * Decides whether two near-duplicate facts may be merged: never when they differ in a number ("port 8080"
 * vs "port 3000", also CJK and English number words), in negation ("use pnpm" vs "don't use pnpm"; not, no,
 * never, without, n't, 不, 没, 别 …) or in a named entity: in Latin text a capitalised word not at a sentence
 * start ("English" vs "Spanish"; a word merely re-cased in the other fact does not count), a path or a code
 * identifier; in CJK text any Latin word ("使用 pnpm" vs "使用 yarn"), and — as CJK has no capitals to tell a
 * name from a word — any content character (Han, Katakana, Hangul; particles such as 的 了 是 excluded), so
 * "用户偏好英语" and "用户偏好西班牙语" stay apart. Conservative by design: a wrongly kept pair is a harmless
 * duplicate, a wrong merge loses a fact. Pure; it does not judge similarity itself.
 */
export function canMergeFacts(a: string, b: string): FactMergeVerdict {
  const x = normalise(a);
  const y = normalise(b);
  if (!sameMultiset(numbersOf(x), numbersOf(y))) return { ok: false, reason: 'number' };
  if (negationCount(x) !== negationCount(y)) return { ok: false, reason: 'negation' };
  if (entitiesDiffer(x, y)) return { ok: false, reason: 'entity' };
  if (!sameSet(cjkContentOf(x), cjkContentOf(y))) return { ok: false, reason: 'entity' };
  return { ok: true };
}

/** What makes two facts contradict: the value that differs (see {@link contradiction}). */
export type ContradictionReason = FactMergeBlock;

function subjectWords(text: string): string[] {
  const entities = new Set<string>();
  // A path or identifier names one thing: none of its words is part of the subject.
  for (const entity of entitiesOf(text)) {
    for (const m of entity.matchAll(LATIN_WORD)) entities.add(m[0]);
  }
  const words: string[] = [];
  for (const m of text.toLowerCase().matchAll(LATIN_WORD)) {
    const word = m[0];
    if (/\d/.test(word) || NUMBER_WORDS.has(word) || NEGATION_WORDS.has(word) || word.endsWith("n't"))
      continue;
    if (entities.has(word)) continue;
    words.push(word.length > 3 && word.endsWith('s') && !word.endsWith('ss') ? word.slice(0, -1) : word);
  }
  return words;
}

/**
 * Whether a new fact contradicts an existing one: they say something about the same subject — the same words
 * once the values (numbers, negations, named entities, paths and identifiers) are set aside, at least two of
 * them — and differ in one of those values ("the API listens on port 8080" / "… 9090"; "use pnpm" / "don't
 * use pnpm"). Facts about another subject ("the web API listens on port 8080" / "the admin API listens on port
 * 9090") never contradict. Text with CJK is never judged (no reliable subject without word boundaries): a
 * missed contradiction keeps two facts, a wrong one would retire a fact. Returns the reason, or null.
 */
export function contradiction(existing: string, incoming: string): ContradictionReason | null {
  const x = normalise(existing);
  const y = normalise(incoming);
  if (hasCjk(x) || hasCjk(y)) return null;
  const verdict = canMergeFacts(x, y);
  if (verdict.ok) return null;
  const a = subjectWords(x);
  const b = subjectWords(y);
  if (a.length < 2 || !sameSet(a, b)) return null;
  return verdict.reason;
}

/** Tokens for {@link tokenJaccard}: lower-cased words with a plural `s` stripped, and CJK character bigrams. */
export function similarityTokens(text: string): Set<string> {
  const tokens = new Set<string>();
  const normalised = normalise(text).toLowerCase();
  for (const m of normalised.matchAll(/[\p{L}\p{N}]+/gu)) {
    const word = m[0];
    if (hasCjk(word)) {
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
