import { describe, expect, it } from 'vitest';
import { codePointLength, likeText, splitCjkSegments } from './normalize.js';

describe('CJK helpers', () => {
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
