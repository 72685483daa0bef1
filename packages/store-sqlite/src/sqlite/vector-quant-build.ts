/**
 * Building the quantised table (`vector-quant.ts`) from the stored float vectors, in bounded transactions.
 *
 * One transaction over every vector would make the build super-linear: the write-ahead log would grow by the
 * whole table (about 1 GB per 100,000 vectors at 1536-d with `int8`), and every page read during the build would
 * look it up in an ever larger WAL index. In transactions of about 10,000 vectors the WAL stays small and each
 * step costs about the same however large the table.
 *
 * The build is resumable and crash-safe: `prepareQuantIndex` creates the empty table and records a watermark
 * (`vector_index_build` in `meta`, the last float chunk done) in the same transaction as the setting; each
 * `finishQuantIndex` step reads the watermark under the write lock, quantises the next float chunks and moves
 * the watermark in its own transaction; the last step deletes it. While the watermark exists the table is
 * incomplete: a writable open finishes the build before it returns, a read-only open searches with the exact
 * float k-NN (`StoreContext.quantReady`), and a step skips a vector that already has its quantised copy (one
 * written by a store while the build was pending), so two processes can finish one build together.
 */

import type { EmbeddingProfile } from '@engram/store/port-kit';
import type { SqliteStatement } from '../native.js';
import { VEC0_DEFAULT_CHUNK_SIZE } from '../schema.js';
import type { StoreContext } from './context.js';
import {
  hasQuantTable,
  parseRecordedQuantization,
  QUANT_BUILD_META,
  QUANT_TABLE,
  quantize,
  quantTableSql,
  typed,
  VECTOR_INDEX_META,
  type VectorQuantization,
} from './vector-quant.js';

/** The meta key of an unfinished build: the last float chunk (vec0 `chunk_id`) whose vectors are quantised. */
export { QUANT_BUILD_META };

/**
 * Float vector bytes one build step quantises at most (about 10,000 vectors at 1536-d): bounds the WAL. An
 * internal knob (tests lower it to build in many steps), not part of the store's API.
 */
export const QUANT_BUILD_STEP: { bytes: number } = { bytes: 64 * 1024 * 1024 };

/**
 * Makes the quantised table match `quantization` for `profile` inside the caller's transaction: drops it when it
 * is of another kind (or not wanted, or `rebuild`), creates it empty, and records the build watermark when there
 * are float vectors to quantise. `finishQuantIndex` fills it afterwards, outside the caller's transaction.
 */
export function prepareQuantIndex(
  ctx: StoreContext,
  quantization: VectorQuantization,
  profile: EmbeddingProfile | null,
  rebuild: boolean,
): void {
  const db = ctx.db;
  const exists = hasQuantTable(db);
  if (exists && (rebuild || quantization === 'none' || profile === null)) {
    db.exec(`DROP TABLE IF EXISTS ${QUANT_TABLE}`);
    ctx.count('meta');
  } else if (exists) {
    return;
  }
  ctx.stmt('meta', 'DELETE FROM meta WHERE key = ?').run(QUANT_BUILD_META);
  if (quantization === 'none' || profile === null) return;
  db.exec(quantTableSql(quantization, profile.dimensions) as string);
  ctx.count('meta');
  // Only a float table with vectors needs a build (a new file, or one just reset, has none).
  if (
    hasTable(ctx, 'memories_vec') &&
    ctx.db.prepare('SELECT rowid FROM memories_vec LIMIT 1').get() !== undefined
  ) {
    ctx.stmt('meta', 'INSERT INTO meta(key, value) VALUES (?, ?)').run(QUANT_BUILD_META, '0');
  }
}

/** True when the file records an unfinished build. */
export function quantBuildPending(ctx: StoreContext): boolean {
  return (
    ctx.stmt('meta', 'SELECT value FROM meta WHERE key = ?').get<{ value: string }>(QUANT_BUILD_META) !==
    undefined
  );
}

/**
 * Finishes a recorded build, one bounded transaction per step (see the top of this file); nothing when none is
 * recorded. Returns how many vectors it quantised. With an `onIndexProgress` callback, reports after each step
 * and at the end (see `progressOf`).
 */
export function finishQuantIndex(
  ctx: StoreContext,
  quantization: VectorQuantization,
  dimensions: number,
): number {
  const progress = progressOf(ctx, quantization);
  let total = 0;
  let steps = 0;
  // Statements on the quantised table are prepared per build, not cached: the table was just recreated.
  const stmts = new Map<string, SqliteStatement>();
  const prepare = (sql: string): SqliteStatement => {
    let st = stmts.get(sql);
    if (st === undefined) {
      st = ctx.db.prepare(sql);
      stmts.set(sql, st);
    }
    return st;
  };
  for (;;) {
    const step = ctx.tx(() => buildStep(ctx, prepare, quantization, dimensions));
    total += step.written;
    steps += 1;
    // An abandoned build (another process reset the index to another kind) is not reported as complete.
    progress?.(steps, total, step.done && !step.abandoned);
    if (step.done) return total;
  }
}

/**
 * The build's progress reporter, or null without a callback (or with nothing to build): counts the float
 * vectors and those that already have their quantised copy once, before the first step (two counts of the
 * vec0 rowid tables: tens of milliseconds at a million vectors, against minutes of build), then reports
 * `done` = that count + the vectors written since, never above `total`, and `done === total` at the end — except
 * when another process reset the index to another kind meanwhile: this build stops, and its last report says how
 * far it got. What the callback throws (or an async callback rejects with) is ignored: it must not stop or
 * corrupt the build.
 */
function progressOf(
  ctx: StoreContext,
  quantization: VectorQuantization,
): ((steps: number, written: number, finished: boolean) => void) | null {
  const callback = ctx.onIndexProgress;
  if (callback === null || quantization === 'none' || !quantBuildPending(ctx)) return null;
  const count = (table: string): number =>
    hasTable(ctx, table)
      ? (ctx.stmt('vector', `SELECT count(*) AS n FROM ${table}`).get<{ n: number }>()?.n ?? 0)
      : 0;
  const rowids = (table: string): string => (hasTable(ctx, `${table}_rowids`) ? `${table}_rowids` : table);
  const total = count(rowids('memories_vec'));
  const before = Math.min(total, count(rowids(QUANT_TABLE)));
  const report = (step: number, done: number): void => {
    try {
      // A callback typed `=> void` may still be async: its rejection is swallowed too, not left unhandled.
      const returned: unknown = callback({ phase: 'vectorIndex', quantization, step, done, total });
      if (returned instanceof Promise) returned.catch(() => undefined);
    } catch {
      // A progress callback's failure never changes the build.
    }
  };
  report(0, before);
  return (steps, written, finished) => report(steps, finished ? total : Math.min(total, before + written));
}

function hasTable(ctx: StoreContext, name: string): boolean {
  return (
    ctx
      .stmt('meta', "SELECT 1 AS x FROM sqlite_master WHERE type = 'table' AND name = ?")
      .get<{ x: number }>(name) !== undefined
  );
}

/** The shadow tables of sqlite-vec 0.1.x's `vec0` (one float column, one partition key) that a step reads. */
const SHADOW_TABLES = [
  'memories_vec_chunks',
  'memories_vec_vector_chunks00',
  'memories_vec_metadatachunks00',
  `${QUANT_TABLE}_rowids`,
];

/** One step: quantises the float chunks after the watermark, up to `QUANT_BUILD_STEP` bytes of vectors, and moves it. */
function buildStep(
  ctx: StoreContext,
  prepare: (sql: string) => SqliteStatement,
  quantization: VectorQuantization,
  dimensions: number,
): { written: number; done: boolean; abandoned?: true } {
  const mark = ctx
    .stmt('meta', 'SELECT value FROM meta WHERE key = ?')
    .get<{ value: string }>(QUANT_BUILD_META);
  if (mark === undefined) return { written: 0, done: true };
  // Another process may have reset the index to another kind since this build started: that build is its own.
  const recorded = ctx
    .stmt('meta', 'SELECT value FROM meta WHERE key = ?')
    .get<{ value: string }>(VECTOR_INDEX_META)?.value;
  if (parseRecordedQuantization(recorded) !== quantization)
    return { written: 0, done: true, abandoned: true };
  const finish = (written: number): { written: number; done: boolean } => {
    ctx.stmt('meta', 'DELETE FROM meta WHERE key = ?').run(QUANT_BUILD_META);
    return { written, done: true };
  };
  if (quantization === 'none' || !hasQuantTable(ctx.db) || !hasTable(ctx, 'memories_vec')) return finish(0);
  const insert = prepare(
    `INSERT INTO ${QUANT_TABLE}(rowid, agent_id, user_key, embedding, vector) VALUES (?, ?, ?, ${typed(quantization, '?')}, ?)`,
  );
  const add = (rowid: bigint, agent: string, userKey: bigint, bytes: Uint8Array): void => {
    // A copy: the driver's buffer need not be aligned for a Float32Array view.
    const floats = new Float32Array(new Uint8Array(bytes).buffer, 0, bytes.byteLength / 4);
    insert.run(rowid, agent, userKey, quantize(quantization, floats), floats);
  };
  if (!SHADOW_TABLES.every((t) => hasTable(ctx, t))) return finish(fillByKey(ctx, prepare, add));
  const width = dimensions * 4;
  // Vectors per float chunk: the size the table was created with (vec0's default 1,024 in files made before
  // `vec0ChunkSize`), as recorded in each chunk's row.
  const chunkVectors =
    ctx
      .stmt('vector', 'SELECT size FROM memories_vec_chunks WHERE chunk_id > ? ORDER BY chunk_id LIMIT 1')
      .get<{ size: number }>(Number(mark.value))?.size ?? VEC0_DEFAULT_CHUNK_SIZE;
  const chunksPerStep = Math.max(1, Math.floor(QUANT_BUILD_STEP.bytes / (chunkVectors * width)));
  const chunks = ctx
    .stmt(
      'vector',
      `SELECT c.chunk_id AS chunk, c.partition00 AS agent, c.size AS size, c.validity AS validity,
         c.rowids AS rowids, v.vectors AS vectors, u.data AS users
       FROM memories_vec_chunks c JOIN memories_vec_vector_chunks00 v ON v.rowid = c.chunk_id
       JOIN memories_vec_metadatachunks00 u ON u.rowid = c.chunk_id
       WHERE c.chunk_id > ? ORDER BY c.chunk_id LIMIT ?`,
    )
    .all<{
      chunk: number;
      agent: string;
      size: number;
      validity: Uint8Array;
      rowids: Uint8Array;
      vectors: Uint8Array;
      users: Uint8Array;
    }>(Number(mark.value), chunksPerStep);
  const present = prepare(`SELECT 1 AS x FROM ${QUANT_TABLE}_rowids WHERE rowid = ?`);
  let written = 0;
  for (const c of chunks) {
    // A chunk whose blobs are not of its size (damaged by another tool, `vector-chunks.ts`) is left out: its
    // vectors are dropped and embedded again by the repair, which quantises them as it writes them.
    if (!sound(c, width)) continue;
    // vec0's chunk: a validity bitmap (bit i of byte i / 8 set when slot i holds a live row) and the slots'
    // rowids as little-endian 64-bit integers, beside the blob of the slots' vectors and that of their user keys
    // (the `user_key` metadata column: 64-bit integers too).
    const ids = new DataView(c.rowids.buffer, c.rowids.byteOffset, c.rowids.byteLength);
    const users = new DataView(c.users.buffer, c.users.byteOffset, c.users.byteLength);
    for (let slot = 0; slot < c.size; slot += 1) {
      if ((((c.validity[slot >> 3] as number) >> (slot & 7)) & 1) === 0) continue;
      const rowid = ids.getBigInt64(slot * 8, true);
      if (present.get(rowid) !== undefined) continue;
      add(
        rowid,
        c.agent,
        users.getBigInt64(slot * 8, true),
        c.vectors.subarray(slot * width, (slot + 1) * width),
      );
      written += 1;
    }
  }
  ctx.count('vector');
  if (chunks.length < chunksPerStep) return finish(written);
  ctx
    .stmt('meta', 'UPDATE meta SET value = ? WHERE key = ?')
    .run(String((chunks[chunks.length - 1] as { chunk: number }).chunk), QUANT_BUILD_META);
  return { written, done: false };
}

/** Whether a chunk's blobs have the lengths its size gives (see `buildStep`). */
function sound(
  c: { size: number; validity: unknown; rowids: unknown; vectors: unknown; users: unknown },
  width: number,
): boolean {
  const bytes = (v: unknown, n: number): boolean => v instanceof Uint8Array && v.byteLength >= n;
  return (
    Number.isSafeInteger(c.size) &&
    c.size > 0 &&
    bytes(c.validity, Math.ceil(c.size / 8)) &&
    bytes(c.rowids, c.size * 8) &&
    bytes(c.users, c.size * 8) &&
    c.vectors instanceof Uint8Array &&
    c.vectors.byteLength === c.size * width
  );
}

/**
 * Reads the float vectors one by one by key, in one step (a fallback for a vec0 layout other than the one the
 * steps read; the keys first: a vec0 scan cannot run while a statement writes). Skips keys already quantised.
 */
function fillByKey(
  ctx: StoreContext,
  prepare: (sql: string) => SqliteStatement,
  add: (rowid: bigint, agent: string, userKey: bigint, bytes: Uint8Array) => void,
): number {
  const keys = prepare('SELECT rowid, agent_id, user_key FROM memories_vec').all() as {
    rowid: number;
    agent_id: string;
    user_key: number;
  }[];
  const read = prepare('SELECT embedding FROM memories_vec WHERE rowid = ?');
  const present = prepare(`SELECT 1 AS x FROM ${QUANT_TABLE} WHERE rowid = ?`);
  ctx.count('vector');
  let written = 0;
  for (const { rowid, agent_id, user_key } of keys) {
    if (present.get(rowid) !== undefined) continue;
    add(BigInt(rowid), agent_id, BigInt(user_key), (read.get(rowid) as { embedding: Uint8Array }).embedding);
    written += 1;
  }
  return written;
}
