/**
 * The chunk rows of long memories and the keys of their derived rows.
 *
 * A memory of `chunk_count = 1` (content within the budget) has no chunk rows: its word/trigram rows and its
 * vector are keyed by the memory's `rid`, exactly as an unchunked store keys them. A longer memory has one
 * `memory_chunks` row per chunk (agent, rid, index, start, end, vector state), and its FTS rows and vectors
 * are keyed by `chunkKey(rid, index) = rid + index · 2^40`: chunk 0 keeps the memory's `rid`, the memory of a
 * key is `key % 2^40` and its chunk index `key / 2^40` (integer division), so a search joins a hit to its
 * memory with one rowid lookup. Row ids stay below 2^40 and a memory has at most a few hundred chunks, so
 * keys stay far below 2^53.
 */
import {
  CHUNK_BUDGET,
  CHUNK_KEY_SPAN,
  CHUNK_VEC_NONE,
  CHUNK_VEC_PENDING,
  CHUNK_VEC_READY,
  type ChunkSpan,
  chunkKey,
  chunkSpans,
  storedChunkCount,
} from '@engram/store/port-kit';
import type { SqliteDatabase } from '../native.js';
import type { StoreContext } from './context.js';
import { deleteFts, deleteVector, writeFts } from './mirrors.js';

export { CHUNK_KEY_SPAN, CHUNK_VEC_NONE, CHUNK_VEC_PENDING, CHUNK_VEC_READY, chunkKey };

/** The SQL of the chunk table (created by the migration). */
export const CHUNK_TABLE_SQL = `CREATE TABLE IF NOT EXISTS memory_chunks (
  agent_id TEXT NOT NULL,
  rid INTEGER NOT NULL,
  idx INTEGER NOT NULL,
  start_at INTEGER NOT NULL,
  end_at INTEGER NOT NULL,
  vec INTEGER NOT NULL DEFAULT 0 CHECK (vec IN (0, 1, 2)),
  PRIMARY KEY (agent_id, rid, idx)
) WITHOUT ROWID`;

/**
 * Indexes a memory's content: one FTS row keyed by `rid` when it fits the budget, else one chunk row and one
 * FTS row per chunk, the BM25 units with the memory's user (`userId`, null for the agent's own). Returns the chunks (one span
 * for a short memory). Must run inside a transaction.
 */
export function indexContent(
  ctx: StoreContext,
  rid: number,
  agentId: string,
  userId: string | null | undefined,
  content: string,
  spans: readonly ChunkSpan[] = chunkSpans(content),
): readonly ChunkSpan[] {
  if (spans.length === 1) {
    writeFts(ctx, rid, agentId, userId, content);
    return spans;
  }
  const insert = ctx.stmt(
    'write',
    'INSERT INTO memory_chunks(agent_id, rid, idx, start_at, end_at, vec) VALUES (?, ?, ?, ?, ?, 0)',
  );
  for (const s of spans) {
    insert.run(agentId, rid, s.index, s.start, s.end);
    writeFts(ctx, chunkKey(rid, s.index), agentId, userId, content.slice(s.start, s.end));
  }
  return spans;
}

/**
 * Removes every derived row of a memory's content (FTS rows, vectors, chunk rows). `chunkCount` is the
 * stored `chunk_count`; `hadCjk` the stored `has_cjk`. Must run inside a transaction.
 */
export function unindexContent(
  ctx: StoreContext,
  rid: number,
  agentId: string,
  storedChunks: number,
  hadCjk: boolean,
): void {
  const chunkCount = storedChunkCount(storedChunks);
  for (let i = 0; i < chunkCount; i += 1) {
    const key = chunkKey(rid, i);
    // A chunk's trigram row exists only when the chunk has CJK: deleting an absent row is a no-op.
    deleteFts(ctx, key, hadCjk);
    deleteVector(ctx, key);
  }
  if (chunkCount > 1) {
    ctx.stmt('write', 'DELETE FROM memory_chunks WHERE agent_id = ? AND rid = ?').run(agentId, rid);
  }
}

/** Removes every vector of a memory and marks its chunks pending. Must run inside a transaction. */
export function dropVectors(ctx: StoreContext, rid: number, agentId: string, storedChunks: number): void {
  const chunkCount = storedChunkCount(storedChunks);
  for (let i = 0; i < chunkCount; i += 1) deleteVector(ctx, chunkKey(rid, i));
  if (chunkCount > 1) {
    ctx
      .stmt('write', 'UPDATE memory_chunks SET vec = 0 WHERE agent_id = ? AND rid = ? AND vec <> 0')
      .run(agentId, rid);
  }
}

/** The span of one chunk of a memory, or undefined. */
export function chunkSpan(
  ctx: StoreContext,
  agentId: string,
  rid: number,
  index: number,
): ChunkSpan | undefined {
  const row = ctx
    .stmt('read', 'SELECT start_at, end_at FROM memory_chunks WHERE agent_id = ? AND rid = ? AND idx = ?')
    .get<{ start_at: number; end_at: number }>(agentId, rid, index);
  return row === undefined ? undefined : { index, start: row.start_at, end: row.end_at };
}

/** True when the agent has at least one chunked memory (one index probe). */
export function agentHasChunks(ctx: StoreContext, agentId: string): boolean {
  return (
    ctx
      .stmt('read', 'SELECT 1 AS x FROM memory_chunks WHERE agent_id = ? LIMIT 1')
      .get<{ x: number }>(agentId) !== undefined
  );
}

/**
 * The chunking step of the schema migration: every memory longer than the budget gets its chunk rows and
 * per-chunk FTS rows in place of its whole-content FTS rows; its whole-content vector (when the file has a
 * vector table) is dropped and the memory becomes `pending`. Runs inside the migration transaction.
 */
export function chunkExistingMemories(db: SqliteDatabase, ctx: StoreContext): void {
  const hasVec =
    db.prepare("SELECT 1 AS x FROM sqlite_master WHERE type = 'table' AND name = 'memories_vec'").get() !==
    undefined;
  // SQLite's length() counts characters, never more than UTF-16 code units: this pre-filter keeps every
  // candidate; the exact test is on the JavaScript string.
  const rows = db
    .prepare(
      `SELECT rid, agent_id, content, has_cjk FROM memories WHERE length(content) > ${CHUNK_BUDGET / 2}`,
    )
    .all() as { rid: number; agent_id: string; content: string; has_cjk: number }[];
  const long: { rid: number; agent_id: string; content: string; has_cjk: number }[] = [];
  for (const r of rows) if (r.content.length > CHUNK_BUDGET) long.push(r);
  const dropVector = hasVec ? db.prepare('DELETE FROM memories_vec WHERE rowid = ?') : null;
  const mark = db.prepare(
    `UPDATE memories SET chunk_count = ?, embedding_state = 'pending', embedding_fingerprint = NULL,
       embedding_attempts = 0 WHERE rid = ?`,
  );
  for (const r of long) {
    deleteFts(ctx, r.rid, r.has_cjk === 1);
    dropVector?.run(BigInt(r.rid));
    // Schema 4 has no users yet: the user keys come with schema 15 (`vector-users.ts`).
    const spans = indexContent(ctx, r.rid, r.agent_id, null, r.content);
    mark.run(spans.length, r.rid);
  }
}
