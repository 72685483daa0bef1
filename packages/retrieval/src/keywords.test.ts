import { describe, expect, it } from 'vitest';
import { extractKeywords } from './keywords.js';

describe('extractKeywords', () => {
  it('extracts paths (with their basename), identifiers and words, in priority order', () => {
    const result = extractKeywords('How does getUserName work in src/auth/login.ts?');
    expect(result.terms).toEqual([
      'src/auth/login.ts',
      'login.ts',
      'getUserName',
      'how',
      'does',
      'work',
      'in',
    ]);
    expect(result.kinds).toEqual(['path', 'path', 'identifier', 'word', 'word', 'word', 'word']);
    expect(result.dropped).toBe(0);
  });

  it('recognises relative and home paths, snake_case, dotted names, kebab-case and versions', () => {
    const { terms, kinds } = extractKeywords(
      'open ./x and ~/.config/y then call parse_config os.path.join pre-commit 1.2.3',
    );
    expect(terms).toEqual([
      './x',
      '~/.config/y',
      'parse_config',
      'os.path.join',
      'pre-commit',
      '1.2.3',
      'open',
      'and',
      'then',
      'call',
    ]);
    expect(kinds).toEqual([
      'path',
      'path',
      'identifier',
      'identifier',
      'identifier',
      'identifier',
      'word',
      'word',
      'word',
      'word',
    ]);
  });

  it('keeps CJK runs whole and separates them from Latin text in the same chunk', () => {
    const { terms, kinds } = extractKeywords('使用pnpm安装依赖，数据库备份');
    expect(terms).toEqual(['使用', '安装依赖', '数据库备份', 'pnpm']);
    expect(kinds).toEqual(['cjk', 'cjk', 'cjk', 'word']);
  });

  it('keeps Japanese iteration and prolonged-sound marks inside a run', () => {
    expect(extractKeywords('人々のサーバー').terms).toEqual(['人々のサーバー']);
  });

  it('lower-cases words, deduplicates case-insensitively and folds full-width forms', () => {
    expect(extractKeywords('Redis redis REDIS ＲＥＤＩＳ').terms).toEqual(['redis']);
    expect(extractKeywords('HTTPServer httpserver').terms).toEqual(['HTTPServer']);
  });

  it('strips sentence punctuation around terms but keeps FTS5 operators as plain words', () => {
    expect(extractKeywords('Is it "NEAR(a b)" AND -x* or col:val?').terms).toEqual([
      'is',
      'it',
      'near',
      'a',
      'b',
      'and',
      'x',
      'or',
      'col',
      'val',
    ]);
  });

  it('returns no terms for empty or punctuation-only queries', () => {
    expect(extractKeywords('').terms).toEqual([]);
    expect(extractKeywords('   ?!… ——  ').terms).toEqual([]);
    expect(extractKeywords('"*" - : (').terms).toEqual([]);
  });

  it('bounds the number of terms, dropping words before paths and identifiers', () => {
    const words = Array.from({ length: 40 }, (_, i) => `word${i}`).join(' ');
    const result = extractKeywords(`${words} src/main.ts fooBar`, { maxTerms: 32 });
    expect(result.terms).toHaveLength(32);
    expect(result.terms.slice(0, 3)).toEqual(['src/main.ts', 'main.ts', 'fooBar']);
    expect(result.terms.at(-1)).toBe('word28');
    expect(result.dropped).toBe(43 - 32);
    expect(extractKeywords(words).terms).toHaveLength(32);
  });

  it('rejects an out-of-range maxTerms', () => {
    expect(() => extractKeywords('a', { maxTerms: 0 })).toThrow(
      expect.objectContaining({ code: 'ENGRAM_RETRIEVAL_INVALID_INPUT' }),
    );
    expect(() => extractKeywords('a', { maxTerms: 65 })).toThrow(
      expect.objectContaining({ code: 'ENGRAM_RETRIEVAL_INVALID_INPUT' }),
    );
  });
});
