import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  contentHash,
  contentHashOfNfkc,
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

  it('gives the plain formula’s hash through the ASCII shortcut and from an NFKC form, for every mix of whitespace', () => {
    const reference = (text: string): string =>
      createHash('sha256')
        .update(text.normalize('NFKC').toLowerCase().replace(/\s+/gu, ' ').trim(), 'utf8')
        .digest('hex');
    const pieces = ['A', 'b', 'Zz', '9', '.', 'é', 'Ｆ', 'ﬁ', '東', '😀', 'e\u0301', 'İ', 'ß', 'ｶ'];
    const gaps = [
      ' ',
      '  ',
      '\t',
      '\n',
      '\r\n',
      '\v',
      '\f',
      '\u001c',
      '\u001f',
      '\u0085',
      '\u00a0',
      '\u3000',
      '\u2028',
      '\ufeff',
      '',
    ];
    let seed = 5;
    const random = (): number => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed / 2_147_483_648;
    };
    for (let n = 0; n < 3_000; n += 1) {
      let text = '';
      const parts = Math.floor(random() * 10);
      // Half the texts stay ASCII, so the ASCII whitespace check is exercised as much as the general one.
      const ascii = n % 2 === 0;
      for (let p = 0; p < parts; p += 1) {
        const pool = ascii ? pieces.slice(0, 5) : pieces;
        const gapPool = ascii ? gaps.slice(0, 9) : gaps;
        text += gapPool[Math.floor(random() * gapPool.length)] as string;
        text += pool[Math.floor(random() * pool.length)] as string;
      }
      const expected = reference(text);
      expect(contentHash(text)).toBe(expected);
      expect(contentHashOfNfkc(text.normalize('NFKC'))).toBe(expected);
    }
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
