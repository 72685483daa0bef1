/**
 * What a small agent costs on disk: many agents with a few rows each, at a scenario's dimensions. vec0 allocates
 * each agent's (partition's) vector chunk whole, `chunk_size` vectors at a time, so a file of small agents is
 * mostly empty chunks; Engram sizes its chunks by the vector's width (`vectorChunkSize`). Measured on three
 * files: Engram's, the raw baseline (its vec0 table with the store's chunk size, as every raw figure) and the
 * raw baseline with vec0's default chunk size (1,024 vectors), what a vec0 table created without `chunk_size`
 * costs. Seconds: 1,000 rows a file (the default-size file is 600 MB at 1,536-d).
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { createSqliteMemoryStore, vectorChunkSize } from '@engram/store-sqlite';
import { openDatabase, type SqliteDatabase } from '@engram/store-sqlite/raw';
import { agentId, BENCH_NOW, openRaw, rawAgentToken } from './ingest.js';
import { rowText } from './workload.js';

/** Agents and rows per agent of the small-agents figure. */
export const SMALL_AGENTS = { agents: 100, rowsPerAgent: 10 } as const;

/** Database bytes per row with many small agents (see the top of `small-agents.ts`). */
export interface BenchSmallAgents {
  readonly agents: number;
  readonly rowsPerAgent: number;
  /** The vec0 chunk size of Engram's table and of the raw baseline's (vectors). */
  readonly chunkSize: number;
  readonly bytesPerRow: number;
  readonly rawBytesPerRow: number;
  /** The raw baseline with vec0's default chunk size (1,024 vectors). */
  readonly rawDefaultChunkBytesPerRow: number;
}

function databaseBytes(path: string): number {
  const db = openDatabase(path, { readonly: true });
  try {
    const row = db
      .prepare('SELECT p.page_count * s.page_size AS bytes FROM pragma_page_count() p, pragma_page_size() s')
      .get() as { bytes: number };
    return row.bytes;
  } finally {
    db.close();
  }
}

function fillRaw(db: SqliteDatabase, vectorOf: (text: string) => Float32Array): void {
  const vec = db.prepare('INSERT INTO raw_vec(rowid, agent_id, embedding) VALUES (?, ?, ?)');
  const fts = db.prepare('INSERT INTO raw_fts(rowid, agent, content) VALUES (?, ?, ?)');
  db.exec('BEGIN');
  for (let a = 0; a < SMALL_AGENTS.agents; a += 1) {
    for (let j = 0; j < SMALL_AGENTS.rowsPerAgent; j += 1) {
      const i = a * SMALL_AGENTS.rowsPerAgent + j;
      const text = rowText(i);
      fts.run(i + 1, rawAgentToken(a), text.normalize('NFKC'));
      vec.run(BigInt(i + 1), agentId(a), vectorOf(text));
    }
  }
  db.exec('COMMIT');
}

/** Writes the three small-agents files in `dir` (removed after), and returns their bytes per row. */
export async function measureSmallAgents(input: {
  readonly dir: string;
  readonly name: string;
  readonly dimensions: number;
  readonly profileId: string;
  readonly vectorOf: (text: string) => Float32Array;
}): Promise<BenchSmallAgents> {
  const { dir, name, dimensions, profileId, vectorOf } = input;
  const rows = SMALL_AGENTS.agents * SMALL_AGENTS.rowsPerAgent;
  const paths = ['engram', 'raw', 'rawdefault'].map((p) => join(dir, `${name}-small-${p}.sqlite`));
  const [engramPath, rawPath, defaultPath] = paths as [string, string, string];
  try {
    const store = createSqliteMemoryStore({
      path: engramPath,
      embedding: { id: profileId, dimensions },
      now: () => BENCH_NOW,
      vectorWorker: false,
    });
    try {
      for (let a = 0; a < SMALL_AGENTS.agents; a += 1) {
        await store.insertMemories(
          Array.from({ length: SMALL_AGENTS.rowsPerAgent }, (_, j) => {
            const i = a * SMALL_AGENTS.rowsPerAgent + j;
            const text = rowText(i);
            return {
              id: `s${i}`,
              agentId: agentId(a),
              kind: 'event' as const,
              content: text,
              vector: vectorOf(text),
            };
          }),
        );
      }
    } finally {
      store.close();
    }
    for (const [path, chunkSize] of [
      [rawPath, vectorChunkSize(dimensions)],
      [defaultPath, null],
    ] as const) {
      const db = openRaw(path, dimensions, chunkSize);
      try {
        fillRaw(db, vectorOf);
      } finally {
        db.close();
      }
    }
    return {
      agents: SMALL_AGENTS.agents,
      rowsPerAgent: SMALL_AGENTS.rowsPerAgent,
      chunkSize: vectorChunkSize(dimensions),
      bytesPerRow: databaseBytes(engramPath) / rows,
      rawBytesPerRow: databaseBytes(rawPath) / rows,
      rawDefaultChunkBytesPerRow: databaseBytes(defaultPath) / rows,
    };
  } finally {
    for (const path of paths) {
      for (const suffix of ['', '-wal', '-shm']) rmSync(`${path}${suffix}`, { force: true });
    }
  }
}
