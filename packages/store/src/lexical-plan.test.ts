import { describe, expect, it } from 'vitest';
import {
  buildMatch,
  codePointWindows,
  escapeLike,
  MAX_LEXICAL_TERMS,
  MAX_TERM_LENGTH,
  MAX_TRIGRAM_WINDOWS,
  planLexicalQuery,
  quoteFts,
} from './lexical-plan.js';

describe('quoting', () => {
  it('quotes every term as an FTS5 string with inner quotes doubled', () => {
    expect(quoteFts('a"b')).toBe('"a""b"');
    expect(quoteFts('NEAR(')).toBe('"NEAR("');
    expect(buildMatch('tok', '"x"')).toBe('agent : "tok" AND content : ("x")');
  });

  it('escapes LIKE wildcards', () => {
    expect(escapeLike('50%_a\\b')).toBe('50\\%\\_a\\\\b');
  });
});

describe('planLexicalQuery routing', () => {
  it('routes latin terms to the word index, CJK ≥3 to trigram, CJK 1–2 to LIKE', () => {
    const plan = planLexicalQuery(['getUserById', '数据库', '连接'], 'any');
    expect(plan.wordsExpr).toBe('"getUserById"');
    expect(plan.trigramExpr).toBe('"数据库"');
    expect(plan.likeTerms).toEqual(['连接']);
    expect(plan.likePatterns).toEqual(['%连接%']);
    expect(plan.droppedTerms).toBe(0);
  });

  it('splits a long CJK term into overlapping 3-grams in any mode and keeps it whole in all mode', () => {
    expect(planLexicalQuery(['数据库连接池'], 'any').trigramExpr).toBe(
      '"数据库" OR "据库连" OR "库连接" OR "连接池"',
    );
    expect(planLexicalQuery(['数据库连接池'], 'all').trigramExpr).toBe('"数据库连接池"');
  });

  it('splits mixed terms into CJK runs and the rest', () => {
    const plan = planLexicalQuery(['用户getUserById'], 'all');
    expect(plan.wordsExpr).toBe('"getUserById"');
    expect(plan.likeTerms).toEqual(['用户']);
  });

  it('joins with OR in any mode and AND in all mode', () => {
    expect(planLexicalQuery(['alpha', 'beta'], 'any').wordsExpr).toBe('"alpha" OR "beta"');
    expect(planLexicalQuery(['alpha', 'beta'], 'all').wordsExpr).toBe('"alpha" AND "beta"');
  });

  it('drops stop words in any mode unless nothing else remains', () => {
    const plan = planLexicalQuery(['the', 'deploy', 'and'], 'any');
    expect(plan.wordsExpr).toBe('"deploy"');
    expect(plan.droppedTerms).toBe(2);
    expect(planLexicalQuery(['AND'], 'any').wordsExpr).toBe('"AND"');
    expect(planLexicalQuery(['the', 'deploy'], 'all').wordsExpr).toBe('"the" AND "deploy"');
  });

  it('drops empty, duplicate and token-less terms and counts them', () => {
    const plan = planLexicalQuery(['', '  ', 'x', 'X', '-', '*'], 'any');
    expect(plan.wordsExpr).toBe('"x"');
    expect(plan.droppedTerms).toBe(5);
  });

  it('keeps FTS5 syntax inside quotes so it is searched literally', () => {
    const plan = planLexicalQuery(['"', 'NEAR(a b)', 'foo:bar', 'x*', 'AND', '-y'], 'any');
    // `"` has no token characters (dropped); `AND` is an English stop word (dropped in any mode).
    expect(plan.wordsExpr).toBe('"NEAR(a b)" OR "foo:bar" OR "x*" OR "-y"');
    expect(plan.droppedTerms).toBe(2);
    expect(planLexicalQuery(['AND', 'NEAR('], 'all').wordsExpr).toBe('"AND" AND "NEAR("');
  });

  it('caps terms at 64 and trigram windows at 32', () => {
    const terms = Array.from({ length: MAX_LEXICAL_TERMS + 6 }, (_, i) => `term${i}`);
    const plan = planLexicalQuery(terms, 'any');
    expect(plan.droppedTerms).toBe(6);
    expect(plan.wordsExpr?.split(' OR ')).toHaveLength(MAX_LEXICAL_TERMS);
    const longCjk = Array.from({ length: 40 }, (_, i) => String.fromCodePoint(0x4e00 + i)).join('');
    const tri = planLexicalQuery([longCjk], 'any').trigramExpr ?? '';
    expect(tri.split(' OR ')).toHaveLength(MAX_TRIGRAM_WINDOWS);
  });

  it('cuts each term to its first 256 code points, so a 1 MB term plans a bounded query', () => {
    const words = 'alpha '.repeat(200_000);
    const plan = planLexicalQuery([words], 'all');
    const phrase = plan.wordsExpr ?? '';
    expect(phrase.length).toBeLessThanOrEqual(MAX_TERM_LENGTH + 2);
    expect(phrase).toBe(`"${'alpha '.repeat(43).slice(0, MAX_TERM_LENGTH).trim()}"`);
    // A million-character CJK run: 254 windows at most before the 32-window cap (no spread of a huge array).
    const cjk = '数据'.repeat(500_000);
    expect(planLexicalQuery([cjk], 'any').trigramExpr?.split(' OR ').length).toBeLessThanOrEqual(
      MAX_TRIGRAM_WINDOWS,
    );
    const all = planLexicalQuery([cjk], 'all').trigramExpr ?? '';
    expect([...all.slice(1, -1)]).toHaveLength(MAX_TERM_LENGTH);
    // Surrogate pairs are never split by the cut.
    const emoji = planLexicalQuery([`${'🔥'.repeat(1000)} x`], 'all').wordsExpr ?? '';
    expect(emoji).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/);
  });

  it('returns no paths for an empty term list', () => {
    const plan = planLexicalQuery([], 'any');
    expect(plan.wordsExpr).toBeNull();
    expect(plan.trigramExpr).toBeNull();
    expect(plan.likeTerms).toEqual([]);
  });

  it('normalises full-width text with NFKC', () => {
    expect(planLexicalQuery(['ＡＰＩ'], 'any').wordsExpr).toBe('"API"');
  });
});

describe('codePointWindows', () => {
  it('windows by code point, returning short strings whole', () => {
    expect(codePointWindows('𠀀𠀁𠀂𠀃', 3)).toEqual(['𠀀𠀁𠀂', '𠀁𠀂𠀃']);
    expect(codePointWindows('ab', 3)).toEqual(['ab']);
  });
});
