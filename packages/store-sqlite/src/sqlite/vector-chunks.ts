/**
 * Damaged vector chunks: sqlite-vec keeps each vec0 table's vectors in blobs of `size` slots
 * (`<table>_vector_chunks00`), and it reads a chunk's whole blob to find, read or delete any one of its vectors.
 * Another tool can rewrite such a blob (sqlite-vec 0.1.9 does not protect that table as it protects its others);
 * a blob of the wrong length then makes every statement touching one of its vectors fail, forgetting included.
 *
 * Vectors are derived data, so a damaged chunk is repaired by giving it a blob of its right length (zeros),
 * deleting its vectors through vec0, and marking their memories (or chunks) `pending`: the drain embeds them
 * again from their text. Nothing the user wrote is lost, and the integrity check counts such chunks
 * (`IntegrityResult.damagedVectorChunks`) until they are repaired.
 */
import type { SqliteDatabase } from '../native.js';
import { CHUNK_KEY_SPAN, CHUNK_VEC_PENDING, CHUNK_VEC_READY } from './chunks.js';
import type { StoreContext } from './context.js';

/** The vec0 tables whose chunks are checked: the float index and the quantised one. */
const VEC_TABLES = ['memories_vec', 'memories_vec_quant'] as const;

/** The driver messages of a vec0 statement that could not read a chunk's vector blob. */
const CHUNK_READ_FAILURE =
  /could not fetch vector data|vectors? blob (?:size|read)|(?:open|write to) vectors? blob|vector blob size mismatch/i;

/** Whether a driver error is a vec0 statement failing on a damaged chunk blob (read at this edge only). */
export function isVectorChunkFailure(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const { code, message } = err as { code?: unknown; message?: unknown };
  return code === 'SQLITE_ERROR' && typeof message === 'string' && CHUNK_READ_FAILURE.test(message);
}

/** The bytes one vector takes in a vec0 table, from its declaration (null: not a table this module knows). */
function bytesPerVector(db: SqliteDatabase, table: string): number | null {
  const row = db.prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?").get(table) as
    | { sql?: unknown }
    | undefined;
  if (typeof row?.sql !== 'string') return null;
  const m = /\bembedding\s+(float|int8|bit)\[(\d+)\]/i.exec(row.sql);
  if (m === null) return null;
  const dims = Number(m[2]);
  const kind = (m[1] ?? '').toLowerCase();
  return kind === 'float' ? dims * 4 : kind === 'int8' ? dims : Math.ceil(dims / 8);
}

interface DamagedChunk {
  readonly table: string;
  readonly chunkId: number;
  readonly bytes: number;
}

/** The chunks of every vec0 table whose vector blob is missing, not a blob or not `size` vectors long. */
function findDamaged(db: SqliteDatabase): DamagedChunk[] {
  const out: DamagedChunk[] = [];
  for (const table of VEC_TABLES) {
    const per = bytesPerVector(db, table);
    if (per === null) continue;
    const rows = db
      .prepare(
        `SELECT c.chunk_id AS id, c.size AS size FROM "${table}_chunks" c
         LEFT JOIN "${table}_vector_chunks00" v ON v.rowid = c.chunk_id
         WHERE v.rowid IS NULL OR typeof(v.vectors) <> 'blob' OR length(v.vectors) <> c.size * ${per}`,
      )
      .all() as { id: number; size: number }[];
    for (const r of rows) {
      const size = Number(r.size);
      if (Number.isSafeInteger(size) && size > 0) out.push({ table, chunkId: r.id, bytes: size * per });
    }
  }
  return out;
}

/** How many vector chunks are damaged (0 when the file has no vector index). Read-only. */
export function countDamagedVectorChunks(db: SqliteDatabase): number {
  return findDamaged(db).length;
}

/**
 * Repairs every damaged chunk (see the module comment) and returns how many chunks it repaired and how many
 * vectors it dropped. Must run inside a write transaction. A vector of the quantised table only is dropped and quantised again by the integrity
 * repair from its float copy; one of the float table leaves its memory (or chunk) `pending`.
 */
export function repairVectorChunks(ctx: StoreContext): { readonly chunks: number; readonly vectors: number } {
  const damaged = findDamaged(ctx.db);
  let dropped = 0;
  for (const chunk of damaged) {
    ctx
      .stmt(
        'vector',
        `INSERT INTO "${chunk.table}_vector_chunks00"(rowid, vectors) VALUES (?, zeroblob(?))
         ON CONFLICT(rowid) DO UPDATE SET vectors = excluded.vectors`,
      )
      .run(chunk.chunkId, chunk.bytes);
    const keys = ctx
      .stmt('vector', `SELECT rowid AS key FROM "${chunk.table}_rowids" WHERE chunk_id = ?`)
      .all<{ key: number | bigint }>(chunk.chunkId);
    const drop = ctx.stmt('vector', `DELETE FROM "${chunk.table}" WHERE rowid = ?`);
    for (const { key } of keys) {
      drop.run(key);
      dropped += 1;
      if (chunk.table !== 'memories_vec') continue;
      const k = BigInt(key);
      const rid = Number(k % BigInt(CHUNK_KEY_SPAN));
      const idx = Number(k / BigInt(CHUNK_KEY_SPAN));
      ctx
        .stmt(
          'write',
          `UPDATE memory_chunks SET vec = ${CHUNK_VEC_PENDING} WHERE rid = ? AND idx = ? AND vec = ${CHUNK_VEC_READY}`,
        )
        .run(rid, idx);
      ctx
        .stmt(
          'write',
          `UPDATE memories SET embedding_state = 'pending', embedding_fingerprint = NULL, embedding_attempts = 0
           WHERE rid = ? AND embedding_state = 'ready'`,
        )
        .run(rid);
    }
  }
  return { chunks: damaged.length, vectors: dropped };
}
