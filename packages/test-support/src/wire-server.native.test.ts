// Why the tests serve PGlite through their own wire front rather than `@electric-sql/pglite-socket`: two
// connections whose extended-protocol exchanges overlap. Connection A has parsed its statement (Parse, then
// Flush: the exchange is still open) when connection B runs a statement of its own; then A binds and executes.
// A PostgreSQL server keeps one session per connection, so A gets its own statement's answer. Our front does
// the same (B waits for A's Sync). pglite-socket 0.2 (its multiplexer, `maxConnections`) runs B's exchange in
// PGlite's one session between A's messages, so A's Bind meets B's statement and A's query fails with a
// protocol error: what a `pg` pool in several processes hit at random (the store failed to open, "bind
// message supplies 1 parameters, but prepared statement "" requires 2").
import { connect, type Socket } from 'node:net';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import { expect, it } from 'vitest';
import { serveWire } from './wire-server.js';

/** One backend message: its type byte and body. */
interface Message {
  readonly type: string;
  readonly body: Buffer;
}

/** A raw protocol connection: send bytes, wait for the next message of a type. */
class Conn {
  #socket: Socket;
  #buffer = Buffer.alloc(0);
  #messages: Message[] = [];
  #wake: (() => void) | null = null;

  private constructor(socket: Socket) {
    this.#socket = socket;
    socket.on('data', (data: Buffer) => {
      this.#buffer = Buffer.concat([this.#buffer, data]);
      while (this.#buffer.length >= 5) {
        const length = 1 + this.#buffer.readInt32BE(1);
        if (this.#buffer.length < length) break;
        this.#messages.push({
          type: String.fromCharCode(this.#buffer[0] ?? 0),
          body: this.#buffer.subarray(5, length),
        });
        this.#buffer = this.#buffer.subarray(length);
      }
      this.#wake?.();
    });
  }

  static async open(host: string, port: number): Promise<Conn> {
    const socket = connect(port, host);
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    const conn = new Conn(socket);
    const params = Buffer.from('user\0postgres\0database\0postgres\0\0');
    const head = Buffer.alloc(8);
    head.writeInt32BE(8 + params.length, 0);
    head.writeInt32BE(196608, 4);
    conn.send(Buffer.concat([head, params]));
    await conn.until('Z');
    return conn;
  }

  send(...messages: Buffer[]): void {
    this.#socket.write(Buffer.concat(messages));
  }

  /** Every message up to and including the first of `type`. */
  async until(type: string): Promise<Message[]> {
    for (;;) {
      const at = this.#messages.findIndex((m) => m.type === type);
      if (at >= 0) return this.#messages.splice(0, at + 1);
      await new Promise<void>((resolve) => {
        this.#wake = resolve;
      });
    }
  }

  close(): void {
    this.#socket.destroy();
  }
}

const frame = (type: string, ...parts: Buffer[]): Buffer => {
  const body = Buffer.concat(parts);
  const head = Buffer.alloc(5);
  head.write(type, 0, 'latin1');
  head.writeInt32BE(4 + body.length, 1);
  return Buffer.concat([head, body]);
};
const cstr = (s: string): Buffer => Buffer.from(`${s}\0`);
const int16 = (n: number): Buffer => {
  const b = Buffer.alloc(2);
  b.writeInt16BE(n);
  return b;
};
const int32 = (n: number): Buffer => {
  const b = Buffer.alloc(4);
  b.writeInt32BE(n);
  return b;
};
const parse = (sql: string): Buffer => frame('P', cstr(''), cstr(sql), int16(0));
const bind = (values: readonly string[]): Buffer =>
  frame(
    'B',
    cstr(''),
    cstr(''),
    int16(0),
    int16(values.length),
    ...values.flatMap((v) => [int32(Buffer.byteLength(v)), Buffer.from(v)]),
    int16(0),
  );
const execute = (): Buffer => frame('E', cstr(''), int32(0));
const sync = (): Buffer => frame('S');
const flush = (): Buffer => frame('H');

/** The exchange's answer: the first column of its row, or the SQLSTATE of its error. */
function answer(messages: readonly Message[]): { value?: string; sqlstate?: string } {
  const error = messages.find((m) => m.type === 'E');
  if (error !== undefined) {
    const field = error.body
      .toString('utf8')
      .split('\0')
      .find((f) => f.startsWith('C'));
    return { sqlstate: field?.slice(1) ?? '' };
  }
  const row = messages.find((m) => m.type === 'D');
  if (row === undefined) return {};
  const length = row.body.readInt32BE(2);
  return { value: row.body.subarray(6, 6 + length).toString('utf8') };
}

const A_SQL = 'SELECT $1::int AS n';
const B_SQL = 'SELECT $1::int + $2::int AS n';

it('our front: a connection whose exchange is open keeps its statement while another connection runs one', async () => {
  const db = await PGlite.create();
  const server = await serveWire(db);
  const [host = '', port = ''] = server.address.split(':');
  const a = await Conn.open(host, Number(port));
  const b = await Conn.open(host, Number(port));
  try {
    a.send(parse(A_SQL), flush());
    await a.until('1');
    b.send(parse(B_SQL), bind(['1', '2']), execute(), sync());
    a.send(bind(['7']), execute(), sync());
    expect(answer(await a.until('Z'))).toEqual({ value: '7' });
    expect(answer(await b.until('Z'))).toEqual({ value: '3' });
  } finally {
    a.close();
    b.close();
    await server.stop();
    await db.close();
  }
});

it('pglite-socket 0.2: another connection runs its statement inside an open exchange, and the first query fails', async () => {
  const db = await PGlite.create();
  const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0, maxConnections: 8 });
  await server.start();
  const [host = '', port = ''] = server.getServerConn().split(':');
  const a = await Conn.open(host, Number(port));
  const b = await Conn.open(host, Number(port));
  try {
    a.send(parse(A_SQL), flush());
    await a.until('1');
    b.send(parse(B_SQL), bind(['1', '2']), execute(), sync());
    // B is answered while A's exchange is still open: PGlite's one session ran B's statement.
    expect(answer(await b.until('Z'))).toEqual({ value: '3' });
    a.send(bind(['7']), execute(), sync());
    // A's Bind met B's two-parameter statement: a protocol violation instead of A's row.
    expect(answer(await a.until('Z'))).toEqual({ sqlstate: '08P01' });
  } finally {
    a.close();
    b.close();
    await server.stop();
    await db.close();
  }
});
