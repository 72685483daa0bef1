// The ingest half of a scenario: the same batches into Engram, the raw FTS5 + vec0 baseline and the "raw + row"
// floor, each timed alone (wall clock and this process's CPU).
import { createHash } from 'node:crypto';
import type { NewMemory } from '@engram/store';
import {
  DEFAULT_MMAP_SIZE,
  type SqliteMemoryStore,
  vec0PartitionIndexSql,
  vectorChunkSize,
} from '@engram/store-sqlite';
import { openDatabase, type SqliteDatabase } from '@engram/store-sqlite/raw';
import { rowText } from './workload.js';

/** The bench's fixed clock (every row's creation time). */
export const BENCH_NOW: number = Date.UTC(2025, 5, 1);
const WORDS_TOKENIZER = 'porter unicode61 remove_diacritics 2';

/** The agent id of agent number `a`. */
export function agentId(a: number): string {
  return `agent-${String(a).padStart(3, '0')}`;
}

/** The raw baseline's agent column token. */
export function rawAgentToken(a: number): string {
  return `a${a}x`;
}

/** Milliseconds since `start` (`process.hrtime.bigint()`). */
export function elapsedMs(start: bigint): number {
  return Number(process.hrtime.bigint() - start) / 1e6;
}

/** Bytes in a MiB. */
export const MB: number = 1024 * 1024;

/** Heap and RSS now, in MiB, after a full collection when the process exposes one (`node --expose-gc`). */
export function memoryNow(): { readonly rssMB: number; readonly heapMB: number } {
  (globalThis as { gc?: () => void }).gc?.();
  const m = process.memoryUsage();
  return { rssMB: m.rss / MB, heapMB: m.heapUsed / MB };
}

interface BatchRow {
  readonly index: number;
  readonly agent: number;
  readonly text: string;
  readonly vector: Float32Array;
}

/**
 * Opens the raw baseline: the same FTS5 word table (contentless, same tokenizer) and vec0 table as the store (its
 * `chunk_size` too, `vectorChunkSize`, and its chunk table's index by agent, `vec0PartitionIndexSql`), on a connection with the store's settings (WAL, `synchronous = NORMAL`,
 * the store's default memory map), so the ratio compares the same statements on equal connections.
 * `chunkSize: null` creates the vec0 table as vec0 makes it by default (1,024-vector chunks, no index) instead:
 * the small-agents figure's reference, never a timed baseline.
 */
export function openRaw(
  path: string,
  dimensions: number,
  chunkSize: number | null = vectorChunkSize(dimensions),
): SqliteDatabase {
  const db = openDatabase(path);
  db.exec('PRAGMA journal_mode = WAL');
  db.exec('PRAGMA synchronous = NORMAL');
  db.exec(`PRAGMA mmap_size = ${DEFAULT_MMAP_SIZE}`);
  db.exec(
    `CREATE VIRTUAL TABLE raw_fts USING fts5(agent, content, content='', contentless_delete=1, tokenize='${WORDS_TOKENIZER}')`,
  );
  db.exec(
    `CREATE VIRTUAL TABLE raw_vec USING vec0(agent_id text partition key, embedding float[${dimensions}] distance_metric=cosine${chunkSize === null ? '' : `, chunk_size=${chunkSize}`})`,
  );
  // The store's configuration (its chunk size) includes its index of vec0's chunk table by agent (schema v13).
  if (chunkSize !== null) db.exec(vec0PartitionIndexSql('raw_vec'));
  return db;
}

/**
 * Opens the "raw + row" floor: the raw baseline's two tables plus the memory row itself in a plain table, what
 * "never lose what it was given" and the exact-duplicate rule minimally need (the text, its hash, one unique
 * index on (agent, hash)). The raw loop stores no content at all; this is the cheapest loop that does.
 */
export function openRawRow(path: string, dimensions: number): SqliteDatabase {
  const db = openRaw(path, dimensions);
  db.exec(`CREATE TABLE raw_rows (id TEXT PRIMARY KEY, agent TEXT NOT NULL, content TEXT NOT NULL,
    content_hash TEXT NOT NULL, created_at INTEGER NOT NULL)`);
  db.exec('CREATE UNIQUE INDEX raw_rows_agent_hash ON raw_rows(agent, content_hash)');
  return db;
}

/** What {@link runIngest} needs of its scenario. */
export interface IngestConfig {
  readonly name: string;
  readonly agents: number;
  readonly rowsPerAgent: number;
  readonly batchSize: number;
  readonly log: (line: string) => void;
}

/** Wall-clock and CPU milliseconds of each loop over all the scenario's rows. */
export interface IngestTimes {
  readonly engramMs: number;
  readonly rawMs: number;
  readonly rawRowMs: number;
  readonly engramIngestCpuMs: number;
  readonly rawIngestCpuMs: number;
  readonly rawRowIngestCpuMs: number;
}

/** Inserts every row of the scenario, batch by batch, into Engram, the raw baseline and the raw + row floor. */
export async function runIngest(input: {
  readonly config: IngestConfig;
  readonly store: SqliteMemoryStore;
  readonly raw: SqliteDatabase;
  readonly rawRow: SqliteDatabase;
  readonly vectorOf: (text: string) => Float32Array;
}): Promise<IngestTimes> {
  const { config, store, raw, rawRow, vectorOf } = input;
  const { log } = config;
  const totalRows = config.agents * config.rowsPerAgent;
  const rawFts = raw.prepare('INSERT INTO raw_fts(rowid, agent, content) VALUES (?, ?, ?)');
  const rawVec = raw.prepare('INSERT INTO raw_vec(rowid, agent_id, embedding) VALUES (?, ?, ?)');
  const rawBegin = raw.prepare('BEGIN');
  const rawCommit = raw.prepare('COMMIT');
  const rowFts = rawRow.prepare('INSERT INTO raw_fts(rowid, agent, content) VALUES (?, ?, ?)');
  const rowVec = rawRow.prepare('INSERT INTO raw_vec(rowid, agent_id, embedding) VALUES (?, ?, ?)');
  // An exact duplicate is not stored twice (its index entries would be its own row's, so none are written).
  const rowInsert = rawRow.prepare(
    'INSERT INTO raw_rows(id, agent, content, content_hash, created_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING',
  );
  const rowBegin = rawRow.prepare('BEGIN');
  const rowCommit = rawRow.prepare('COMMIT');
  let engramMs = 0;
  let rawMs = 0;
  let rawRowMs = 0;
  // CPU time of each loop (this process; SQLite runs on this thread): what the wall clock measures, less the
  // time spent waiting for a core on a shared machine.
  let engramIngestCpuMs = 0;
  let rawIngestCpuMs = 0;
  let rawRowIngestCpuMs = 0;
  const cpuSince = (since: NodeJS.CpuUsage): number => {
    const used = process.cpuUsage(since);
    return (used.user + used.system) / 1000;
  };
  let done = 0;
  let nextLog = 0;
  for (let a = 0; a < config.agents; a += 1) {
    for (let start = 0; start < config.rowsPerAgent; start += config.batchSize) {
      const end = Math.min(start + config.batchSize, config.rowsPerAgent);
      const batch: BatchRow[] = [];
      for (let j = start; j < end; j += 1) {
        const index = a * config.rowsPerAgent + j;
        const text = rowText(index);
        batch.push({ index, agent: a, text, vector: vectorOf(text) });
      }
      const memories: NewMemory[] = batch.map((r) => ({
        id: `r${r.index}`,
        agentId: agentId(r.agent),
        kind: 'event',
        content: r.text,
        importance: 0.5,
        vector: r.vector,
      }));
      let cpu = process.cpuUsage();
      let t = process.hrtime.bigint();
      await store.insertMemories(memories);
      engramMs += elapsedMs(t);
      engramIngestCpuMs += cpuSince(cpu);

      cpu = process.cpuUsage();
      t = process.hrtime.bigint();
      rawBegin.run();
      for (const r of batch) {
        rawFts.run(r.index + 1, rawAgentToken(r.agent), r.text.normalize('NFKC'));
        rawVec.run(BigInt(r.index + 1), agentId(r.agent), r.vector);
      }
      rawCommit.run();
      rawMs += elapsedMs(t);
      rawIngestCpuMs += cpuSince(cpu);

      cpu = process.cpuUsage();
      t = process.hrtime.bigint();
      rowBegin.run();
      for (const r of batch) {
        const hash = createHash('sha256').update(r.text).digest('hex');
        if (rowInsert.run(`r${r.index}`, agentId(r.agent), r.text, hash, BENCH_NOW).changes === 1) {
          rowFts.run(r.index + 1, rawAgentToken(r.agent), r.text.normalize('NFKC'));
          rowVec.run(BigInt(r.index + 1), agentId(r.agent), r.vector);
        }
      }
      rowCommit.run();
      rawRowMs += elapsedMs(t);
      rawRowIngestCpuMs += cpuSince(cpu);

      done += batch.length;
      if (done >= nextLog || done === totalRows) {
        log(`[${config.name}] ingest ${done}/${totalRows} rows`);
        nextLog = done + Math.max(config.batchSize, Math.floor(totalRows / 10));
      }
    }
  }
  return { engramMs, rawMs, rawRowMs, engramIngestCpuMs, rawIngestCpuMs, rawRowIngestCpuMs };
}
