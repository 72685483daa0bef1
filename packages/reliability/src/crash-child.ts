/**
 * Child of the crash-safety suite: opens the store and writes in an endless seeded loop — memories (single
 * and batched), events, ingest batches with a cursor move, embedding transitions, content and tag updates,
 * deletes — until the parent kills it with SIGKILL. Protocol (one JSON object per stdout line):
 * `{ t: 'ready' }` once open; `{ t: 'B', n, op, … }` before an operation starts; `{ t: 'C', n, op, … }` only
 * after its promise resolved (the write is committed). Any rejection is reported as `{ t: 'E', n, op, code }`
 * and ends the child with exit code 1.
 *
 * Without a fault the parent kills the child from outside (wherever it happens to be). With a fault, the child
 * kills itself with SIGKILL at an exact point inside the store, through the fault-injecting driver:
 * - `tx:<m>`: just before the m-th statement executed inside a write transaction (between the row, its tags,
 *   its FTS entries and its vector, or just before COMMIT) — the operation in flight must leave no trace;
 * - `commit:<m>`: just after the m-th COMMIT returned, before the store's promise resolves — the operation in
 *   flight must be there whole although it was never acknowledged.
 * It reports `{ t: 'K', fault, statement }` (the SQL verb and table) just before.
 *
 * With a key, the file is an encrypted store (the cipher driver, under the fault driver when there is a fault).
 *
 * Usage: node --import tsx crash-child.ts <db path> <seed> <run> <none | tx:<m> | commit:<m>> [key]
 */
import { createDeterministicEmbedder } from '@engram/embedder-deterministic';
import type { MemoryKind, NewMemory } from '@engram/store';
import { createSqliteMemoryStore } from '@engram/store-sqlite';
import { loadCipherDriver } from '@engram/store-sqlite/raw';
import { createFaultDriver, type StatementEvent } from './fault-driver.js';
import { CJK_PHRASES, checksum, codeOf, createPrng, emit, VOCABULARY } from './harness.js';

const [path, seedArg, runArg, faultArg = 'none', key] = process.argv.slice(2);
const faultMatch = faultArg === 'none' ? undefined : /^(tx|commit):([1-9]\d*)$/.exec(faultArg);
if (path === undefined || seedArg === undefined || runArg === undefined || faultMatch === null) {
  process.stderr.write('usage: crash-child <db> <seed> <run> <none|tx:<m>|commit:<m>> [key]\n');
  process.exit(2);
}
const run = Number(runArg);
const prng = createPrng(Number(seedArg));
const embedder = createDeterministicEmbedder();

const fault = faultMatch?.[1] === undefined ? undefined : { kind: faultMatch[1], at: Number(faultMatch[2]) };
/** Off while the store opens (its migration transaction is not an operation of the loop). */
let armed = false;
let seen = 0;

function killSelf(event: StatementEvent): void {
  emit({ t: 'K', fault: fault?.kind, statement: event.statement });
  process.kill(process.pid, 'SIGKILL');
  // SIGKILL cannot be caught; never let the store run another statement meanwhile.
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
}

const driver =
  fault === undefined
    ? undefined
    : createFaultDriver(
        {
          before(event) {
            if (!armed || fault.kind !== 'tx' || !event.inTransaction) return;
            seen += 1;
            if (seen === fault.at) killSelf(event);
          },
          after(event) {
            if (!armed || fault.kind !== 'commit' || event.statement !== 'COMMIT') return;
            seen += 1;
            if (seen === fault.at) killSelf(event);
          },
        },
        key === undefined ? undefined : loadCipherDriver(),
      );
const store = createSqliteMemoryStore({
  path,
  embedding: embedder.profile,
  ...(driver === undefined ? {} : { driver }),
  ...(key === undefined ? {} : { encryption: { key } }),
});
const AGENTS = ['agent-a', 'agent-b'] as const;
const KINDS: readonly MemoryKind[] = ['fact', 'semantic', 'episodic', 'reflection'];

/** Rows this child may update or delete (non-event rows; read from the file, then its own inserts). */
const editable: { id: string; agentId: string }[] = [];
for (const agentId of AGENTS) {
  for (const m of await store.listMemories(agentId, { limit: 10_000, kinds: KINDS })) {
    editable.push({ id: m.id, agentId });
  }
}

function content(n: number, i: number): string {
  // One row in ten is a long memory (over the chunk budget): it is stored and embedded in chunks.
  const long = prng.chance(0.1);
  const words = Array.from({ length: long ? prng.between(300, 600) : prng.between(3, 7) }, () =>
    prng.pick(VOCABULARY),
  );
  const cjk = prng.chance(0.2) ? ` ${prng.pick(CJK_PHRASES)}` : '';
  return `run ${run} op ${n} row ${i} ${words.join(' ')}${cjk}`;
}

async function newRow(n: number, i: number): Promise<{ input: NewMemory; hash: string }> {
  const agentId = prng.pick(AGENTS);
  const text = content(n, i);
  const withVector = prng.chance(0.5);
  const vector = withVector ? (await embedder.embed([text]))[0] : undefined;
  const input: NewMemory = {
    id: `r${run}-${n}-${i}`,
    agentId,
    kind: prng.pick(KINDS),
    content: text,
    tags: [`run:${run}`, `op:${n}`],
    importance: prng.next(),
    ...(vector === undefined ? {} : { vector }),
  };
  return { input, hash: checksum(text) };
}

let eventSeq = 0;
let cursor = 0;
const session = `s-${run}`;
const ingestSession = `i-${run}`;

type Op = 'insert' | 'insertMany' | 'events' | 'ingest' | 'embed' | 'update' | 'retag' | 'delete';
const WEIGHTS: readonly [Op, number][] = [
  ['insert', 22],
  ['insertMany', 14],
  ['events', 14],
  ['ingest', 8],
  ['embed', 18],
  ['update', 10],
  ['retag', 8],
  ['delete', 6],
];
const TOTAL = WEIGHTS.reduce((s, [, w]) => s + w, 0);

function pickOp(): Op {
  let r = prng.int(TOTAL);
  for (const [op, w] of WEIGHTS) {
    if (r < w) return op;
    r -= w;
  }
  return 'insert';
}

async function step(n: number): Promise<void> {
  const op = pickOp();
  switch (op) {
    case 'insert':
    case 'insertMany': {
      const count = op === 'insert' ? 1 : prng.between(2, 24);
      const rows = await Promise.all(Array.from({ length: count }, (_, i) => newRow(n, i)));
      const described = rows.map((r) => ({ id: r.input.id, agentId: r.input.agentId, hash: r.hash }));
      emit({ t: 'B', n, op, rows: described });
      if (op === 'insert') await store.insertMemory(rows[0]?.input as NewMemory);
      else await store.insertMemories(rows.map((r) => r.input));
      emit({ t: 'C', n, op, rows: described });
      for (const r of rows) editable.push({ id: r.input.id as string, agentId: r.input.agentId });
      return;
    }
    case 'events': {
      const count = prng.between(1, 6);
      const from = eventSeq + 1;
      const events = Array.from({ length: count }, (_, i) => ({
        seq: from + i,
        type: 'message' as const,
        role: i % 2 === 0 ? 'user' : 'assistant',
        content: `event ${from + i} of run ${run} ${prng.pick(VOCABULARY)}`,
        metadata: { run, i },
      }));
      emit({ t: 'B', n, op, agentId: 'agent-a', session, from, to: from + count - 1 });
      await store.appendEvents('agent-a', session, events);
      eventSeq = from + count - 1;
      emit({ t: 'C', n, op, agentId: 'agent-a', session, from, to: eventSeq });
      return;
    }
    case 'ingest': {
      const count = prng.between(1, 8);
      const rows = Array.from({ length: count }, (_, i) => {
        const text = `ingested event ${cursor + i + 1} run ${run} ${prng.pick(VOCABULARY)} ${prng.pick(VOCABULARY)}`;
        return {
          input: {
            id: `r${run}-${n}-${i}`,
            agentId: 'agent-b',
            kind: 'event' as const,
            content: text,
            sessionId: ingestSession,
            seqFrom: cursor + i + 1,
            seqTo: cursor + i + 1,
            tags: ['type:message'],
          } satisfies NewMemory,
          hash: checksum(text),
        };
      });
      const described = rows.map((r) => ({ id: r.input.id, agentId: 'agent-b', hash: r.hash }));
      const next = cursor + count;
      emit({ t: 'B', n, op, rows: described, session: ingestSession, cursor: next });
      await store.ingestBatch({
        agentId: 'agent-b',
        sessionId: ingestSession,
        expectedCursor: cursor,
        nextCursor: next,
        memories: rows.map((r) => r.input),
      });
      cursor = next;
      emit({ t: 'C', n, op, rows: described, session: ingestSession, cursor: next });
      return;
    }
    case 'embed': {
      const pending = await store.listPendingEmbeddings({ limit: prng.between(1, 24) });
      if (pending.length === 0) return;
      const vectors = await embedder.embed(pending.map((p) => p.content));
      // A chunked memory's items name their chunk; the memory is ready once every chunk is.
      const items = pending.map((p) => ({
        id: p.id,
        revision: p.revision,
        ...(p.chunk === undefined ? {} : { chunk: p.chunk }),
      }));
      emit({ t: 'B', n, op, items });
      const result = await store.commitEmbeddings(
        pending.map((p, i) => ({
          id: p.id,
          revision: p.revision,
          state: 'ready' as const,
          vector: vectors[i] as Float32Array,
          ...(p.chunk === undefined ? {} : { chunk: p.chunk }),
        })),
      );
      emit({ t: 'C', n, op, items, ready: result.ready, stale: result.stale });
      return;
    }
    case 'update':
    case 'retag':
    case 'delete': {
      if (editable.length === 0) return;
      const index = prng.int(editable.length);
      const target = editable[index] as { id: string; agentId: string };
      const current = await store.getMemory(target.agentId, target.id);
      if (current === null) {
        editable.splice(index, 1);
        return;
      }
      if (op === 'delete') {
        emit({ t: 'B', n, op, id: target.id });
        const deleted = await store.deleteMemory(target.agentId, target.id);
        editable.splice(index, 1);
        emit({ t: 'C', n, op, id: target.id, deleted });
        return;
      }
      if (op === 'update') {
        const text = content(n, 0);
        const hash = checksum(text);
        emit({ t: 'B', n, op, id: target.id, revision: current.revision + 1, hash });
        const next = await store.updateMemory(target.agentId, target.id, current.revision, { content: text });
        emit({ t: 'C', n, op, id: target.id, revision: next.revision, hash });
        return;
      }
      emit({ t: 'B', n, op, id: target.id, revision: current.revision + 1 });
      const next = await store.updateMemory(target.agentId, target.id, current.revision, {
        tags: [`run:${run}`, `retag:${n}`],
        importance: prng.next(),
      });
      emit({ t: 'C', n, op, id: target.id, revision: next.revision });
      return;
    }
  }
}

armed = true;
emit({ t: 'ready' });
for (let n = 1; ; n += 1) {
  try {
    await step(n);
  } catch (err) {
    emit({ t: 'E', n, code: codeOf(err) });
    process.exit(1);
  }
}
