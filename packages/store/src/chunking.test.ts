import { describe, expect, it } from 'vitest';
import { CHUNK_BUDGET, CHUNK_OVERLAP, chunkSpans } from './chunking.js';

function sentences(n: number, prefix = 'Sentence'): string {
  return Array.from({ length: n }, (_, i) => `${prefix} number ${i} talks about topic ${i * 7}.`).join(' ');
}

function checkCover(content: string): void {
  const spans = chunkSpans(content);
  expect(spans[0]?.start).toBe(0);
  expect(spans[spans.length - 1]?.end).toBe(content.length);
  for (const [i, s] of spans.entries()) {
    expect(s.index).toBe(i);
    expect(s.end - s.start).toBeLessThanOrEqual(CHUNK_BUDGET);
    expect(s.end).toBeGreaterThan(s.start);
    const next = spans[i + 1];
    if (next !== undefined) {
      // Each chunk reaches back into the previous one (overlap), and never starts before it.
      expect(next.start).toBeGreaterThan(s.start);
      expect(next.start).toBeLessThan(s.end);
      expect(s.end - next.start).toBeLessThanOrEqual(CHUNK_OVERLAP);
    }
  }
}

describe('chunking long content', () => {
  it('keeps content within the budget as one chunk covering it', () => {
    expect(chunkSpans('short memory')).toEqual([{ index: 0, start: 0, end: 12 }]);
    const exact = 'x'.repeat(CHUNK_BUDGET);
    expect(chunkSpans(exact)).toEqual([{ index: 0, start: 0, end: CHUNK_BUDGET }]);
  });

  it('splits long English text into overlapping chunks that end at sentence ends', () => {
    const text = sentences(120);
    const spans = chunkSpans(text);
    expect(spans.length).toBeGreaterThan(5);
    checkCover(text);
    for (const s of spans.slice(0, -1)) expect(text.slice(s.start, s.end)).toMatch(/\.\s?$/u);
    // A chunk starts at a word, not inside one.
    for (const s of spans.slice(1)) expect(text[s.start - 1]).toMatch(/\s/u);
  });

  it('prefers paragraph breaks, then line breaks', () => {
    const para = `${sentences(14)}\n\n${sentences(30, 'Later')}`;
    const first = chunkSpans(para)[0];
    expect(para.slice(first?.start, first?.end).endsWith('\n\n')).toBe(true);
    const lines = Array.from({ length: 60 }, (_, i) => `line ${i}: value ${i * 3}. more words here`).join(
      '\n',
    );
    for (const s of chunkSpans(lines).slice(0, -1)) expect(lines[s.end - 1]).toBe('\n');
    checkCover(lines);
  });

  it('cuts CJK text at 。！？ and never splits a surrogate pair', () => {
    const zh = Array.from({ length: 200 }, (_, i) => `第${i}句话讨论了会议的安排和结果。`).join('');
    const spans = chunkSpans(zh);
    checkCover(zh);
    for (const s of spans.slice(0, -1)) expect(zh[s.end - 1]).toBe('。');
    const emoji = '😀'.repeat(1500);
    for (const s of chunkSpans(emoji)) {
      expect(s.start % 2).toBe(0);
      expect(s.end % 2).toBe(0);
    }
    checkCover(emoji);
  });

  it('cuts text without any boundary at the budget', () => {
    const blob = 'a'.repeat(5000);
    const spans = chunkSpans(blob);
    checkCover(blob);
    expect(spans[0]).toEqual({ index: 0, start: 0, end: CHUNK_BUDGET });
  });
});
