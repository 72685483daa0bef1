import { describe, expect, it } from 'vitest';
import { clip, printable } from './terminal-text.js';

const ANY_CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

describe('printable', () => {
  it('replaces every C0 control, DEL and C1 control, however many there are', () => {
    const hostile = '\u001b[2J\u001b]0;title\u0007ok\u009b31m\u007f\u0000\u0085end';
    const safe = printable(hostile);
    expect(safe).not.toMatch(ANY_CONTROL);
    expect(safe).toBe('?[2J?]0;title?ok?31m???end');
  });

  it('keeps line feeds and tabs of multi-line text, and turns CR-LF into a line feed', () => {
    expect(printable('a\tb\r\nc\n\u001b[1md\re', 'lines')).toBe('a\tb\nc\n?[1md?e');
  });

  it('replaces every bidi control (overrides, embeddings, isolates, marks) in both modes', () => {
    const bidi = '\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c';
    const hostile = `id-1\u202Efdp.exe\n${bidi}`;
    expect(printable(hostile)).toBe(`id-1?fdp.exe?${'?'.repeat(12)}`);
    expect(printable(hostile, 'lines')).toBe(`id-1?fdp.exe\n${'?'.repeat(12)}`);
    expect(clip('\u202eabc')).toBe('?abc');
  });

  it('leaves ordinary text alone, CJK and emoji included', () => {
    const text = '用户喜欢简洁的回答 · café 🚀 — “quotes”';
    expect(printable(text)).toBe(text);
    expect(printable(text, 'lines')).toBe(text);
  });
});

describe('clip', () => {
  it('cuts to 40 characters after neutralising every control character', () => {
    const clipped = clip(`\u001b[31m\u001b[0m${'y'.repeat(80)}`);
    expect(clipped).not.toMatch(ANY_CONTROL);
    expect(clipped.length).toBe(40);
    expect(clipped.endsWith('…')).toBe(true);
  });
});
