import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  contentHash,
  hasControlCharacter,
  isWellFormedText,
  normalizeContent,
  toWellFormedText,
} from './text.js';

describe('text rules', () => {
  it('normalises with NFKC, lower case and collapsed whitespace', () => {
    expect(normalizeContent('  Ｈｅｌｌｏ\t\n  WORLD  ')).toBe('hello world');
    expect(normalizeContent('ｶﾀｶﾅ')).toBe('カタカナ');
  });

  it('hashes the normalised text, so spelling variants share one hash', () => {
    const expected = createHash('sha256').update('hello world', 'utf8').digest('hex');
    expect(contentHash('Hello   World')).toBe(expected);
    expect(contentHash('ＨＥＬＬＯ world ')).toBe(expected);
    expect(contentHash('hello world!')).not.toBe(expected);
  });

  it('never throws on lone surrogates: they hash as U+FFFD', () => {
    expect(isWellFormedText('a\uD800b')).toBe(false);
    expect(isWellFormedText('a\u{1F600}b')).toBe(true);
    expect(toWellFormedText('a\uD800b\uDC00')).toBe('a\uFFFDb\uFFFD');
    expect(contentHash('x\uD800')).toBe(contentHash('x\uFFFD'));
  });

  it('gives every text the hash of the plain formula (NFKC, lower case, whitespace runs collapsed, trimmed)', () => {
    const reference = (text: string): string =>
      createHash('sha256')
        .update(
          text
            .replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD')
            .normalize('NFKC')
            .toLowerCase()
            .replace(/\s+/gu, ' ')
            .trim(),
          'utf8',
        )
        .digest('hex');
    const texts = [
      'one space between words',
      ' leading and trailing ',
      'two  spaces',
      'tab\there',
      'line\nbreak',
      'no-break\u00a0space',
      'ideographic\u3000space',
      'line\u2028separator',
      'nel\u0085char',
      'lone \uD800 surrogate',
      '',
      ' ',
      '日本語 テキスト',
    ];
    for (const text of texts) expect(contentHash(text)).toBe(reference(text));
  });

  it('detects control characters, NUL and DEL included, but not tab-free text', () => {
    expect(hasControlCharacter('a\u0000')).toBe(true);
    expect(hasControlCharacter('a\u007f')).toBe(true);
    expect(hasControlCharacter('a\u0085')).toBe(false);
    expect(hasControlCharacter('plain text')).toBe(false);
  });

  // The store's former copies of these rules carried the assertions below; they hold for the shared rule.
  it('folds full-width forms and ligatures, keeps CJK text and replaces lone surrogates', () => {
    expect(normalizeContent('ＰＯＲＴ　８０８０')).toBe('port 8080');
    expect(normalizeContent('ﬁle')).toBe('file');
    expect(normalizeContent(' 数据库  连接池 ')).toBe('数据库 连接池');
    expect(normalizeContent('a\uD800b')).toBe('a\uFFFDb');
  });

  it('hashes as lower-case SHA-256 hex, equal exactly for texts that normalise alike', () => {
    const expected = createHash('sha256').update('hello world', 'utf8').digest('hex');
    expect(contentHash('  Hello   World ')).toBe(expected);
    expect(contentHash('hello world')).toMatch(/^[0-9a-f]{64}$/);
    expect(contentHash('Use PNPM')).toBe(contentHash('use   pnpm'));
    expect(contentHash('port 8080')).not.toBe(contentHash('port 3000'));
  });

  it('finds and replaces lone surrogates only', () => {
    expect(isWellFormedText('ok 😀')).toBe(true);
    expect(isWellFormedText('bad \uD83D')).toBe(false);
    expect(isWellFormedText('bad \uDE00 x')).toBe(false);
    expect(toWellFormedText('x\uDE00😀')).toBe('x\uFFFD😀');
  });
});
