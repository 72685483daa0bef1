/**
 * The stores of one test file on a test PostgreSQL (`startTestPostgres`: PGlite over the wire protocol, or the
 * scratch server named by ENGRAM_PG_URL). The server starts on first use and stops after the file; every store
 * opens on an emptied database and is closed after its test. The adapter is the caller's: this package depends
 * on no store, so each package's fixture passes its own factory.
 */
import { afterAll, afterEach } from 'vitest';
import { resetTestPostgres, startTestPostgres, type TestPostgres } from './pg-server.js';

/**
 * Returns `open` bound to this file's server: each call empties the database, opens a store on it with `open`
 * and closes it after the test. `suite` names the database of this package's tests on an external server
 * (one per vitest worker, since files run in parallel); lower-case letters, digits and `_`.
 */
export function pgStoreOpener<S extends { close(): Promise<void> }, A extends unknown[]>(
  suite: string,
  open: (url: string, ...args: A) => Promise<S>,
): (...args: A) => Promise<S> {
  let server: Promise<TestPostgres> | undefined;
  const opened: S[] = [];

  afterEach(async () => {
    for (const store of opened.splice(0)) await store.close();
  });

  afterAll(async () => {
    const started = server;
    server = undefined;
    if (started !== undefined) await (await started).stop();
  });

  return async (...args: A): Promise<S> => {
    server ??= startTestPostgres({ database: `engram_test_${suite}_w${process.env.VITEST_POOL_ID ?? '0'}` });
    const { url } = await server;
    await resetTestPostgres(url);
    const store = await open(url, ...args);
    opened.push(store);
    return store;
  };
}
