import { describe, expect, it } from 'vitest';
import { readLines } from './line-reader.js';

async function* chunks(...parts: (string | Uint8Array)[]): AsyncGenerator<string | Uint8Array> {
  for (const p of parts) yield p;
}

async function all(input: AsyncIterable<string | Uint8Array>, max?: number) {
  const out: [number, string][] = [];
  for await (const line of readLines(input, 'the export', max)) out.push([line.number, line.text]);
  return out;
}

describe('readLines', () => {
  it('cuts lines across chunks: CR-LF, a last line without a break, a character split between chunks', async () => {
    const euro = Buffer.from('€', 'utf8');
    expect(
      await all(chunks('a\r\nb', 'c\n\n', euro.subarray(0, 1), euro.subarray(1), Buffer.from('\nlast'))),
    ).toEqual([
      [1, 'a'],
      [2, 'bc'],
      [3, ''],
      [4, '€'],
      [5, 'last'],
    ]);
  });

  it('refuses a line over the limit as soon as it passes it, naming its number and never its content', async () => {
    let pulled = 0;
    async function* endless(): AsyncGenerator<string> {
      yield 'ok\n';
      for (;;) {
        pulled += 1;
        yield 'x'.repeat(10);
      }
    }
    await expect(all(endless(), 25)).rejects.toMatchObject({
      code: 'ENGRAM_CLI_LINE_TOO_LONG',
      message: 'the export line 2 is longer than 25 bytes (the limit of one line); nothing of it was read',
    });
    // Stopped after the third chunk of the long line: the rest was never read.
    expect(pulled).toBe(3);
    // A line of exactly the limit is a line.
    expect(await all(chunks(`${'y'.repeat(25)}\n`), 25)).toEqual([[1, 'y'.repeat(25)]]);
  });
});
