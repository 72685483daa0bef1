/**
 * A drain worker process for the multi-worker test: it opens the store with claims (a lease per claimed row),
 * and embeds pending rows until the backlog is empty. Every embedder call is logged (one line per row id,
 * written before the call) to the log file, so the test can count calls per row across processes.
 *
 * `node drain-worker.js <url> <log file> [--stall]`: with `--stall` the worker claims one batch, prints
 * `claimed <n>` and waits to be killed (a worker dying mid-batch, its claims held).
 */
import { appendFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { createPostgresMemoryStore } from '../store.js';

const [url, log, flag] = process.argv.slice(2);
if (url === undefined || log === undefined) throw new Error('usage: drain-worker <url> <log> [--stall]');

/** A unit vector derived from the text (the embedder stand-in; 4 dimensions). */
function embed(text: string): Float32Array {
  const v = new Float32Array(4);
  for (let i = 0; i < text.length; i += 1) v[i % 4] = (v[i % 4] ?? 0) + text.charCodeAt(i);
  const n = Math.hypot(...v);
  return v.map((x) => x / n);
}

const store = await createPostgresMemoryStore({
  connectionString: url,
  poolSize: 2,
  embedding: { id: 'drain-test', dimensions: 4 },
  claimLeaseMs: 1500,
});
let idle = 0;
for (;;) {
  const batch = await store.listPendingEmbeddings({ limit: 5 });
  if (flag === '--stall') {
    process.stdout.write(`claimed ${batch.length}\n`);
    await sleep(3_600_000);
  }
  if (batch.length === 0) {
    if ((await store.countEmbeddingBacklog()).total === 0 || idle > 200) break;
    idle += 1;
    await sleep(50);
    continue;
  }
  idle = 0;
  for (const item of batch) appendFileSync(log, `${item.id}\n`);
  await store.commitEmbeddings(
    batch.map((item) => ({
      id: item.id,
      revision: item.revision,
      state: 'ready' as const,
      vector: embed(item.content),
    })),
  );
}
await store.close();
