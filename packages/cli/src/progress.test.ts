import { describe, expect, it } from 'vitest';
import { createProgress } from './progress.js';

function sink(isTTY: boolean): { chunks: string[]; write(text: string): void; isTTY: boolean } {
  const chunks: string[] = [];
  return { chunks, write: (text: string) => void chunks.push(text), isTTY };
}

describe('createProgress', () => {
  it('redraws one bar in place on a terminal and ends it with a newline', () => {
    const tty = sink(true);
    const progress = createProgress(tty, 'embedding');
    progress.update(0, 4);
    progress.update(2, 4);
    progress.update(2, 4);
    progress.update(4, 4);
    progress.finish();
    progress.finish();
    expect(tty.chunks).toHaveLength(4);
    expect(tty.chunks.every((c) => c.startsWith('\r['))).toBe(true);
    expect(tty.chunks[1]).toContain(' 50%  2/4 embedding');
    expect(tty.chunks[3]).toMatch(/100% {2}4\/4 embedding\u001b\[K\n$/);
  });

  it('prints a few plain lines when not a terminal (every quarter)', () => {
    const plain = sink(false);
    const progress = createProgress(plain, 'embedding');
    for (let done = 0; done <= 100; done += 1) progress.update(done, 100);
    progress.finish();
    expect(plain.chunks).toEqual([
      'embedding: 0/100\n',
      'embedding: 25/100\n',
      'embedding: 50/100\n',
      'embedding: 75/100\n',
      'embedding: 100/100\n',
    ]);
  });

  it('adds the final line when the task stopped short, and prints nothing for an empty task', () => {
    const plain = sink(false);
    const short = createProgress(plain, 'embedding');
    short.update(0, 10);
    short.update(3, 10);
    short.finish();
    expect(plain.chunks).toEqual(['embedding: 0/10\n', 'embedding: 3/10\n']);

    const empty = sink(true);
    const none = createProgress(empty, 'embedding');
    none.update(0, 0);
    none.finish();
    expect(empty.chunks).toEqual([]);
  });
});
