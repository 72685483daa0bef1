/**
 * Schema version 15: the search indexes get their `user_key` (`user-key.ts`). The keys of the memories that have
 * a user are computed once into a temporary table (rid → key); the agent's own rows keep 0.
 *
 * The BM25 postings (both levels) get the column with 0 and then their memories' keys, in one pass over each
 * table. vec0 can neither add a column nor rename a table, so the float vector table is rebuilt: its vectors are
 * copied to a temporary table, the table is dropped and created again with the metadata column (the same
 * declaration otherwise: a file keeps its chunk size), and every vector goes back with its memory's key. The
 * quantised table (a copy of the float one) is dropped; the migration's binding step creates it again and the
 * writable open rebuilds it from the float vectors (`vector-quant-build.ts`), as after a change of the vector
 * index setting.
 */
import { fillUserStatKeys, LEXICAL_USER_STATS_DDL, REBUILD_LEXICAL_USER_STATS } from '../lexical-index.js';
import type { SqliteDatabase } from '../native.js';
import { vec0PartitionIndexSql } from '../schema.js';
import { CHUNK_KEY_SPAN } from './chunks.js';
import { NO_USER_KEY, userKey } from './user-key.js';

/** The float table's declaration with the column: inserted after the partition key. */
const PARTITION_DECLARATION = /agent_id\s+text\s+partition\s+key\s*,/i;

/** Rows read per statement (bounds the memory a page of vectors holds). */
const PAGE = 1024;

/** The postings tables (`lexical-postings.ts`). */
const POSTINGS_TABLES = ['lexical_postings', 'lexical_postings_fresh'];

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

/** Fills `temp.engram_user_keys(rid, k)` with the key of every memory that has a user. */
function computeKeys(db: SqliteDatabase): void {
  db.exec('CREATE TEMP TABLE engram_user_keys (rid INTEGER PRIMARY KEY, k INTEGER NOT NULL)');
  const page = db.prepare(
    `SELECT rid, user_id AS u FROM memories WHERE user_id IS NOT NULL AND rid > ? ORDER BY rid LIMIT ${PAGE}`,
  );
  const insert = db.prepare('INSERT INTO temp.engram_user_keys(rid, k) VALUES (?, ?)');
  let last = -1;
  for (;;) {
    const rows = page.all(last) as { rid: number; u: string }[];
    for (const r of rows) insert.run(r.rid, userKey(r.u));
    if (rows.length < PAGE) return;
    last = (rows[rows.length - 1] as { rid: number }).rid;
  }
}

/** The postings' column, filled (a table that has the column already is left as it is). */
function addPostingKeys(db: SqliteDatabase): void {
  for (const table of POSTINGS_TABLES) {
    if (!hasTable(db, table) || hasColumn(db, table, 'user_key')) continue;
    db.exec(`ALTER TABLE ${table} ADD COLUMN user_key INTEGER NOT NULL DEFAULT 0`);
    db.exec(`UPDATE ${table} SET user_key = (
        SELECT u.k FROM temp.engram_user_keys u WHERE u.rid = ${table}.rid % ${CHUNK_KEY_SPAN})
      WHERE rid % ${CHUNK_KEY_SPAN} IN (SELECT rid FROM temp.engram_user_keys)`);
  }
}

/**
 * The migration (see the top of this file), inside the migration's transaction: a file without a vector table
 * gets the postings' keys only, a table that has the column already is left as it is.
 */
export function addUserKeys(db: SqliteDatabase): void {
  computeKeys(db);
  addPostingKeys(db);
  rebuildVectors(db);
  db.exec('DROP TABLE temp.engram_user_keys');
}

/** The vector tables' part: the float table rebuilt with its keys, the quantised one dropped. */
function rebuildVectors(db: SqliteDatabase): void {
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
    `SELECT c.k AS k, c.a AS a, coalesce(u.k, ${NO_USER_KEY}) AS u, c.e AS e FROM temp.engram_vec_copy c
     LEFT JOIN temp.engram_user_keys u ON u.rid = c.k % ${CHUNK_KEY_SPAN}
     WHERE c.k > ? ORDER BY c.k LIMIT ${PAGE}`,
  );
  const insert = db.prepare(
    'INSERT INTO memories_vec(rowid, agent_id, user_key, embedding) VALUES (?, ?, ?, ?)',
  );
  let last = -1;
  for (;;) {
    const rows = page.all(last) as { k: number; a: string; u: number; e: Uint8Array }[];
    for (const r of rows) insert.run(BigInt(r.k), r.a, BigInt(r.u), r.e);
    if (rows.length < PAGE) break;
    last = (rows[rows.length - 1] as { k: number }).k;
  }
  db.exec('DROP TABLE temp.engram_vec_copy');
}

/**
 * Schema version 20: each BM25 unit's row (`lexical_docs`) gets its memory's user id (null for the agent's own),
 * and the agent's statistics are kept per user too (`lexical_user_stats`), computed here from the units (see
 * `LEXICAL_USER_STATS_DDL`). A file that has the column already keeps it; the statistics are always recomputed.
 */
export function addUnitUsers(db: SqliteDatabase): void {
  if (!hasColumn(db, 'lexical_docs', 'user_id')) {
    db.exec('ALTER TABLE lexical_docs ADD COLUMN user_id TEXT');
    db.exec(`UPDATE lexical_docs SET user_id = (
        SELECT m.user_id FROM memories m WHERE m.rid = lexical_docs.rid % ${CHUNK_KEY_SPAN})`);
  }
  db.exec(LEXICAL_USER_STATS_DDL);
  db.exec(REBUILD_LEXICAL_USER_STATS);
  fillUserStatKeys(db);
}
