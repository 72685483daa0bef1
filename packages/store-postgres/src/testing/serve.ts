// A throwaway PostgreSQL for trying the store by hand (PGlite with pgvector over the wire protocol):
// `node dist/testing/serve.js [port]` prints the URL and serves until stopped. Nothing is kept on disk.
import { startTestPostgres } from '@engram/test-support';

const port = Number(process.argv[2] ?? '0');
const server = await startTestPostgres({ port: Number.isSafeInteger(port) ? port : 0 });
process.stdout.write(`${server.url}\n`);
const stop = async (): Promise<void> => {
  await server.stop();
  process.exit(0);
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
