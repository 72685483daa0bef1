/**
 * An ingestion worker process for the multi-writer test: it appends the same session's events as its peers
 * (idempotent by seq) and races them to ingest one memory per event, moving the session cursor by
 * compare-and-set and retrying on a conflict. Prints `appended <n> ingested <n> conflicts <n>`.
 *
 * `node ingest-worker.js <url> <events>`
 */
import { isEngramStoreError } from '@engram/store';
import { createPostgresMemoryStore } from '../store.js';

const [url, countArg] = process.argv.slice(2);
if (url === undefined || countArg === undefined) throw new Error('usage: ingest-worker <url> <events>');
const count = Number(countArg);
const store = await createPostgresMemoryStore({ connectionString: url, poolSize: 2 });
const events = Array.from({ length: count }, (_, i) => ({
  seq: i + 1,
  type: 'message' as const,
  role: 'user',
  content: `event ${i + 1}`,
}));
const appended = (await store.appendEvents('shared', 's1', events)).appended;
let ingested = 0;
let conflicts = 0;
for (;;) {
  const cursor = await store.getCursor('shared', 's1');
  if (cursor >= count) break;
  try {
    await store.ingestBatch({
      agentId: 'shared',
      sessionId: 's1',
      expectedCursor: cursor,
      nextCursor: cursor + 1,
      memories: [
        {
          agentId: 'shared',
          kind: 'episodic',
          content: `summary of event ${cursor + 1}`,
          sessionId: 's1',
          seqFrom: cursor + 1,
          seqTo: cursor + 1,
        },
      ],
    });
    ingested += 1;
  } catch (err) {
    if (!isEngramStoreError(err) || err.code !== 'ENGRAM_STORE_REVISION_CONFLICT') throw err;
    conflicts += 1;
  }
}
process.stdout.write(`appended ${appended} ingested ${ingested} conflicts ${conflicts}\n`);
await store.close();
