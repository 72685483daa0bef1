/**
 * A PostgreSQL wire-protocol front for one PGlite instance, for the tests: many client connections, one backend.
 * PGlite has one session, so the front serialises what a real server runs concurrently: a client's whole
 * extended-protocol exchange (Parse … Sync, including one that a Flush splits) or simple query runs as one
 * unit, and a client that opened a transaction keeps the backend until the transaction ends (others wait). A
 * client that disconnects inside a transaction has it rolled back, as a server does for a dead backend. (The
 * multiplexer of `@electric-sql/pglite-socket` 0.2 queues message by message, so the messages of concurrent
 * extended-protocol exchanges interleave and one connection's Bind meets another's statement, which breaks
 * `pg` pools used from several processes: `wire-server.native.test.ts` shows it. Its SSL and startup
 * handling is followed here.)
 */
import { createServer, type Server, type Socket } from 'node:net';
import type { PGlite } from '@electric-sql/pglite';

const SSL_REQUEST = 80877103;
const CANCEL_REQUEST = 80877102;

/** The single-backend lock: owned by one connection at a time, kept while its transaction is open. */
class Backend {
  #owner: number | null = null;
  #waiters: (() => void)[] = [];

  async acquire(conn: number): Promise<void> {
    while (this.#owner !== null && this.#owner !== conn) {
      await new Promise<void>((resolve) => this.#waiters.push(resolve));
    }
    this.#owner = conn;
  }

  release(conn: number): void {
    if (this.#owner !== conn) return;
    this.#owner = null;
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const w of waiters) w();
  }

  owns(conn: number): boolean {
    return this.#owner === conn;
  }
}

/** A running front: its `host:port` and how to stop it. */
export interface WireServer {
  readonly address: string;
  stop(): Promise<void>;
}

/** Serves `db` on 127.0.0.1 at `port` (0: a free port). */
export async function serveWire(db: PGlite, port = 0): Promise<WireServer> {
  const backend = new Backend();
  const sockets = new Set<Socket>();
  let nextConn = 1;
  const server: Server = createServer((socket) => {
    const conn = nextConn;
    nextConn += 1;
    sockets.add(socket);
    socket.setNoDelay(true);
    let buffer = Buffer.alloc(0);
    let started = false;
    let group: Buffer[] = [];
    let chain: Promise<void> = Promise.resolve();
    // `hold`: the exchange goes on after a Flush (its Sync is still to come), so the backend stays with it.
    const run = async (messages: readonly Buffer[], hold: boolean): Promise<void> => {
      await backend.acquire(conn);
      try {
        for (const message of messages) {
          await db.runExclusive(() =>
            db.execProtocolRawStream(new Uint8Array(message), {
              onRawData: (data: Uint8Array) => {
                if (!socket.destroyed) socket.write(Buffer.from(data));
              },
            }),
          );
        }
      } finally {
        if (!hold && !db.isInTransaction()) backend.release(conn);
      }
    };
    const enqueue = (messages: readonly Buffer[], hold = false): void => {
      chain = chain
        .then(() => run(messages, hold))
        .catch(() => {
          socket.destroy();
        });
    };
    socket.on('data', (data: Buffer) => {
      buffer = Buffer.concat([buffer, data]);
      for (;;) {
        if (!started) {
          if (buffer.length < 8) return;
          const length = buffer.readInt32BE(0);
          if (buffer.length < length) return;
          const code = buffer.readInt32BE(4);
          const message = buffer.subarray(0, length);
          buffer = buffer.subarray(length);
          if (code === SSL_REQUEST) {
            socket.write('N');
            continue;
          }
          if (code === CANCEL_REQUEST) {
            socket.end();
            return;
          }
          started = true;
          enqueue([Buffer.from(message)]);
          continue;
        }
        if (buffer.length < 5) return;
        const length = 1 + buffer.readInt32BE(1);
        if (buffer.length < length) return;
        const type = String.fromCharCode(buffer[0] ?? 0);
        const message = Buffer.from(buffer.subarray(0, length));
        buffer = buffer.subarray(length);
        if (type === 'X') {
          socket.end();
          return;
        }
        group.push(message);
        if (type === 'S' || type === 'Q' || type === 'H') {
          enqueue(group, type === 'H');
          group = [];
        }
      }
    });
    const closed = (): void => {
      sockets.delete(socket);
      chain = chain.then(async () => {
        if (backend.owns(conn)) {
          if (db.isInTransaction()) await db.exec('ROLLBACK').catch(() => {});
          backend.release(conn);
        }
      });
    };
    socket.on('close', closed);
    socket.on('error', () => socket.destroy());
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const info = server.address();
  if (info === null || typeof info !== 'object') throw new Error('the test server has no address');
  return {
    address: `127.0.0.1:${info.port}`,
    stop: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
