/**
 * Bounded line input for `engram import` and `engram ingest`: a stream read chunk by chunk and cut into lines,
 * each at most {@link MAX_LINE_BYTES} bytes. A longer line is refused with `ENGRAM_CLI_LINE_TOO_LONG` as soon
 * as its byte count passes the limit, before it is held whole: memory stays within one line's limit plus one
 * chunk, however long the offending line is.
 */
import { EngramCliError } from './errors.js';

/** The longest line an import or events file may hold: 16 MiB of UTF-8 (a memory with its vectors fits). */
export const MAX_LINE_BYTES = 16 * 1024 * 1024;

/** One line of the input: its text (without the line break) and its 1-based number. */
export interface InputLine {
  readonly text: string;
  readonly number: number;
}

const NEWLINE = 0x0a;

/** The refusal of an over-long line, naming its number and the limit (never its content). */
export function lineTooLong(what: string, number: number, maxBytes: number): EngramCliError {
  const limit = maxBytes % (1024 * 1024) === 0 ? `${maxBytes / (1024 * 1024)} MiB` : `${maxBytes} bytes`;
  return new EngramCliError(
    'ENGRAM_CLI_LINE_TOO_LONG',
    `${what} line ${number} is longer than ${limit} (the limit of one line); nothing of it was read`,
  );
}

/**
 * The lines of `input` (a byte or text stream), in order. CR-LF ends a line as LF does; a last line without a
 * line break is a line. Throws {@link lineTooLong} (`what` names the input in it) for a line over `maxBytes`.
 */
export async function* readLines(
  input: AsyncIterable<Uint8Array | string>,
  what: string,
  maxBytes: number = MAX_LINE_BYTES,
): AsyncGenerator<InputLine> {
  const decoder = new TextDecoder('utf-8');
  let parts: Uint8Array[] = [];
  let size = 0;
  let number = 0;
  const finish = (tail: Uint8Array): InputLine => {
    const whole = parts.length === 0 ? tail : Buffer.concat([...parts, tail]);
    parts = [];
    size = 0;
    number += 1;
    let text = decoder.decode(whole);
    if (text.endsWith('\r')) text = text.slice(0, -1);
    return { text, number };
  };
  for await (const chunk of input) {
    let bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
    for (let nl = bytes.indexOf(NEWLINE); nl !== -1; nl = bytes.indexOf(NEWLINE)) {
      if (size + nl > maxBytes) throw lineTooLong(what, number + 1, maxBytes);
      yield finish(bytes.subarray(0, nl));
      bytes = bytes.subarray(nl + 1);
    }
    if (bytes.length > 0) {
      size += bytes.length;
      if (size > maxBytes) throw lineTooLong(what, number + 1, maxBytes);
      // A copy: the stream may reuse its chunk's memory.
      parts.push(Uint8Array.from(bytes));
    }
  }
  if (size > 0) yield finish(new Uint8Array(0));
}
