/**
 * A drain worker process for the multi-worker test on PostgreSQL: it opens the store with claims (a lease per
 * claimed row) and runs the maintenance drain (`createEmbeddingDrain`, batches of 5: one embedder call, then
 * its commit) until the backlog is empty. Every text the embedder is given is logged (one line per text,
 * written before the call returns) to the log file, so the test can count embedder calls per row across
 * processes. The worker creates its (empty) log file once its store is open, before it drains anything: the
 * file's existence says the worker is ready.
 *
 * `node drain-worker.js <url> <log file> [--stall | --die-after-embed | --start-on <file>]`: with `--stall` the
 * worker's first embedder call never returns (it prints `claimed <n>` and waits to be killed: a worker dying
 * with its claims held, nothing embedded); with `--die-after-embed` the first call returns its vectors and the
 * commit never starts (it prints `embedded <n>` and waits to be killed: a worker dying between the embedder
 * and the commit); with `--start-on <file>` it is ready, then waits until that file exists before draining
 * (so the test starts several workers together, whatever each one's start-up took).
 */
import { appendFileSync, existsSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { createPostgresMemoryStore } from '@engram/store-postgres';
import { createEmbeddingDrain } from '../drain.js';

const [url, log, flag, startOn] = process.argv.slice(2);
if (url === undefined || log === undefined || (flag === '--start-on' && startOn === undefined)) {
  throw new Error('usage: drain-worker <url> <log> [--stall | --die-after-embed | --start-on <file>]');
}
const forever = (): Promise<never> => new Promise<never>(() => setInterval(() => {}, 60_000));

/** A unit vector derived from the text (the embedder stand-in; 4 dimensions). */
function vectorOf(text: string): Float32Array {
  const v = new Float32Array(4);
  for (let i = 0; i < text.length; i += 1) v[i % 4] = (v[i % 4] ?? 0) + text.charCodeAt(i);
  const n = Math.hypot(...v);
  return v.map((x) => x / n);
}

const profile = { id: 'drain-test', dimensions: 4 };
const store = await createPostgresMemoryStore({
  connectionString: url,
  poolSize: 2,
  embedding: profile,
  // The workers killed mid-batch hold short leases, so the others take their rows over soon; a worker that
  // runs to the end holds long ones, so a batch of it slowed by a loaded machine is never taken over (and
  // embedded twice) before its commit.
  claimLeaseMs: flag === '--stall' || flag === '--die-after-embed' ? 1500 : 60_000,
});
let embedded = false;
const drain = createEmbeddingDrain({
  store: {
    embeddingProfile: store.embeddingProfile,
    listPendingEmbeddings: (options) => store.listPendingEmbeddings(options),
    countEmbeddingBacklog: () => store.countEmbeddingBacklog(),
    commitEmbeddings: async (outcomes) => {
      if (flag === '--die-after-embed' && embedded) {
        process.stdout.write(`embedded ${outcomes.length}\n`);
        return forever();
      }
      return store.commitEmbeddings(outcomes);
    },
  },
  embedder: {
    profile,
    async embed(texts) {
      if (flag === '--stall') {
        process.stdout.write(`claimed ${texts.length}\n`);
        return forever();
      }
      for (const text of texts) appendFileSync(log, `${text}\n`);
      embedded = true;
      return texts.map(vectorOf);
    },
  },
  batchSize: 5,
});
writeFileSync(log, '');
if (flag === '--start-on' && startOn !== undefined) {
  while (!existsSync(startOn)) await sleep(10);
}
let idle = 0;
for (;;) {
  const run = await drain.run();
  if (run.outcome !== 'completed') throw new Error(`drain run ${run.outcome} (${run.errorCode ?? ''})`);
  if (run.rows > 0) {
    idle = 0;
    continue;
  }
  if ((await store.countEmbeddingBacklog()).total === 0 || idle > 200) break;
  idle += 1;
  await sleep(50);
}
await store.close();
