/**
 * A drain worker process for the many-processes claims test (`claims.native.test.ts`): it opens the store file
 * with claims (`claimLeaseMs`) and drains the backlog as the maintenance drain does — list a batch of 5 (which
 * claims it), one embedder call, then its commit — until nothing is pending. Every text the embedder is given
 * is logged (one line per text, written before the call returns), so the test can count embedder calls per row
 * across processes. The worker creates its (empty) log file once its store is open: the file's existence says
 * the worker is ready.
 *
 * `node claim-worker.js <file> <log> [--stall | --die-after-embed | --start-on <file>]`: with `--stall` the
 * worker's first embedder call never returns (it prints `claimed <n>` and waits to be killed: a worker dying
 * with its claims held, nothing embedded); with `--die-after-embed` the first batch is embedded and the commit
 * never starts (it prints `embedded <n>` and waits to be killed); with `--start-on <file>` it is ready, then
 * waits until that file exists before draining (so the test starts several workers together).
 */
import { appendFileSync, existsSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import type { EmbeddingOutcome } from '@engram/store';
import { createSqliteMemoryStore } from '../sqlite-store.js';

const [path, log, flag, startOn] = process.argv.slice(2);
if (path === undefined || log === undefined || (flag === '--start-on' && startOn === undefined)) {
  throw new Error('usage: claim-worker <file> <log> [--stall | --die-after-embed | --start-on <file>]');
}
const forever = (): Promise<never> => new Promise<never>(() => setInterval(() => {}, 60_000));

/** A unit vector derived from the text (the embedder stand-in; 4 dimensions). */
function vectorOf(text: string): Float32Array {
  const v = new Float32Array(4);
  for (let i = 0; i < text.length; i += 1) v[i % 4] = (v[i % 4] ?? 0) + text.charCodeAt(i);
  const n = Math.hypot(...v);
  return v.map((x) => x / n);
}

const dying = flag === '--stall' || flag === '--die-after-embed';
const store = createSqliteMemoryStore({
  path,
  embedding: { id: 'claims-test', dimensions: 4 },
  busyTimeoutMs: 30_000,
  // The workers killed mid-batch hold short leases, so the others take their rows over soon; a worker that
  // runs to the end holds long ones, so a batch of it slowed by a loaded machine is never taken over.
  claimLeaseMs: dying ? 1500 : 60_000,
  vectorWorker: false,
});
writeFileSync(log, '');
if (flag === '--start-on' && startOn !== undefined) {
  while (!existsSync(startOn)) await sleep(10);
}
let idle = 0;
for (;;) {
  const batch = await store.listPendingEmbeddings({ limit: 5 });
  if (batch.length === 0) {
    if ((await store.countEmbeddingBacklog()).total === 0 || idle > 200) break;
    idle += 1;
    await sleep(50);
    continue;
  }
  idle = 0;
  if (flag === '--stall') {
    process.stdout.write(`claimed ${batch.length}\n`);
    await forever();
  }
  for (const item of batch) appendFileSync(log, `${item.content}\n`);
  // An embedder call takes a while (a model or a provider round trip): the workers' batches interleave.
  await sleep(20);
  const outcomes: EmbeddingOutcome[] = batch.map((item) => ({
    id: item.id,
    revision: item.revision,
    state: 'ready',
    vector: vectorOf(item.content),
  }));
  if (flag === '--die-after-embed') {
    process.stdout.write(`embedded ${batch.length}\n`);
    await forever();
  }
  await store.commitEmbeddings(outcomes);
}
store.close();
