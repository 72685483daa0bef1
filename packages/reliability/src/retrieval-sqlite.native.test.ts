/**
 * Retrieval over SQLite itself, where a test needs the SQLite adapter's internals: the store's vector worker
 * (the same answers with the k-NN on a worker thread, and the reads it costs) and a full-text index dropped
 * behind the store's back through a raw connection. (Moved from @engram/retrieval's retriever suite, which runs
 * on the PostgreSQL store over PGlite and no longer loads SQLite.)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDeterministicEmbedder } from '@engram/embedder-deterministic';
import { createRetriever } from '@engram/retrieval';
import type { MemoryKind, MemoryRecord, MemoryStore } from '@engram/store';
import { createSqliteMemoryStore, type SqliteMemoryStore } from '@engram/store-sqlite';
import { openDatabase, vectorWorkerProbe } from '@engram/store-sqlite/raw';
import { afterEach, describe, expect, it } from 'vitest';

const embedder = createDeterministicEmbedder();
const stores: SqliteMemoryStore[] = [];

afterEach(() => {
  for (const store of stores.splice(0)) store.close();
});

/** Inserts a row; its vector is written with it unless `vector: false` (the row then stays `pending`). */
async function add(
  store: Pick<MemoryStore, 'insertMemory'>,
  agentId: string,
  content: string,
  options: { vector?: boolean; kind?: MemoryKind; tags?: string[]; importance?: number } = {},
): Promise<MemoryRecord> {
  const [vector] = options.vector === false ? [] : await embedder.embed([content]);
  return store.insertMemory({
    agentId,
    content,
    kind: options.kind ?? 'semantic',
    ...(options.tags === undefined ? {} : { tags: options.tags }),
    ...(options.importance === undefined ? {} : { importance: options.importance }),
    ...(vector === undefined ? {} : { vector }),
  });
}

function ids(response: { results: readonly { record: MemoryRecord }[] }): string[] {
  return response.results.map((r) => r.record.id);
}

async function seed(store: SqliteMemoryStore): Promise<MemoryRecord> {
  await add(store, 'a', 'Unrelated note about the team offsite');
  return add(store, 'a', 'The deploy pipeline runs database migrations first');
}

describe("with the store's vector worker", () => {
  it('revalidates the lexical candidates while the k-NN runs on the worker: the same answers, at most one read more', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'engram-retrieval-worker-'));
    const path = join(dir, 'worker.db');
    const counts = { here: 0, worker: 0 };
    const open = (vectorWorker: boolean, key: 'here' | 'worker'): SqliteMemoryStore =>
      createSqliteMemoryStore({
        path,
        embedding: embedder.profile,
        vectorWorker,
        observer: {
          onStatement: (kind) => {
            if (kind === 'read') counts[key] += 1;
          },
        },
      });
    const topics = ['cache', 'redis', 'deploy', 'release', 'backup', 'auth', 'queue', 'schema'];
    const writer = open(false, 'here');
    for (let i = 0; i < 300; i += 1) {
      await add(
        writer,
        'a',
        `note ${i}: ${topics[i % 8]} ${topics[(i * 3) % 8]} ${i % 3 ? 'slow' : 'fast'}`,
        {
          importance: (i % 5) / 4,
          vector: i % 7 !== 0,
        },
      );
    }
    writer.close();
    const here = open(false, 'here');
    const worker = open(true, 'worker');
    // Every k-NN to the worker (these partitions are small enough for the store's connection).
    vectorWorkerProbe(worker)?.setMinScanBytes(0);
    try {
      for (let i = 0; i < 500 && vectorWorkerProbe(worker)?.state !== 'ready'; i += 1) {
        await worker.searchVector({
          agentId: 'a',
          vector: (await embedder.embed(['cache']))[0] as Float32Array,
          k: 1,
        });
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(vectorWorkerProbe(worker)?.state).toBe('ready');
      const options = { now: () => 2_000_000_000_000, trackAccess: false } as const;
      const fromHere = createRetriever({ store: here, embedder, ...options });
      const fromWorker = createRetriever({ store: worker, embedder, ...options });
      const answered = vectorWorkerProbe(worker)?.answered ?? 0;
      counts.here = 0;
      counts.worker = 0;
      const queries = topics.flatMap((t, i) => [
        `${t} ${topics[(i + 1) % 8]}`,
        `${t} slow`,
        `fast ${t} notes`,
      ]);
      for (const query of queries) {
        const expected = await fromHere.search('a', query, { limit: 10 });
        const got = await fromWorker.search('a', query, { limit: 10 });
        expect(got.execution.arms).toEqual(['lexical', 'vector']);
        expect(got.results.length).toBeGreaterThan(0);
        // Same ids, order, scores and explanations.
        expect(got.results).toStrictEqual(expected.results);
      }
      expect((vectorWorkerProbe(worker)?.answered ?? 0) - answered).toBe(queries.length);
      // Here: the k-NN's probe for chunked memories, the candidates' brief read and the results' full read.
      // With the k-NN in flight on the worker (its probe reported too): the lexical candidates' brief read
      // while it runs, then the vector-only ones' (none when the lexical arm found them all), then the results'.
      expect(counts.here).toBe(3 * queries.length);
      expect(counts.worker).toBeGreaterThan(counts.here);
      expect(counts.worker).toBeLessThanOrEqual(4 * queries.length);
    } finally {
      worker.close();
      here.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('degradation, cancellation and failure', () => {
  it('answers from the vector arm with `ftsUnavailable` when the full-text index is gone', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'engram-fts-gone-'));
    try {
      const store = createSqliteMemoryStore({ path: join(dir, 'memory.db'), embedding: embedder.profile });
      stores.push(store);
      const row = await seed(store);
      // Another connection drops every table of the full-text index (the rows and vectors stay).
      const raw = openDatabase(join(dir, 'memory.db'));
      const tables = raw
        .prepare(
          "SELECT name FROM sqlite_master WHERE type = 'table' AND ((name GLOB 'memories_fts_*' AND name NOT GLOB 'memories_fts_*_*') OR name GLOB 'lexical_*')",
        )
        .all() as { name: string }[];
      expect(tables.length).toBeGreaterThan(0);
      for (const { name } of tables) raw.exec(`DROP TABLE ${name}`);
      raw.close();
      const response = await createRetriever({ store, embedder }).search('a', 'deploy pipeline migrations');
      expect(response.execution).toMatchObject({
        outcome: 'completed',
        degradations: ['ftsUnavailable'],
        arms: ['vector'],
      });
      expect(ids(response)[0]).toBe(row.id);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
