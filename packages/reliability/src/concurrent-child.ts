/**
 * Child of the concurrent-process suite, in one of two roles on one shared store file (WAL, busy timeout):
 *
 * - `writer <db> <seed> <name> <ops> <phase ops>`: inserts memories whose content carries its own checksum in a
 *   `chk:` tag (half with a vector in the same transaction, half `pending` then committed by
 *   `commitEmbeddings`), retags its own rows (compare-and-set), and appends events. It reports
 *   `{ t: 'C', op, id, revision }` after each acknowledged write, then `{ t: 'done', counts }`. After every
 *   `phase ops` operations it reports `{ t: 'P', phase, inserts }` and waits for `continue` on stdin; the first
 *   `BEGIN` it runs after that is announced as `{ t: 'W' }` just before it executes (through the
 *   fault-injecting driver), so the parent knows the writer is at the write lock.
 * - `reader <db> <seed> <name>`: searches (lexical, vector, the hybrid retriever) until told `stop` on stdin,
 *   and checks every hit through the public API: the hit is readable with `getMemory`, its content matches
 *   its checksum tag, a lexical hit of the same revision contains the term, a vector hit is `ready` and its
 *   distance is the one of the content's own embedding. Each round reports the row count it saw as
 *   `{ t: 'R', rows }`; at the end `{ t: 'done', counts }`.
 *
 * Both start on `go` (stdin) after reporting `{ t: 'ready' }`. Every rejection or inconsistency is reported as
 * `{ t: 'E', … }` (codes only, never content); the parent requires none.
 */
import { createInterface } from 'node:readline';
import { createDeterministicEmbedder } from '@engram/embedder-deterministic';
import { createRetriever } from '@engram/retrieval';
import type { MemoryRecord } from '@engram/store';
import { createSqliteMemoryStore } from '@engram/store-sqlite';
import { createFaultDriver } from './fault-driver.js';
import { checksum, checksumTag, codeOf, createPrng, emit, VOCABULARY } from './harness.js';

const [role, path, seedArg, name, opsArg, phaseArg] = process.argv.slice(2);
if ((role !== 'writer' && role !== 'reader') || path === undefined || seedArg === undefined || !name) {
  process.stderr.write('usage: concurrent-child writer|reader <db> <seed> <name> [ops]\n');
  process.exit(2);
}
const AGENT = 'shared-agent';
const prng = createPrng(Number(seedArg));
const embedder = createDeterministicEmbedder();
/** Set when the parent releases a pause: the next `BEGIN` is announced (the writer is at the write lock). */
let announceBegin = false;
const driver = createFaultDriver({
  before(event) {
    if (!announceBegin || event.statement !== 'BEGIN') return;
    announceBegin = false;
    emit({ t: 'W' });
  },
});
const store = createSqliteMemoryStore({
  path,
  embedding: embedder.profile,
  busyTimeoutMs: 5000,
  // Writers only: readers run on the plain driver.
  ...(role === 'writer' ? { driver } : {}),
});

const commands = createInterface({ input: process.stdin });
let stopRequested = false;
let released = 0;
let wake: (() => void) | undefined;
const go = new Promise<void>((resolve) => {
  commands.on('line', (line) => {
    if (line === 'go') resolve();
    if (line === 'stop') stopRequested = true;
    if (line === 'continue') {
      released += 1;
      wake?.();
    }
  });
});

/** Reports the end of a phase and waits until the parent releases it. */
async function pause(phase: number, inserts: number): Promise<void> {
  emit({ t: 'P', phase, inserts });
  while (released < phase) {
    await new Promise<void>((resolve) => {
      wake = resolve;
    });
  }
  announceBegin = true;
}

function fail(kind: string, detail: Record<string, unknown>): void {
  emit({ t: 'E', kind, ...detail });
}

function words(n: number): string[] {
  return Array.from({ length: n }, () => prng.pick(VOCABULARY));
}

async function writer(ops: number, phaseOps: number): Promise<Record<string, number>> {
  const counts = {
    inserts: 0,
    insertsWithVector: 0,
    embeddingCommits: 0,
    retags: 0,
    eventBatches: 0,
    errors: 0,
  };
  const own: { id: string; revision: number; content: string }[] = [];
  const pending: { id: string; revision: number; content: string }[] = [];
  let seq = 0;
  for (let n = 1; n <= ops; n += 1) {
    if (n > 1 && (n - 1) % phaseOps === 0) await pause((n - 1) / phaseOps, counts.inserts);
    await new Promise<void>((resolve) => setImmediate(resolve));
    const roll = prng.int(100);
    try {
      if (roll < 50 || own.length === 0) {
        const content = `${name} item ${n} ${words(prng.between(3, 6)).join(' ')}`;
        const withVector = prng.chance(0.5);
        const vector = withVector ? (await embedder.embed([content]))[0] : undefined;
        const record = await store.insertMemory({
          id: `${name}-${n}`,
          agentId: AGENT,
          kind: 'fact',
          content,
          tags: [checksumTag(content), `writer:${name}`],
          ...(vector === undefined ? {} : { vector }),
        });
        counts.inserts += 1;
        if (withVector) counts.insertsWithVector += 1;
        own.push({ id: record.id, revision: record.revision, content });
        if (!withVector) pending.push({ id: record.id, revision: record.revision, content });
        emit({ t: 'C', op: 'insert', id: record.id, revision: record.revision, hash: checksum(content) });
      } else if (roll < 70 && pending.length > 0) {
        const batch = pending.splice(0, prng.between(1, 8));
        const vectors = await embedder.embed(batch.map((b) => b.content));
        // Rows retagged meanwhile carry a newer revision: commit with the current one.
        const current = batch.map((b) => own.find((o) => o.id === b.id) ?? b);
        const result = await store.commitEmbeddings(
          current.map((b, i) => ({
            id: b.id,
            revision: b.revision,
            state: 'ready' as const,
            vector: vectors[i] as Float32Array,
          })),
        );
        if (result.ready !== batch.length)
          fail('staleCommit', { expected: batch.length, ready: result.ready });
        counts.embeddingCommits += 1;
        for (const b of current) emit({ t: 'C', op: 'embed', id: b.id, revision: b.revision });
      } else if (roll < 88) {
        const target = prng.pick(own);
        const record = await store.updateMemory(AGENT, target.id, target.revision, {
          tags: [checksumTag(target.content), `writer:${name}`, `round:${n}`],
          importance: prng.next(),
        });
        target.revision = record.revision;
        counts.retags += 1;
        emit({ t: 'C', op: 'retag', id: record.id, revision: record.revision });
      } else {
        const count = prng.between(1, 4);
        const from = seq + 1;
        await store.appendEvents(
          AGENT,
          `session-${name}`,
          Array.from({ length: count }, (_, i) => ({
            seq: from + i,
            type: 'message' as const,
            role: 'user',
            content: `${name} event ${from + i}`,
          })),
        );
        seq = from + count - 1;
        counts.eventBatches += 1;
        emit({ t: 'C', op: 'events', session: `session-${name}`, from, to: seq });
      }
    } catch (err) {
      counts.errors += 1;
      fail('error', { code: codeOf(err), n });
    }
  }
  return counts;
}

function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i += 1) {
    const x = a[i] as number;
    const y = b[i] as number;
    dot += x * y;
    na += x * x;
    nb += y * y;
  }
  return dot / Math.sqrt(na * nb);
}

function checkRecord(record: MemoryRecord | null, id: string, arm: string): record is MemoryRecord {
  if (record === null) {
    fail('unreadableHit', { arm, id });
    return false;
  }
  const tag = record.tags.find((t) => t.startsWith('chk:'));
  if (record.agentId !== AGENT || tag !== checksumTag(record.content)) {
    fail('halfWritten', { arm, id, revision: record.revision });
    return false;
  }
  return true;
}

async function reader(): Promise<Record<string, number>> {
  const counts = {
    lexicalSearches: 0,
    vectorSearches: 0,
    hybridSearches: 0,
    hitsChecked: 0,
    searchesBeforeStop: 0,
    distinctRowCountsSeen: 0,
    errors: 0,
  };
  const rowCounts = new Set<number>();
  const retriever = createRetriever({ store, embedder });
  // At least a few rounds, then until the parent says stop (after the writers are done).
  for (let round = 0; round < 30 || !stopRequested; round += 1) {
    // Let stdin (`stop`) be read: the store's promises settle without ever returning to the event loop.
    await new Promise<void>((resolve) => setImmediate(resolve));
    const arm = prng.int(3);
    if (!stopRequested) counts.searchesBeforeStop += 1;
    // Seeing the row count change between searches proves the writers were writing meanwhile.
    const health = await store.health(AGENT);
    if (health.ok) {
      rowCounts.add(health.health.totals.memories);
      emit({ t: 'R', rows: health.health.totals.memories });
    }
    try {
      if (arm === 0) {
        const term = prng.pick(VOCABULARY);
        const result = await store.searchLexical({ agentId: AGENT, terms: [term], limit: 20 });
        counts.lexicalSearches += 1;
        for (const hit of result.hits) {
          const record = await store.getMemory(AGENT, hit.id);
          if (!checkRecord(record, hit.id, 'lexical')) continue;
          if (record.revision === hit.revision && !record.content.split(' ').includes(term)) {
            fail('lexicalMismatch', { id: hit.id, revision: hit.revision });
          }
          counts.hitsChecked += 1;
        }
      } else if (arm === 1) {
        const query = words(3).join(' ');
        const [vector] = await embedder.embed([query]);
        const hits = await store.searchVector({ agentId: AGENT, vector: vector as Float32Array, k: 20 });
        counts.vectorSearches += 1;
        for (const hit of hits) {
          const record = await store.getMemory(AGENT, hit.id);
          if (!checkRecord(record, hit.id, 'vector')) continue;
          if (record.embeddingState !== 'ready') fail('vectorWithoutReady', { id: hit.id });
          const [own] = await embedder.embed([record.content]);
          const expected = cosine(vector as Float32Array, own as Float32Array);
          if (Math.abs(expected - hit.similarity) > 1e-3) fail('vectorMismatch', { id: hit.id });
          counts.hitsChecked += 1;
        }
      } else {
        const response = await retriever.search(AGENT, words(2).join(' '), { limit: 10 });
        counts.hybridSearches += 1;
        if (response.execution.outcome !== 'completed') {
          fail('retrievalOutcome', {
            outcome: response.execution.outcome,
            degradations: response.execution.degradations,
          });
        }
        for (const r of response.results) {
          const record = await store.getMemory(AGENT, r.record.id);
          if (!checkRecord(record, r.record.id, 'hybrid')) continue;
          if (!checkRecord(r.record, r.record.id, 'hybridRecord')) continue;
          counts.hitsChecked += 1;
        }
      }
    } catch (err) {
      counts.errors += 1;
      fail('error', { code: codeOf(err), arm });
    }
  }
  counts.distinctRowCountsSeen = rowCounts.size;
  return counts;
}

emit({ t: 'ready', role, name });
await go;
const counts =
  role === 'writer' ? await writer(Number(opsArg ?? 200), Number(phaseArg ?? opsArg ?? 200)) : await reader();
store.close();
emit({ t: 'done', role, name, counts });
commands.close();
process.stdin.destroy();
