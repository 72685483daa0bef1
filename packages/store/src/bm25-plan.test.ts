import { describe, expect, it } from 'vitest';
import { MAX_PHRASES, planBm25Query } from './bm25-plan.js';
import { indexTokens, queryTokens } from './lexical-tokens.js';

describe('the BM25 tokenizer', () => {
  it('indexes CJK runs as unigrams plus bigrams and words Porter-stemmed, lower-cased, diacritics folded', () => {
    expect(indexTokens('API网关超时 Deploying Café')).toEqual([
      'api',
      '网',
      '关',
      '超',
      '时',
      '网关',
      '关超',
      '超时',
      'deploi',
      'cafe',
    ]);
  });

  it('keeps stop words in the index and drops a lone stop word from a query', () => {
    expect(indexTokens('what is the plan')).toEqual(['what', 'is', 'the', 'plan']);
    expect(queryTokens('what', true)).toEqual([]);
    expect(queryTokens('plan', true)).toEqual(['plan']);
    // Words inside a path or identifier are never dropped.
    expect(queryTokens('src/the/a.ts', true)).toEqual(['src', 'the', 'a', 'ts']);
  });
});

describe('the BM25 tokenizer on plain ASCII text', () => {
  it('gives the terms the general path gives (a non-ASCII word appended forces that path)', () => {
    let seed = 7;
    const random = (): number => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed / 2_147_483_648;
    };
    const pieces = [
      'the',
      'Deploying',
      'cafe',
      'x',
      'ab',
      'API_v2',
      'src/app.ts',
      '42',
      'a'.repeat(70),
      'is',
    ];
    const gaps = [' ', '  ', '\t', '-', '.', ', ', '\n', '_', '/', "'"];
    for (let n = 0; n < 300; n += 1) {
      let text = '';
      const words = 1 + Math.floor(random() * 12);
      for (let w = 0; w < words; w += 1) {
        text += pieces[Math.floor(random() * pieces.length)] as string;
        text += gaps[Math.floor(random() * gaps.length)] as string;
      }
      expect(indexTokens(`${text} é`)).toEqual([...indexTokens(text), 'e']);
      for (const drop of [true, false]) {
        expect(queryTokens(`${text} é`, drop).slice(0, -1)).toEqual(
          queryTokens(text, drop).length === 0 && drop ? queryTokens(text, false) : queryTokens(text, drop),
        );
      }
    }
  });
});

describe('planBm25Query', () => {
  it('makes single words free terms and drops stop words unless nothing else remains', () => {
    const plan = planBm25Query(['When', 'did', 'Caroline', 'go', 'to', 'the', 'support', 'group']);
    expect(plan.terms.map((t) => t.term)).toEqual(['carolin', 'go', 'support', 'group']);
    expect(plan.terms.every((t) => t.role.kind === 'free')).toBe(true);
    expect(plan.droppedTerms).toBe(4);
    expect(planBm25Query(['the']).terms.map((t) => t.term)).toEqual(['the']);
  });

  it('turns multi-word terms into quoted phrases whose words count only with the phrase', () => {
    const plan = planBm25Query(['src/auth/login.ts', 'x" OR "y']);
    expect(plan.phrases).toEqual(['"src/auth/login.ts"', '"x"" OR ""y"']);
    expect(
      plan.terms.filter((t) => t.role.kind === 'phrase' && t.role.phrase === 0).map((t) => t.term),
    ).toEqual(['src', 'auth', 'login', 'ts']);
  });

  it('matches 1–2 character CJK terms exactly and long CJK runs by bigrams, scored with unigrams', () => {
    const short = planBm25Query(['登录', '池']);
    expect(short.terms).toEqual([
      { term: '登录', role: { kind: 'free' } },
      { term: '池', role: { kind: 'free' } },
    ]);
    expect(short.shortCjkTerms).toEqual(['登录', '池']);
    const long = planBm25Query(['连接池']);
    expect(long.usesLongCjk).toBe(true);
    expect(long.terms).toEqual([
      { term: '连', role: { kind: 'score' } },
      { term: '接', role: { kind: 'score' } },
      { term: '池', role: { kind: 'score' } },
      { term: '连接', role: { kind: 'free' } },
      { term: '接池', role: { kind: 'free' } },
    ]);
  });

  it('bounds the phrases it checks and rejects non-string terms', () => {
    const many = Array.from({ length: MAX_PHRASES + 3 }, (_, i) => `a${i}_b${i}`);
    expect(planBm25Query(many).phrases).toHaveLength(MAX_PHRASES);
    expect(() => planBm25Query([1 as unknown as string])).toThrow();
  });
});
