/**
 * fast-check arbitraries of the hostile input classes that reach the `engram` CLI and its MCP server:
 * timestamps outside the range of a JavaScript Date, terminal control sequences in stored text, and
 * malformed JSON-RPC messages, each paired with the JSON-RPC error code a conforming server answers.
 */
import fc from 'fast-check';

/** JSON tokens for `createdAt` that no entry point may accept (JSON text, as written in a file). */
export const badTimestampToken: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '8640000000000001',
    '-8640000000000001',
    '9007199254740993',
    '1e16',
    '1e308',
    '1e400',
    '-1e400',
    '-1',
    '1.5',
    '0.1',
    'null',
    'true',
    '"1700000000000"',
    '"2024-01-01T00:00:00Z"',
    '[]',
    '{}',
  ),
  fc.bigInt({ min: 8_640_000_000_000_001n, max: 10n ** 30n }).map(String),
  fc.bigInt({ min: -(10n ** 30n), max: -1n }).map(String),
  fc
    .double({ min: 1, max: 1e15, noNaN: true })
    .filter((n) => !Number.isInteger(n))
    .map(String),
);

/** `createdAt` values at the edges of the range, which must be accepted and rendered. */
export const edgeTimestamp: fc.Arbitrary<number> = fc.oneof(
  fc.constantFrom(0, 1, 8_640_000_000_000_000, 8_639_999_999_999_999),
  fc.integer({ min: 0, max: 2 ** 52 }).map((n) => Math.min(n * 1000, 8_640_000_000_000_000)),
);

/** Sequences that act on a terminal when printed raw: clipboard, title, colours, cursor, C1 forms. */
const CONTROL_SEQUENCES = [
  '\u001b]52;c;cm0gLXJmIH4vCg==\u0007', // OSC 52: set the clipboard
  '\u001b]52;c;ZWNobyBwd25lZA==\u001b\\', // OSC 52 ended by ST
  '\u001b]0;pwned title\u0007', // window title
  '\u001b]2;title\u001b\\',
  '\u001b[31m', // red
  '\u001b[38;5;196;48;5;21m',
  '\u001b[2J\u001b[H', // clear screen, cursor home
  '\u001b[1A\u001b[2K', // cursor up, erase line
  '\u001b[?1049h', // alternate screen
  '\u001bP1$r\u001b\\', // DCS
  '\u009b31m', // C1 CSI
  '\u009d52;c;cHduZWQ=\u009c', // C1 OSC ... ST
  '\u0007', // BEL
  '\b\b\b', // backspaces
  '\rOVERWRITTEN', // carriage return
  '\u007f', // DEL
  '\u0085', // NEL
];

/** A text carrying one to three control sequences between words. */
export const controlPayload: fc.Arbitrary<string> = fc
  .tuple(
    fc.array(fc.constantFrom(...CONTROL_SEQUENCES), { minLength: 1, maxLength: 3 }),
    fc.constantFrom('plain', 'café', '会议', 'note'),
  )
  .map(([sequences, word]) => `${word} ${sequences.join(` ${word} `)} end`);

/** True when text holds a control character other than line feed and tab (what a terminal acts on). */
export function hasTerminalControl(text: string): boolean {
  return /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/.test(text);
}

/** JSON-RPC error codes of the malformed-message classes. */
export type JsonRpcErrorCode = -32700 | -32600 | -32602;

/** One malformed line and the error a conforming server answers it with (`id`: the id it must echo). */
export interface MalformedMessage {
  readonly line: string;
  readonly code: JsonRpcErrorCode;
  readonly id: number | null;
  readonly kind: string;
}

const notPlainObject = fc
  .jsonValue({ maxDepth: 2 })
  .filter((v) => typeof v !== 'object' || v === null || Array.isArray(v));

/** A malformed message, built around a fresh request id. */
export function malformedMessage(id: number): fc.Arbitrary<MalformedMessage> {
  const valid = JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/list' });
  const call = (args: unknown): string =>
    JSON.stringify({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name: 'memory_search', arguments: args },
    });
  return fc.oneof(
    fc
      .integer({ min: 1, max: valid.length - 1 })
      .map((n) => ({ line: valid.slice(0, n), code: -32700 as const, id: null, kind: 'truncated' })),
    fc
      .string({ minLength: 1, maxLength: 40 })
      .filter((s) => !s.includes('\n') && s.trim() !== '' && !parses(s))
      .map((line) => ({ line, code: -32700 as const, id: null, kind: 'not JSON' })),
    notPlainObject.map((v) => ({
      line: JSON.stringify(Array.isArray(v) ? [v] : v),
      code: -32600 as const,
      id: null,
      kind: 'batch or not an object',
    })),
    fc.constantFrom(undefined, '1.0', '2', 2, null, '2.0 ', '').map((jsonrpc) => ({
      line: JSON.stringify({ jsonrpc, id, method: 'ping' }),
      code: -32600 as const,
      id,
      kind: 'wrong jsonrpc',
    })),
    fc.constant({
      line: JSON.stringify({ jsonrpc: '2.0', id: null, method: 'ping' }),
      code: -32600 as const,
      id: null,
      kind: 'id null',
    }),
    fc.oneof(notPlainObject, fc.constant([1, 2])).map((params) => ({
      line: JSON.stringify({ jsonrpc: '2.0', id, method: 'ping', params }),
      code: -32600 as const,
      id,
      kind: 'params not an object',
    })),
    fc
      .oneof(
        fc.string({ maxLength: 20 }),
        fc.integer(),
        fc.array(fc.string(), { maxLength: 3 }),
        fc.constant(null),
      )
      .map((args) => ({ line: call(args), code: -32602 as const, id, kind: 'arguments not an object' })),
  );
}

function parses(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
