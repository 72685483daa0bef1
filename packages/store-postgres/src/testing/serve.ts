// A throwaway PostgreSQL for trying the store by hand (PGlite with pgvector over the wire protocol):
// `node dist/testing/serve.js [port]` prints the URL and serves until stopped. Nothing is kept on disk.
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { serveWire } from './wire-server.js';

const port = Number(process.argv[2] ?? '0');
const db = await PGlite.create({ extensions: { vector } });
const server = await serveWire(db, Number.isSafeInteger(port) ? port : 0);
process.stdout.write(`postgres://postgres@${server.address}/postgres\n`);
const stop = async (): Promise<void> => {
  await server.stop();
  await db.close();
  process.exit(0);
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
