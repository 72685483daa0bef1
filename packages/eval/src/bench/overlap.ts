/**
 * Would the two arms gain from running at once? Measures, on the raw statements the benchmark's baseline uses
 * (an FTS5 word table and a vec0 table, both connections with the store's memory map), the FTS statement on the
 * main thread while the vec0 k-NN runs on a worker thread with its own read-only connection, against the two
 * one after the other; interleaved per query, with the process's CPU time. The answer depends on a free core:
 * run it on the machine that matters.
 *
 *   node packages/eval/dist/bench/overlap.js [--agents 1] [--rows 10000] [--queries 300]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';
import { createDeterministicEmbedder } from '@engram/embedder-deterministic';
import { extractKeywords } from '@engram/retrieval';
import { DEFAULT_MMAP_SIZE, vec0PartitionIndexSql, vectorChunkSize } from '@engram/store-sqlite';
import { openDatabase, planLexicalQuery, quoteFts } from '@engram/store-sqlite/raw';
import { benchQueries, percentile, rowText } from './workload.js';

const K = 128;
const { values } = parseArgs({
  options: {
    agents: { type: 'string', default: '1' },
    rows: { type: 'string', default: '10000' },
    queries: { type: 'string', default: '300' },
  },
});
const agents = Number(values.agents);
const rows = Number(values.rows);
const count = Number(values.queries);
const dir = mkdtempSync(join(tmpdir(), 'engram-overlap-'));
const path = join(dir, 'raw.sqlite');
const embedder = createDeterministicEmbedder();

try {
  const db = openDatabase(path);
  db.exec('PRAGMA journal_mode = WAL');
  db.exec(`PRAGMA mmap_size = ${DEFAULT_MMAP_SIZE}`);
  db.exec(
    "CREATE VIRTUAL TABLE raw_fts USING fts5(agent, content, content='', contentless_delete=1, tokenize='porter unicode61 remove_diacritics 2')",
  );
  db.exec(
    `CREATE VIRTUAL TABLE raw_vec USING vec0(agent_id text partition key, embedding float[128] distance_metric=cosine, chunk_size=${vectorChunkSize(128)})`,
  );
  db.exec(vec0PartitionIndexSql('raw_vec'));
  const fts = db.prepare('INSERT INTO raw_fts(rowid, agent, content) VALUES (?, ?, ?)');
  const vec = db.prepare('INSERT INTO raw_vec(rowid, agent_id, embedding) VALUES (?, ?, ?)');
  db.exec('BEGIN');
  for (let a = 0; a < agents; a += 1) {
    for (let j = 0; j < rows; j += 1) {
      const i = a * rows + j;
      const text = rowText(i);
      fts.run(i + 1, `a${a}x`, text.normalize('NFKC'));
      vec.run(BigInt(i + 1), `agent-${a}`, embedder.embedSync(text));
    }
  }
  db.exec('COMMIT');
  db.exec('PRAGMA wal_checkpoint(TRUNCATE)');

  const queries: { vector: Float32Array; agent: string; match: string }[] = [];
  for (let a = 0; queries.length < count; a = (a + 1) % agents) {
    for (const q of benchQueries(a * rows, rows, Math.ceil(count / agents), a + 1)) {
      const words = planLexicalQuery(extractKeywords(q.text).terms, 'any').wordsExpr;
      if (words === null || queries.length >= count) continue;
      queries.push({
        vector: embedder.embedSync(q.text),
        agent: `agent-${a}`,
        match: `agent : ${quoteFts(`a${a}x`)} AND content : (${words})`,
      });
    }
  }
  const ftsSelect = db.prepare(
    `SELECT rowid, bm25(raw_fts, 0.0, 1.0) AS score FROM raw_fts WHERE raw_fts MATCH ? ORDER BY score LIMIT ${K}`,
  );
  const knnSelect = db.prepare(
    `SELECT rowid, distance FROM raw_vec WHERE embedding MATCH ? AND k = ${K} AND agent_id = ?`,
  );

  const worker = new Worker(new URL('./overlap-worker.js', import.meta.url), { workerData: { path, k: K } });
  const pending = new Map<number, (ms: number) => void>();
  let nextId = 0;
  await new Promise<void>((ready) => {
    worker.on('message', (m: { ready?: true; id?: number; ms?: number }) => {
      if (m.ready === true) ready();
      else if (m.id !== undefined) {
        pending.get(m.id)?.(m.ms ?? 0);
        pending.delete(m.id);
      }
    });
  });
  const onWorker = (vector: Float32Array, agent: string): Promise<number> =>
    new Promise((done) => {
      nextId += 1;
      pending.set(nextId, done);
      worker.postMessage({ id: nextId, vector, agent });
    });
  const cpuMs = (): number => {
    const used = process.cpuUsage();
    return (used.user + used.system) / 1000;
  };
  const samples: Record<string, number[]> = {
    'fts alone': [],
    'k-NN alone': [],
    'one after the other': [],
    'at once (k-NN on the worker)': [],
    'fts while the worker scans': [],
    'k-NN on the worker': [],
    'cpu, one after the other': [],
    'cpu, at once': [],
  };
  const push = (key: string, ms: number): void => {
    samples[key]?.push(ms);
  };
  const sequential = (q: (typeof queries)[number]): void => {
    const cpu = cpuMs();
    const t = performance.now();
    ftsSelect.all(q.match);
    const f = performance.now();
    knnSelect.all(q.vector, q.agent);
    const end = performance.now();
    push('fts alone', f - t);
    push('k-NN alone', end - f);
    push('one after the other', end - t);
    push('cpu, one after the other', cpuMs() - cpu);
  };
  const overlapped = async (q: (typeof queries)[number]): Promise<void> => {
    const cpu = cpuMs();
    const t = performance.now();
    const knn = onWorker(q.vector, q.agent);
    ftsSelect.all(q.match);
    const f = performance.now();
    const knnMs = await knn;
    const end = performance.now();
    push('fts while the worker scans', f - t);
    push('k-NN on the worker', knnMs);
    push('at once (k-NN on the worker)', end - t);
    push('cpu, at once', cpuMs() - cpu);
  };
  for (const q of queries.slice(0, 20)) {
    sequential(q);
    await overlapped(q);
  }
  for (const key of Object.keys(samples)) samples[key] = [];
  for (const [i, q] of queries.entries()) {
    if (i % 2 === 0) {
      sequential(q);
      await overlapped(q);
    } else {
      await overlapped(q);
      sequential(q);
    }
  }
  await worker.terminate();
  db.close();
  console.log(`${agents} agent(s) × ${rows} rows, 128-d, k = ${K}, ${queries.length} queries (ms)`);
  for (const [key, xs] of Object.entries(samples)) {
    console.log(
      `${key.padEnd(30)} p50 ${percentile(xs, 0.5).toFixed(2).padStart(7)}  p95 ${percentile(xs, 0.95).toFixed(2).padStart(7)}`,
    );
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
