import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  codePointLength,
  contentHash,
  hasCjk,
  isWellFormedText,
  likeText,
  normalizeContent,
  splitCjkSegments,
  toWellFormedText,
} from './normalize.js';

describe('normalizeContent', () => {
  it('applies NFKC, lower-cases, collapses whitespace and trims', () => {
    expect(normalizeContent('  Hello\t\n  WORLD  ')).toBe('hello world');
    // Full-width letters and digits fold to ASCII under NFKC.
    expect(normalizeContent('ＰＯＲＴ　８０８０')).toBe('port 8080');
    // The ligature ﬁ decomposes.
    expect(normalizeContent('ﬁle')).toBe('file');
  });

  it('keeps CJK text and never throws on lone surrogates', () => {
    expect(normalizeContent(' 数据库  连接池 ')).toBe('数据库 连接池');
    expect(normalizeContent('a\uD800b')).toBe('a\uFFFDb');
  });
});

describe('contentHash', () => {
  it('is the SHA-256 hex of the normalised text', () => {
    const expected = createHash('sha256').update('hello world', 'utf8').digest('hex');
    expect(contentHash('  Hello   World ')).toBe(expected);
    expect(contentHash('hello world')).toMatch(/^[0-9a-f]{64}$/);
  });

  it('treats texts that normalise alike as duplicates and others as different', () => {
    expect(contentHash('Use PNPM')).toBe(contentHash('use   pnpm'));
    expect(contentHash('port 8080')).not.toBe(contentHash('port 3000'));
  });
});

describe('CJK helpers', () => {
  it('detects Han, Hiragana, Katakana and Hangul', () => {
    expect(hasCjk('plain ascii')).toBe(false);
    expect(hasCjk('数据')).toBe(true);
    expect(hasCjk('ひらがな')).toBe(true);
    expect(hasCjk('コーヒー')).toBe(true);
    expect(hasCjk('한국어')).toBe(true);
  });

  it('splits text into CJK and non-CJK segments in order', () => {
    expect(splitCjkSegments('用户getUserById登录')).toEqual([
      { text: '用户', cjk: true },
      { text: 'getUserById', cjk: false },
      { text: '登录', cjk: true },
    ]);
    expect(splitCjkSegments('コーヒー')).toEqual([{ text: 'コーヒー', cjk: true }]);
  });

  it('counts code points, not UTF-16 units', () => {
    expect(codePointLength('𠀀𠀁')).toBe(2);
    expect('𠀀𠀁'.length).toBe(4);
  });

  it('finds and replaces lone surrogates only', () => {
    expect(isWellFormedText('ok 😀')).toBe(true);
    expect(isWellFormedText('bad \uD83D')).toBe(false);
    expect(isWellFormedText('bad \uDE00 x')).toBe(false);
    expect(toWellFormedText('x\uDE00😀')).toBe('x\uFFFD😀');
  });
});

describe('likeText', () => {
  it('is the NFKC form of CJK content when NFKC changes it, else null', () => {
    expect(likeText('ｶﾀｶﾅのメモ')).toBe('カタカナのメモ');
    expect(likeText('⼈⼯智能')).toBe('人工智能');
    expect(likeText('人工智能')).toBeNull();
    // Latin-only content is never scanned by the LIKE path, even when NFKC changes it.
    expect(likeText('ＡＢＣ')).toBeNull();
  });
});
