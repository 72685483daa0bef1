/**
 * Schema version 15: the vec0 tables get their `user_key` metadata column (`user-key.ts`). vec0 can neither add a
 * column nor rename a table, so the float table is rebuilt: its vectors are copied to a temporary table, the
 * table is dropped and created again with the column (the same declaration otherwise: a file keeps its chunk
 * size), and every vector goes back with its memory's key. The quantised table (a copy of the float one) is
 * dropped; the migration's binding step creates it again and the writable open rebuilds it from the float
 * vectors (`vector-quant-build.ts`), as for a file that changed its vector index setting.
 */
import type { SqliteDatabase } from '../native.js';
import { vec0PartitionIndexSql } from '../schema.js';
import { CHUNK_KEY_SPAN } from './chunks.js';
import { userKey } from './user-key.js';

/** The float table's declaration with the column: inserted after the partition key. */
const PARTITION_DECLARATION = /agent_id\s+text\s+partition\s+key\s*,/i;

/** Vectors copied per statement (bounds the memory a page of vectors holds). */
const PAGE = 1024;

function hasTable(db: SqliteDatabase, name: string): boolean {
  return (
    db.prepare("SELECT 1 AS x FROM sqlite_master WHERE type = 'table' AND name = ?").get(name) !== undefined
  );
}

function hasColumn(db: SqliteDatabase, table: string, column: string): boolean {
  return (
    db.prepare('SELECT 1 AS x FROM pragma_table_info(?) WHERE name = ?').get(table, column) !== undefined
  );
}

/** Copies the float vectors to `temp.engram_vec_copy(k, a, e)`: from vec0's chunk blobs, or row by row. */
function copyVectors(db: SqliteDatabase): void {
  db.exec('CREATE TEMP TABLE engram_vec_copy (k INTEGER PRIMARY KEY, a TEXT NOT NULL, e BLOB NOT NULL)');
  const insert = db.prepare('INSERT INTO temp.engram_vec_copy(k, a, e) VALUES (?, ?, ?)');
  if (!hasTable(db, 'memories_vec_chunks') || !hasTable(db, 'memories_vec_vector_chunks00')) {
    // Another vec0 layout: its own scan (slower, each vector read by key).
    db.exec('INSERT INTO temp.engram_vec_copy(k, a, e) SELECT rowid, agent_id, embedding FROM memories_vec');
    return;
  }
  // vec0's chunks, as `vector-quant-build.ts` reads them: a validity bitmap, the slots' rowids (little-endian
  // 64-bit) and the slots' vectors, one chunk at a time (a vec0 scan cannot run while a statement writes).
  const next = db.prepare(
    `SELECT c.chunk_id AS chunk, c.partition00 AS agent, c.size AS size, c.validity AS validity,
       c.rowids AS rowids, v.vectors AS vectors
     FROM memories_vec_chunks c JOIN memories_vec_vector_chunks00 v ON v.rowid = c.chunk_id
     WHERE c.chunk_id > ? ORDER BY c.chunk_id LIMIT 1`,
  );
  let last = -1;
  for (;;) {
    const c = next.get(last) as
      | {
          chunk: number;
          agent: string;
          size: number;
          validity: Uint8Array;
          rowids: Uint8Array;
          vectors: Uint8Array;
        }
      | undefined;
    if (c === undefined) return;
    last = c.chunk;
    const width = c.vectors.byteLength / c.size;
    const ids = new DataView(c.rowids.buffer, c.rowids.byteOffset, c.rowids.byteLength);
    for (let slot = 0; slot < c.size; slot += 1) {
      if ((((c.validity[slot >> 3] as number) >> (slot & 7)) & 1) === 0) continue;
      insert.run(
        ids.getBigInt64(slot * 8, true),
        c.agent,
        c.vectors.subarray(slot * width, (slot + 1) * width),
      );
    }
  }
}

/**
 * The migration: rebuilds the float table with `user_key` (nothing for a file without one, or one that has the
 * column already) and drops the quantised table (rebuilt after the migration). Inside the migration's
 * transaction.
 */
export function addVectorUserKeys(db: SqliteDatabase): void {
  if (hasTable(db, 'memories_vec_quant') && !hasColumn(db, 'memories_vec_quant', 'user_key')) {
    db.exec('DROP TABLE memories_vec_quant');
  }
  if (!hasTable(db, 'memories_vec') || hasColumn(db, 'memories_vec', 'user_key')) return;
  const declared = (
    db.prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'memories_vec'").get() as {
      sql: string;
    }
  ).sql;
  const sql = PARTITION_DECLARATION.test(declared)
    ? declared.replace(PARTITION_DECLARATION, (m) => `${m} user_key integer,`)
    : null;
  if (sql === null) throw new TypeError('the vector table has an unknown declaration');
  copyVectors(db);
  db.exec('DROP TABLE memories_vec');
  db.exec(sql);
  db.exec(vec0PartitionIndexSql('memories_vec'));
  const page = db.prepare(
    `SELECT c.k AS k, c.a AS a, m.user_id AS u, c.e AS e FROM temp.engram_vec_copy c
     LEFT JOIN memories m ON m.rid = c.k % ${CHUNK_KEY_SPAN}
     WHERE c.k > ? ORDER BY c.k LIMIT ${PAGE}`,
  );
  const insert = db.prepare(
    'INSERT INTO memories_vec(rowid, agent_id, user_key, embedding) VALUES (?, ?, ?, ?)',
  );
  let last = -1;
  for (;;) {
    const rows = page.all(last) as { k: number; a: string; u: string | null; e: Uint8Array }[];
    for (const r of rows) insert.run(BigInt(r.k), r.a, BigInt(userKey(r.u)), r.e);
    if (rows.length < PAGE) break;
    last = (rows[rows.length - 1] as { k: number }).k;
  }
  db.exec('DROP TABLE temp.engram_vec_copy');
}
