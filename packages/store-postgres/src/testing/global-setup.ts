// Global setup of this package's native tier: one PostgreSQL for every test file (PGlite over the wire
// protocol, or ENGRAM_PG_URL), its URL handed to the test processes as ENGRAM_PG_TEST_URL.
import { startTestPostgres } from '@engram/test-support';

export default async function setup(): Promise<() => Promise<void>> {
  const server = await startTestPostgres({ database: 'engram_test_store_postgres' });
  process.env.ENGRAM_PG_TEST_URL = server.url;
  process.env.ENGRAM_PG_TEST_KIND = server.kind;
  return () => server.stop();
}
