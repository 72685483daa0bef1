import { EngramEvalError } from '../errors.js';

function bad(message: string): EngramEvalError {
  return new EngramEvalError('ENGRAM_EVAL_INVALID_DATASET', `String list literal: ${message}`);
}

const SIMPLE_ESCAPES: Readonly<Record<string, string>> = {
  '\\': '\\',
  "'": "'",
  '"': '"',
  n: '\n',
  t: '\t',
  r: '\r',
  a: '\x07',
  b: '\b',
  f: '\f',
  v: '\v',
  '0': '\0',
  '\n': '',
};

/**
 * Parses a list of string literals as Python (or NumPy, which separates items by whitespace instead of
 * commas) prints them: `['a', "b's"]` or `['a'\n 'b']`. Handles single and double quotes and the
 * escapes `\\ \' \" \n \t \r \xHH \uHHHH \UHHHHHHHH`. Each literal is one item.
 */
export function parsePythonStringList(text: string): string[] {
  const items: string[] = [];
  let i = 0;
  const skip = (): void => {
    while (i < text.length && /[\s,]/.test(text[i] as string)) i += 1;
  };
  skip();
  if (text[i] !== '[') throw bad('expected "[".');
  i += 1;
  for (;;) {
    skip();
    if (i >= text.length) throw bad('unterminated list.');
    if (text[i] === ']') {
      i += 1;
      break;
    }
    if (text[i] === 'u' || text[i] === 'U') i += 1;
    const quote = text[i];
    if (quote !== "'" && quote !== '"') throw bad(`unexpected character at offset ${i}.`);
    i += 1;
    let value = '';
    for (;;) {
      if (i >= text.length) throw bad('unterminated string.');
      const ch = text[i] as string;
      if (ch === quote) {
        i += 1;
        break;
      }
      if (ch !== '\\') {
        value += ch;
        i += 1;
        continue;
      }
      const next = text[i + 1];
      if (next === undefined) throw bad('dangling escape.');
      const simple = SIMPLE_ESCAPES[next];
      if (simple !== undefined) {
        value += simple;
        i += 2;
        continue;
      }
      const width = next === 'x' ? 2 : next === 'u' ? 4 : next === 'U' ? 8 : 0;
      const hex = text.slice(i + 2, i + 2 + width);
      if (width > 0 && /^[0-9a-fA-F]+$/.test(hex) && hex.length === width) {
        value += String.fromCodePoint(Number.parseInt(hex, 16));
        i += 2 + width;
        continue;
      }
      // Python keeps unknown escapes verbatim.
      value += `\\${next}`;
      i += 2;
    }
    items.push(value);
  }
  skip();
  if (i !== text.length) throw bad('trailing characters after the list.');
  return items;
}
