/**
 * A strict stdio transport for the MCP server: newline-delimited JSON-RPC 2.0 over a byte stream, where every
 * malformed message gets an error response instead of silence, so a client never hangs:
 *
 * - a line that is not JSON: -32700 (parse error);
 * - a batch array, a non-object, a wrong or missing `jsonrpc`, a request `id` that is null or not a string or
 *   integer, `params` that are not an object: -32600 (invalid request);
 * - `tools/call` whose `name` is not a string or whose `arguments` are not an object: -32602 (invalid params);
 * - any request but `initialize` and `ping` before `initialize`: -32002 (server not initialized);
 * - a line longer than {@link MAX_MCP_LINE_BYTES}: -32600, the rest of that line is skipped and the server
 *   keeps reading.
 *
 * Error messages are one fixed line; they never echo the client's input.
 */
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { type JSONRPCMessage, JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js';

/** The longest input line (one JSON-RPC message) the server reads: 4 MiB. */
export const MAX_MCP_LINE_BYTES = 4 * 1024 * 1024;

/** JSON-RPC error codes the transport answers with. */
export const MCP_ERROR = {
  parse: -32700,
  invalidRequest: -32600,
  invalidParams: -32602,
  notInitialized: -32002,
} as const;

type Id = string | number | null;

const FIXED_TEXT: Readonly<Record<number, string>> = {
  [-32700]: 'not valid JSON',
  [-32600]: 'invalid request',
  [-32601]: 'method not found',
  [-32602]: 'invalid params',
  [-32603]: 'internal error',
};

/** The id to answer with: the message's own when it is a valid request id, else null. */
function idOf(message: Record<string, unknown>): Id {
  const id = message.id;
  return typeof id === 'string' || (typeof id === 'number' && Number.isInteger(id)) ? id : null;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The first problem of one decoded line, as [code, message, id], or null when the SDK may have it. */
function problemOf(value: unknown, initialized: boolean): [number, string, Id] | null {
  if (Array.isArray(value)) return [MCP_ERROR.invalidRequest, 'batch requests are not supported', null];
  if (!isPlainObject(value)) return [MCP_ERROR.invalidRequest, 'a message must be a JSON object', null];
  const id = idOf(value);
  if (value.jsonrpc !== '2.0') return [MCP_ERROR.invalidRequest, 'jsonrpc must be "2.0"', id];
  const hasId = 'id' in value;
  if (hasId && id === null) {
    return [MCP_ERROR.invalidRequest, 'id must be a string or an integer (not null)', null];
  }
  if (!('method' in value)) return null; // a response to one of our requests: the SDK checks it
  if (typeof value.method !== 'string') return [MCP_ERROR.invalidRequest, 'method must be a string', id];
  if ('params' in value && !isPlainObject(value.params)) {
    return [MCP_ERROR.invalidRequest, 'params must be a JSON object', id];
  }
  if (!hasId) return null; // a notification: never answered
  if (!initialized && value.method !== 'initialize' && value.method !== 'ping') {
    return [MCP_ERROR.notInitialized, 'the server is not initialized: send initialize first', id];
  }
  if (value.method === 'tools/call') {
    const params = (value.params ?? {}) as Record<string, unknown>;
    if (typeof params.name !== 'string') return [MCP_ERROR.invalidParams, 'name must be a string', id];
    if (params.arguments !== undefined && !isPlainObject(params.arguments)) {
      return [MCP_ERROR.invalidParams, 'arguments must be a JSON object', id];
    }
  }
  return null;
}

/** The {@link Transport} described above, over any readable and writable stream. */
export class StrictStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private readonly parts: Buffer[] = [];
  private size = 0;
  private skipping = false;
  private initialized = false;
  private closed = false;

  constructor(
    private readonly input: NodeJS.ReadableStream,
    private readonly output: NodeJS.WritableStream,
    private readonly maxLineBytes: number = MAX_MCP_LINE_BYTES,
  ) {}

  private readonly onData = (chunk: Buffer | string): void => {
    let rest = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
    for (let nl = rest.indexOf(10); nl !== -1; nl = rest.indexOf(10)) {
      this.take(rest.subarray(0, nl));
      this.endLine();
      rest = rest.subarray(nl + 1);
    }
    if (rest.length > 0) this.take(rest);
  };

  private readonly onError = (error: Error): void => {
    this.onerror?.(error);
  };

  private take(bytes: Buffer): void {
    if (this.skipping || bytes.length === 0) return;
    if (this.size + bytes.length > this.maxLineBytes) {
      this.parts.length = 0;
      this.size = 0;
      this.skipping = true;
      this.reply(
        null,
        MCP_ERROR.invalidRequest,
        `message longer than ${this.maxLineBytes} bytes: skipped to the next line`,
      );
      return;
    }
    this.parts.push(bytes);
    this.size += bytes.length;
  }

  private endLine(): void {
    if (this.skipping) {
      this.skipping = false;
      return;
    }
    const line = Buffer.concat(this.parts, this.size).toString('utf8').replace(/\r$/, '');
    this.parts.length = 0;
    this.size = 0;
    if (line.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      this.reply(null, MCP_ERROR.parse, 'not valid JSON');
      return;
    }
    const problem = problemOf(value, this.initialized);
    if (problem !== null) {
      this.reply(problem[2], problem[0], problem[1]);
      return;
    }
    const parsed = JSONRPCMessageSchema.safeParse(value);
    if (!parsed.success) {
      this.reply(
        idOf(value as Record<string, unknown>),
        MCP_ERROR.invalidRequest,
        'not a JSON-RPC 2.0 message',
      );
      return;
    }
    if ((value as { method?: unknown }).method === 'initialize') this.initialized = true;
    this.onmessage?.(parsed.data);
  }

  private reply(id: Id, code: number, message: string): void {
    this.write({ jsonrpc: '2.0', id, error: { code, message } });
  }

  private write(message: unknown): Promise<void> {
    if (this.closed) return Promise.resolve();
    return new Promise((resolve) => {
      if (this.output.write(`${JSON.stringify(message)}\n`)) resolve();
      else this.output.once('drain', resolve);
    });
  }

  async start(): Promise<void> {
    this.input.on('data', this.onData);
    this.input.on('error', this.onError);
  }

  /**
   * Sends one message. An error's message stays one line: a multi-line one (a validation dump) is replaced by
   * the fixed text of its code, and any message is cut to 200 characters.
   */
  send(message: JSONRPCMessage): Promise<void> {
    if ('error' in message && typeof message.error.message === 'string') {
      const text = message.error.message.trim();
      const line = text.includes('\n') ? (FIXED_TEXT[message.error.code] ?? 'request failed') : text;
      const { data: _data, ...error } = message.error;
      return this.write({ ...message, error: { ...error, message: line.slice(0, 200) } });
    }
    return this.write(message);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.input.off('data', this.onData);
    this.input.off('error', this.onError);
    if (this.input.listenerCount('data') === 0) this.input.pause();
    this.parts.length = 0;
    this.onclose?.();
  }
}
