/**
 * What SQLite's memory-map ceiling costs a vector search. SQLite clamps `mmap_size` to its compile-time
 * `SQLITE_MAX_MMAP_SIZE` (0x7fff0000, 2 GiB, in better-sqlite3's build), so in a larger file the pages past the
 * first 2 GiB are read with a `read` system call each, page by page (vec0's chunk blobs are overflow chains of
 * `page_size` pages). This writes a raw vec0 table (the store's chunk size and partition index) agent by agent,
 * enough agents of `--rows` vectors for the file to pass the ceiling, then times the same k-NN (k = 128, the
 * hybrid's candidate budget) in the first agent (inside the map) and in the last (past it), alternated query by
 * query on one connection with the store's default map, with the process's CPU time split into user and system;
 * and the same two agents on a connection without a map, as the control (both read by system calls there).
 *
 *   node packages/eval/dist/bench/mmap-ceiling.js [--dimensions 1536] [--rows 10000] [--queries 60] [--page-size 4096]
 *
 * It writes about 1.3 × 2 GiB of temporary disk (deleted at the end) and takes a minute or two.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createDeterministicEmbedder } from '@engram/embedder-deterministic';
import { DEFAULT_MMAP_SIZE, vec0PartitionIndexSql, vectorChunkSize } from '@engram/store-sqlite';
import { openDatabase, type SqliteDatabase } from '@engram/store-sqlite/raw';
import { percentile, rowText, widenVector } from './workload.js';

const K = 128;
const { values } = parseArgs({
  options: {
    dimensions: { type: 'string', default: '1536' },
    rows: { type: 'string', default: '10000' },
    queries: { type: 'string', default: '60' },
    'page-size': { type: 'string', default: '4096' },
  },
});
const dimensions = Number(values.dimensions);
const rows = Number(values.rows);
const count = Number(values.queries);
const pageSize = Number(values['page-size']);
if (![dimensions, rows, count, pageSize].every((x) => Number.isInteger(x) && x > 0)) {
  throw new TypeError('--dimensions, --rows, --queries and --page-size take positive integers');
}
const agentBytes = rows * dimensions * 4;
const agents = Math.ceil((1.25 * DEFAULT_MMAP_SIZE) / agentBytes) + 1;
const dir = mkdtempSync(join(tmpdir(), 'engram-mmap-'));
const path = join(dir, 'raw.sqlite');
const base = createDeterministicEmbedder();
const vectorOf = (text: string): Float32Array => widenVector(base.embedSync(text), dimensions);

function cpuMs(start: NodeJS.CpuUsage): { user: number; system: number } {
  const d = process.cpuUsage(start);
  return { user: d.user / 1000, system: d.system / 1000 };
}

function measure(db: SqliteDatabase, label: string): void {
  const knn = db.prepare(
    `SELECT rowid, distance FROM raw_vec WHERE embedding MATCH ? AND k = ${K} AND agent_id = ?`,
  );
  const mapped = (db.prepare('PRAGMA mmap_size').get() as { mmap_size: number }).mmap_size;
  const sides = [
    { name: 'first agent', agent: 'agent-0', ms: [] as number[], user: 0, system: 0 },
    { name: 'last agent', agent: `agent-${agents - 1}`, ms: [] as number[], user: 0, system: 0 },
  ];
  const query = (i: number): Float32Array => vectorOf(rowText(7_919 * (i + 1)));
  for (let i = 0; i < 3; i += 1) for (const s of sides) knn.all(query(i), s.agent);
  for (let i = 0; i < count; i += 1) {
    const q = query(i + 3);
    for (const s of i % 2 === 0 ? sides : [...sides].reverse()) {
      const cpu = process.cpuUsage();
      const t = process.hrtime.bigint();
      knn.all(q, s.agent);
      s.ms.push(Number(process.hrtime.bigint() - t) / 1e6);
      const c = cpuMs(cpu);
      s.user += c.user;
      s.system += c.system;
    }
  }
  const [inside, past] = sides as [(typeof sides)[0], (typeof sides)[0]];
  const line = (s: typeof inside): string =>
    `${s.name} p50 ${percentile(s.ms, 0.5).toFixed(2)} ms, CPU per k-NN ${(s.user / count).toFixed(2)} user + ${(s.system / count).toFixed(2)} system ms`;
  console.log(`${label} (mmap_size in effect ${mapped} bytes): ${line(inside)}; ${line(past)}`);
  console.log(
    `  last ÷ first: p50 ${(percentile(past.ms, 0.5) / percentile(inside.ms, 0.5)).toFixed(2)}, CPU ${((past.user + past.system) / (inside.user + inside.system)).toFixed(2)}`,
  );
}

try {
  const db = openDatabase(path);
  db.exec(`PRAGMA page_size = ${pageSize}`);
  db.exec('PRAGMA journal_mode = WAL');
  db.exec('PRAGMA synchronous = NORMAL');
  db.exec(
    `CREATE VIRTUAL TABLE raw_vec USING vec0(agent_id text partition key, embedding float[${dimensions}] distance_metric=cosine, chunk_size=${vectorChunkSize(dimensions)})`,
  );
  db.exec(vec0PartitionIndexSql('raw_vec'));
  const insert = db.prepare('INSERT INTO raw_vec(rowid, agent_id, embedding) VALUES (?, ?, ?)');
  const started = Date.now();
  for (let a = 0; a < agents; a += 1) {
    db.exec('BEGIN');
    for (let j = 0; j < rows; j += 1) {
      const i = a * rows + j;
      insert.run(BigInt(i + 1), `agent-${a}`, vectorOf(rowText(i)));
    }
    db.exec('COMMIT');
    if ((a + 1) % 10 === 0 || a + 1 === agents) {
      console.error(
        `wrote ${a + 1}/${agents} agents × ${rows} vectors (${((Date.now() - started) / 1000).toFixed(0)} s)`,
      );
    }
  }
  db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
  const bytes = (
    db
      .prepare('SELECT p.page_count * s.page_size AS b FROM pragma_page_count() p, pragma_page_size() s')
      .get() as {
      b: number;
    }
  ).b;
  db.close();
  console.log(
    `${agents} agents × ${rows} vectors of ${dimensions}-d written agent by agent, page size ${pageSize}: ${(bytes / 1e9).toFixed(2)} GB; the first agent lies inside the first 2 GiB, the last past it`,
  );
  for (const [label, mmap] of [
    ['with the store default map', DEFAULT_MMAP_SIZE],
    ['without a map (control)', 0],
  ] as const) {
    const read = openDatabase(path, { readonly: true });
    try {
      read.exec(`PRAGMA mmap_size = ${mmap}`);
      measure(read, label);
    } finally {
      read.close();
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
