/**
 * vec0's chunk tables indexed by partition (schema v13, `vec0PartitionIndexSql`): sqlite-vec 0.1.x finds an
 * agent's chunks in `<table>_chunks` by `partition00`, which it does not index, so each k-NN, each insert and the
 * dispatch probe read every agent's chunk rows. The index is there on new files, on files migrated from v12
 * (same answers), after `resetEmbeddings` and with every quantised table; with it, the lookup of one agent's
 * chunks seeks the index instead of scanning the table.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NewMemory, VectorHit } from '@engram/store/port-kit';
import { mulberry32 } from '@engram/test-support/prng';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase } from './native.js';
import { SCHEMA_VERSION, VEC0_TABLES, vec0PartitionIndexSql } from './schema.js';
import type { StoreContext } from './sqlite/context.js';
import { openStoreContext } from './sqlite/open.js';
import { CHUNK_CAPACITY_SQL } from './sqlite/vector-partition.js';
import { QUANT_TABLE, type VectorQuantization } from './sqlite/vector-quant.js';
import { insertMemories } from './sqlite/write.js';
import { createSqliteMemoryStore, type SqliteMemoryStore } from './sqlite-store.js';

const DIMS = 32;
let dir: string;
const open: SqliteMemoryStore[] = [];
let ctx: StoreContext | undefined;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'engram-vec-partition-'));
});

afterEach(() => {
  for (const s of open.splice(0)) s.close();
  ctx?.close();
  ctx = undefined;
  rmSync(dir, { recursive: true, force: true });
});

function openStore(
  path: string,
  dimensions: number | null = DIMS,
  quantization?: VectorQuantization,
): SqliteMemoryStore {
  const store = createSqliteMemoryStore({
    path,
    embedding: dimensions === null ? null : { id: `p${dimensions}`, dimensions },
    vectorWorker: false,
    ...(quantization === undefined ? {} : { vectorIndex: { quantization } }),
  });
  open.push(store);
  return store;
}

function closeAll(): void {
  for (const s of open.splice(0)) s.close();
}

/** The indexes on vec0 chunk tables, as `table: index` (read on a connection of its own). */
function chunkIndexes(path: string): string[] {
  const db = openDatabase(path);
  try {
    return (
      db
        .prepare(
          "SELECT tbl_name, name FROM sqlite_master WHERE type = 'index' AND tbl_name GLOB 'memories_vec*_chunks' ORDER BY tbl_name, name",
        )
        .all() as { tbl_name: string; name: string }[]
    ).map((r) => `${r.tbl_name}: ${r.name}`);
  } finally {
    db.close();
  }
}

const FLOAT_INDEX = 'memories_vec_chunks: memories_vec_chunks_partition';
const QUANT_INDEX = 'memories_vec_quant_chunks: memories_vec_quant_chunks_partition';

const random = mulberry32(17);
const unit = (dimensions = DIMS): Float32Array => {
  const v = Float32Array.from({ length: dimensions }, () => random() - 0.5);
  const norm = Math.hypot(...v);
  return v.map((x) => x / norm);
};

/** `n` memories of `agentId` with random vectors. */
function rows(agentId: string, n: number, dimensions = DIMS): NewMemory[] {
  return Array.from({ length: n }, (_, i) => ({
    id: `${agentId}-${i}`,
    agentId,
    kind: 'event' as const,
    content: `memory ${agentId} ${i}`,
    importance: 0.5,
    vector: unit(dimensions),
  }));
}

describe('the partition index of vec0 chunk tables', () => {
  it('comes with every vector table a new file gets, float and quantised; a file without a profile has none', async () => {
    const plain = join(dir, 'plain.db');
    await openStore(plain).insertMemories(rows('a', 3));
    const quant = join(dir, 'quant.db');
    await openStore(quant, DIMS, 'int8').insertMemories(rows('a', 3));
    const none = join(dir, 'none.db');
    await openStore(none, null).insertMemory({ agentId: 'a', kind: 'fact', content: 'no vectors here' });
    closeAll();
    expect(chunkIndexes(plain)).toEqual([FLOAT_INDEX]);
    expect(chunkIndexes(quant)).toEqual([FLOAT_INDEX, QUANT_INDEX]);
    expect(chunkIndexes(none)).toEqual([]);
    // The migration's list of vec0 tables names the quantised one.
    expect(VEC0_TABLES).toEqual(['memories_vec', QUANT_TABLE]);
  });

  it('is added to a version-12 file by the migration, with the same answers and an intact file', async () => {
    const path = join(dir, 'v12.db');
    const first = openStore(path, DIMS, 'bit');
    for (const agent of ['big', 'small-1', 'small-2']) {
      await first.insertMemories(rows(agent, agent === 'big' ? 1500 : 20));
    }
    const queries = Array.from({ length: 4 }, () => unit());
    const answers = async (store: SqliteMemoryStore): Promise<VectorHit[][]> => {
      const out: VectorHit[][] = [];
      for (const vector of queries) {
        for (const agentId of ['big', 'small-1', 'small-2', 'absent']) {
          out.push([...(await store.searchVector({ agentId, vector, k: 10 }))]);
        }
      }
      return out;
    };
    const before = await answers(first);
    expect(before.filter((hits) => hits.length === 10)).toHaveLength(12);
    closeAll();
    // What version 12 wrote: the same tables without the two indexes.
    const raw = openDatabase(path);
    try {
      raw.exec('DROP INDEX memories_vec_chunks_partition; DROP INDEX memories_vec_quant_chunks_partition');
      raw.prepare("UPDATE meta SET value = '12' WHERE key = 'schema_version'").run();
    } finally {
      raw.close();
    }
    expect(chunkIndexes(path)).toEqual([]);

    const store = openStore(path, DIMS, 'bit');
    expect(store.info.schemaVersion).toBe(SCHEMA_VERSION);
    expect(SCHEMA_VERSION).toBe(20);
    expect(chunkIndexes(path)).toEqual([FLOAT_INDEX, QUANT_INDEX]);
    expect(await answers(store)).toEqual(before);
    // vec0 keeps writing through the index: new chunks of a small agent, a delete, then the same k-NN again.
    await store.insertMemories(rows('small-3', 300));
    await store.deleteMemory('small-1', 'small-1-0');
    const hits = await store.searchVector({ agentId: 'small-3', vector: queries[0] as Float32Array, k: 300 });
    expect(hits).toHaveLength(300);
    expect((await store.checkIntegrity()).state).toBe('ok');
    closeAll();
    const db = openDatabase(path);
    try {
      expect(db.prepare('PRAGMA integrity_check').all()).toEqual([{ integrity_check: 'ok' }]);
      for (const table of VEC0_TABLES) {
        const all = db.prepare(`SELECT count(*) AS n FROM ${table}_chunks`).get() as { n: number };
        const indexed = db
          .prepare(
            `SELECT count(*) AS n FROM ${table}_chunks INDEXED BY ${table}_chunks_partition WHERE partition00 IS NOT NULL`,
          )
          .get() as { n: number };
        expect(indexed.n).toBe(all.n);
      }
    } finally {
      db.close();
    }
  });

  it('is migrated on a version-12 file without an embedder profile: nothing to index, the file opens', async () => {
    const path = join(dir, 'none-v12.db');
    const stored = await openStore(path, null).insertMemory({
      agentId: 'a',
      kind: 'fact',
      content: 'no vectors here',
    });
    closeAll();
    const raw = openDatabase(path);
    try {
      raw.prepare("UPDATE meta SET value = '12' WHERE key = 'schema_version'").run();
    } finally {
      raw.close();
    }
    const store = openStore(path, null);
    expect(store.info.schemaVersion).toBe(SCHEMA_VERSION);
    expect((await store.getMemory('a', stored.id))?.content).toBe('no vectors here');
    closeAll();
    expect(chunkIndexes(path)).toEqual([]);
  });

  it('takes only a plain table name (the exported helper pastes it into its SQL)', () => {
    expect(vec0PartitionIndexSql('raw_vec')).toBe(
      'CREATE INDEX IF NOT EXISTS raw_vec_chunks_partition ON raw_vec_chunks(partition00)',
    );
    for (const bad of ['raw vec', 'x; DROP TABLE memories', '"q"', '1abc', '']) {
      expect(() => vec0PartitionIndexSql(bad)).toThrow(TypeError);
    }
  });

  it('is recreated with the tables resetEmbeddings and resetVectorIndex recreate', async () => {
    const path = join(dir, 'reset.db');
    const store = openStore(path);
    await store.insertMemories(rows('a', 40));
    await store.resetEmbeddings({ id: 'p48', dimensions: 48 });
    expect(chunkIndexes(path)).toEqual([FLOAT_INDEX]);
    await store.insertMemories(rows('b', 40, 48));
    expect(await store.resetVectorIndex({ quantization: 'int8' })).toEqual({ indexed: 40 });
    expect(chunkIndexes(path)).toEqual([FLOAT_INDEX, QUANT_INDEX]);
    expect(await store.resetVectorIndex({ quantization: 'bit' })).toEqual({ indexed: 40 });
    expect(chunkIndexes(path)).toEqual([FLOAT_INDEX, QUANT_INDEX]);
    await store.resetEmbeddings({ id: 'p64', dimensions: 64 });
    expect(chunkIndexes(path)).toEqual([FLOAT_INDEX, QUANT_INDEX]);
    // Dropping the quantised table drops its index with it.
    expect(await store.resetVectorIndex({ quantization: 'none' })).toEqual({ indexed: 0 });
    expect(chunkIndexes(path)).toEqual([FLOAT_INDEX]);
    await store.resetEmbeddings(null);
    expect(chunkIndexes(path)).toEqual([]);
  });
});

describe("the lookup of one agent's chunks", () => {
  /** The plan of `sql` with every parameter bound to an agent id. */
  function plan(c: StoreContext, sql: string): string {
    return (c.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all('agent') as { detail: string }[])
      .map((r) => r.detail)
      .join(' | ');
  }

  it("seeks the partition index in the dispatch probe and in vec0's own chunk statements, never scans", async () => {
    const c = openStoreContext({
      path: ':memory:',
      embedding: { id: `p${DIMS}`, dimensions: DIMS },
      vectorIndex: { quantization: 'int8' },
    });
    ctx = c;
    await insertMemories(c, [...rows('a', 5), ...rows('b', 5)]);
    // The statements sqlite-vec 0.1.9 prepares on a chunk table for one partition: the last chunk an insert
    // fills, and the chunks a k-NN reads (its text, up to whitespace).
    const vec0Statements = (table: string): string[] => [
      `SELECT max(rowid) FROM "main"."${table}_chunks" WHERE partition00 = ?`,
      `select chunk_id, validity, rowids from "main"."${table}_chunks" WHERE partition00 = ?`,
    ];
    const statements = [
      CHUNK_CAPACITY_SQL,
      ...vec0Statements('memories_vec'),
      ...vec0Statements(QUANT_TABLE),
    ];
    for (const sql of statements) {
      const detail = plan(c, sql);
      expect(detail).not.toMatch(/SCAN/);
      expect(detail).toMatch(
        /^SEARCH (main\.)?memories_vec(_quant)?_chunks USING (COVERING )?INDEX memories_vec(_quant)?_chunks_partition \(partition00=\?\)$/,
      );
    }
  });
});
