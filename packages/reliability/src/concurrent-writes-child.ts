/**
 * Child of the concurrent-writes suite, in one of two roles on one shared store file (WAL, busy timeout):
 *
 * - `remember <db> <seed> <name> <count>`: remembers the same `count` facts as every other child given the same
 *   seed (`factsFor`), in the same order, through the agent-facing `memory_remember` tool over the real store,
 *   retriever and deterministic embedder; reports how each call was answered.
 * - `drain <db> <name>`: runs the embedding drain over the whole backlog and reports its transitions.
 *
 * Both report `{ t: 'ready' }`, start on `go` (stdin) and end with `{ t: 'done', counts }`. A rejection is
 * reported as `{ t: 'E', code }` (codes only, never content).
 */
import { createInterface } from 'node:readline';
import { createDeterministicEmbedder } from '@engram/embedder-deterministic';
import { createEmbeddingDrain } from '@engram/maintenance';
import { createRetriever } from '@engram/retrieval';
import { createSqliteMemoryStore } from '@engram/store-sqlite';
import { createToolHandler } from '@engram/tools';
import { codeOf, emit, factsFor, WRITES_AGENT } from './harness.js';

async function rememberAll(seed: number, count: number, path: string): Promise<Record<string, number>> {
  const embedder = createDeterministicEmbedder();
  const store = createSqliteMemoryStore({ path, embedding: embedder.profile, busyTimeoutMs: 10_000 });
  const tools = createToolHandler({ store, retriever: createRetriever({ store, embedder }), embedder });
  const counts = { remembered: 0, duplicate: 0, other: 0, errors: 0 };
  try {
    for (const content of factsFor(seed, count)) {
      // Let the other processes interleave at every call.
      await new Promise<void>((resolve) => setImmediate(resolve));
      try {
        const result = await tools.execute('memory_remember', { content }, { agentId: WRITES_AGENT });
        if (result.ok && result.text.startsWith('Remembered as fact ')) counts.remembered += 1;
        else if (result.ok && result.text.startsWith('Already remembered as fact ')) counts.duplicate += 1;
        else counts.other += 1;
      } catch (err) {
        counts.errors += 1;
        emit({ t: 'E', code: codeOf(err) });
      }
    }
  } finally {
    store.close();
  }
  return counts;
}

async function drainAll(path: string): Promise<Record<string, number>> {
  const embedder = createDeterministicEmbedder();
  const store = createSqliteMemoryStore({ path, embedding: embedder.profile, busyTimeoutMs: 10_000 });
  try {
    const run = await createEmbeddingDrain({ store, embedder, maxBatchesPerRun: 10_000 }).run();
    if (run.errorCode !== undefined) emit({ t: 'E', code: run.errorCode });
    return { ...run.transitions, batches: run.batches, rows: run.rows };
  } finally {
    store.close();
  }
}

const [role, path, ...rest] = process.argv.slice(2);
if ((role !== 'remember' && role !== 'drain') || path === undefined) {
  process.stderr.write(
    'usage: concurrent-writes-child remember <db> <seed> <name> <count> | drain <db> <name>\n',
  );
  process.exit(2);
}
const commands = createInterface({ input: process.stdin });
const go = new Promise<void>((resolve) => {
  commands.on('line', (line) => {
    if (line === 'go') resolve();
  });
});
emit({ t: 'ready', role });
await go;
const counts =
  role === 'remember' ? await rememberAll(Number(rest[0]), Number(rest[2]), path) : await drainAll(path);
emit({ t: 'done', role, counts });
commands.close();
process.stdin.destroy();
