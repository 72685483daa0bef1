import { describe, expect, it } from 'vitest';
import { CJK_CHARACTER, CJK_CLASS_SOURCE, hasCjk } from './cjk.js';

describe('the CJK class', () => {
  it.each([
    ['CJK unified ideograph', '中'],
    ['extension A', '\u3400'],
    ['extension B', '\u{20000}'],
    ['extension C', '\u{2A700}'],
    ['extension G', '\u{30000}'],
    ['compatibility ideograph', '\uF900'],
    ['Kangxi radical', '\u2F00'],
    ['iteration mark 々', '\u3005'],
    ['closing mark 〆', '\u3006'],
    ['ideographic zero 〇', '\u3007'],
    ['hiragana', 'ひ'],
    ['katakana', 'カ'],
    ['half-width katakana', '\uFF76'],
    ['prolonged sound mark', 'ー'],
    ['half-width prolonged sound mark', '\uFF70'],
    ['hangul syllable', '한'],
    ['hangul jamo', '\u1100'],
    ['hangul compatibility jamo', '\u3131'],
  ])('contains %s', (_name, char) => {
    expect(hasCjk(char)).toBe(true);
    expect(CJK_CHARACTER.test(char)).toBe(true);
  });

  it.each([
    ['Latin', 'abc'],
    ['digits', '123'],
    ['ideographic space', '\u3000'],
    ['CJK punctuation', '、。「」'],
    ['full-width Latin', 'ＡＢＣ'],
    ['Cyrillic', 'жизнь'],
    ['emoji', '\u{1F600}'],
    ['empty text', ''],
  ])('does not contain %s', (_name, text) => {
    expect(hasCjk(text)).toBe(false);
  });

  it('finds CJK inside mixed text and keeps no state between calls', () => {
    for (let i = 0; i < 3; i += 1) expect(hasCjk('deploy the 데이터베이스 today')).toBe(true);
    const runs = 'ab漢字cdカナ'.match(new RegExp(`${CJK_CLASS_SOURCE}+`, 'gu'));
    expect(runs).toEqual(['漢字', 'カナ']);
  });

  it('detects Han, Hiragana, Katakana and Hangul words', () => {
    expect(hasCjk('plain ascii')).toBe(false);
    expect(hasCjk('数据')).toBe(true);
    expect(hasCjk('ひらがな')).toBe(true);
    expect(hasCjk('コーヒー')).toBe(true);
    expect(hasCjk('한국어')).toBe(true);
  });
});
