/**
 * The tokenizer's one-pass scanner against the regular-expression tokenizer it replaced (kept here, verbatim in
 * behaviour, as the oracle): every index term, term frequency and query term must be the same for every input,
 * or stored postings and query terms would stop meeting.
 */
import { CJK_CLASS_SOURCE } from '@engram/contracts';
import fc from 'fast-check';
import { stemmer } from 'stemmer';
import { describe, expect, it } from 'vitest';
import {
  forEachIndexWord,
  indexTokens,
  MAX_TOKEN_LENGTH,
  QUERY_STOP_WORDS,
  queryTokens,
  stem,
  termFrequencies,
} from './lexical-tokens.js';

// ---- The previous tokenizer (regular expressions, no stem cache), the oracle.
const CJK_CLASS = CJK_CLASS_SOURCE.slice(1, -1);
const TOKEN_RUN = /[\p{L}\p{N}\p{Co}\p{M}]+/gu;
const CJK_TEST = new RegExp(`[${CJK_CLASS}]`, 'u');
const CJK_SPLIT = new RegExp(`([${CJK_CLASS}]+)|([^${CJK_CLASS}]+)`, 'gu');
const ASCII = /^[\x00-\x7f]*$/;
const ASCII_RUN = /[a-z0-9]+/g;
const MARKS = /\p{M}/gu;

function oracleTokens(text: string, stopWords: ReadonlySet<string> | null): string[] {
  const out: string[] = [];
  const stem = (word: string): string => (word.length <= 2 ? word : stemmer(word));
  const emitWord = (raw: string): void => {
    let word = ASCII.test(raw) ? raw : raw.normalize('NFD').replace(MARKS, '').normalize('NFC');
    if (word.length > MAX_TOKEN_LENGTH) word = [...word].slice(0, MAX_TOKEN_LENGTH).join('');
    if (word.length === 0 || stopWords?.has(word)) return;
    out.push(stem(word));
  };
  const lower = text.normalize('NFKC').toLowerCase();
  if (ASCII.test(lower)) {
    for (const match of lower.matchAll(ASCII_RUN)) {
      const word = match[0].length <= MAX_TOKEN_LENGTH ? match[0] : match[0].slice(0, MAX_TOKEN_LENGTH);
      if (!stopWords?.has(word)) out.push(stem(word));
    }
    return out;
  }
  for (const match of lower.matchAll(TOKEN_RUN)) {
    const run = match[0];
    if (!CJK_TEST.test(run)) {
      emitWord(run);
      continue;
    }
    for (const part of run.matchAll(CJK_SPLIT)) {
      if (part[1] === undefined) {
        emitWord(part[2] ?? '');
        continue;
      }
      const cps = [...part[1]];
      for (const c of cps) out.push(c);
      for (let i = 0; i + 1 < cps.length; i += 1) out.push(`${cps[i]}${cps[i + 1]}`);
    }
  }
  return out;
}

function oracleQuery(term: string, drop: boolean): string[] {
  const all = oracleTokens(term, null);
  if (!drop) return all;
  return all.length === 1 && oracleTokens(term, QUERY_STOP_WORDS).length === 0 ? [] : all;
}

function expectSameAsOracle(text: string): void {
  const expected = oracleTokens(text, null);
  expect(indexTokens(text)).toEqual(expected);
  const seen: string[] = [];
  forEachIndexWord(
    text,
    (word) => seen.push(stem(word)),
    (term) => seen.push(term),
  );
  expect(seen).toEqual(expected);
  const { tf, length } = termFrequencies(text);
  expect(length).toBe(expected.length);
  const counts = new Map<string, number>();
  for (const t of expected) counts.set(t, (counts.get(t) ?? 0) + 1);
  expect([...tf]).toEqual([...counts]);
  for (const drop of [true, false]) expect(queryTokens(text, drop)).toEqual(oracleQuery(text, drop));
}

// Pieces of every kind the tokenizer treats differently.
const PIECES = [
  'the',
  'The',
  'RUNNING',
  'Deploying',
  'caresses',
  'ponies',
  'a',
  'an',
  'is',
  'x',
  'ab',
  'API_v2',
  'k8s',
  'v1.2.3',
  '0x1F',
  '2025-06-01',
  '42',
  'src/app.ts',
  'C:\\Users\\x\\file.txt',
  'a'.repeat(63),
  'b'.repeat(64),
  'c'.repeat(65),
  'longword'.repeat(12),
  'café',
  'CAFÉ',
  'naïve',
  'Ångström',
  'e\u0301',
  'o\u0308\u0323',
  '\u0301lead',
  'İstanbul',
  'straße',
  'ΣΊΣΥΦΟΣ',
  'Ελληνικά',
  'Русский',
  'عربى',
  '١٢٣',
  'हिन्दी',
  '東京',
  '会議の内容',
  '中文内容',
  '한국어',
  'ｶﾀｶﾅ',
  'ヴゔ',
  'ー',
  '〆',
  '々',
  '〇',
  '⼀⼆',
  '𠀀𠀁',
  '𪚥',
  'mixed東京and',
  'English混合text',
  'Ｆｕｌｌｗｉｄｔｈ',
  'ＡＢＣ１２３',
  'ﬁnance',
  'ﬀ',
  'Ⅻ',
  '½',
  '²³',
  '㍻',
  '㋐',
  'Ǆ',
  'ǅ',
  '\u{E000}\u{F8FF}',
  '😀',
  '👩‍👩‍👧',
  '🎉x',
  '\u200d',
  '\ufeff',
  'a\u00adb',
  'é'.repeat(70),
  'ä'.normalize('NFD').repeat(70),
  '東'.repeat(5),
];
const GAPS = [
  ' ',
  '  ',
  '\t',
  '\n',
  '-',
  '.',
  ', ',
  '_',
  '/',
  "'",
  '\u00a0',
  '\u3000',
  '。',
  '「',
  '」',
  '',
  '!?',
];

describe('the one-pass tokenizer', () => {
  it('gives exactly the previous tokenizer’s terms over 5,000 texts mixing scripts, marks, CJK, emoji, digits and paths', () => {
    let seed = 11;
    const random = (): number => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed / 2_147_483_648;
    };
    for (let n = 0; n < 5_000; n += 1) {
      let text = '';
      const words = Math.floor(random() * 14);
      for (let w = 0; w < words; w += 1) {
        text += PIECES[Math.floor(random() * PIECES.length)] as string;
        text += GAPS[Math.floor(random() * GAPS.length)] as string;
      }
      expectSameAsOracle(text);
    }
  }, 120_000);

  it('gives exactly the previous tokenizer’s terms for arbitrary strings', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ unit: 'binary', maxLength: 80 }),
          fc.string({ unit: 'grapheme', maxLength: 40 }),
          fc.string({ unit: fc.constantFrom(...'aZ09 .-/_é\u0301東京ｶ😀ß'.split('')), maxLength: 60 }),
        ),
        (text) => expectSameAsOracle(text),
      ),
      { numRuns: 3_000, seed: 20_251_202 },
    );
  }, 120_000);

  it('cuts ASCII words at 64 characters and stems what is left', () => {
    expect(indexTokens(`${'a'.repeat(70)}ing Running`)).toEqual(['a'.repeat(64), 'run']);
    expect(indexTokens('')).toEqual([]);
    expect(indexTokens('... --- !!!')).toEqual([]);
  });
});
