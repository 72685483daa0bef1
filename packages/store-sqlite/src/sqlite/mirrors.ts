/**
 * The derived rows of a memory, kept in step with it inside the same transaction: the FTS rows (word index,
 * the trigram index for CJK text, the BM25 index), the vector row and the tag rows.
 */
import { hasCjk } from '@engram/contracts';
import { unindexLexicalUnit } from '../lexical-index.js';
import type { StoreContext } from './context.js';
import { userKey } from './user-key.js';
import { deleteQuantVector, writeQuantVector } from './vector-quant.js';

/**
 * Indexes a row's NFKC content in the BM25 index (postings, with its memory's user key, and the agent's and its
 * user's statistics; `userId` null: the agent's own). The rows are written with the rest of the transaction's
 * units just before it commits (`StoreContext.tx`).
 */
export function writeLexical(
  ctx: StoreContext,
  rid: number,
  agentId: string,
  userId: string | null | undefined,
  text: string,
): void {
  ctx.lexical.add(rid, agentId, text, userId ?? null);
}

/** Removes a row from the BM25 index. */
export function deleteLexical(ctx: StoreContext, rid: number): void {
  // A unit indexed earlier in this transaction must be written before it can be removed.
  ctx.flushLexical();
  unindexLexicalUnit(
    (sql, ...params) => ctx.stmt('fts', sql).run(...params),
    (sql, ...params) => ctx.stmt('fts', sql).get(...params),
    rid,
  );
}

/**
 * Indexes a row's content (NFKC) in the word index, and in the trigram index when it has CJK, and in the BM25
 * index with its memory's user (`userId`, null for the agent's own); returns whether it has CJK. `text` is the content's NFKC form
 * and `cjk` whether it has CJK, when the caller has them already.
 */
export function writeFts(
  ctx: StoreContext,
  rid: number,
  agentId: string,
  userId: string | null | undefined,
  content: string,
  text: string = content.normalize('NFKC'),
  cjk: boolean = hasCjk(text),
): boolean {
  const token = ctx.agentToken(agentId);
  ctx
    .stmt('fts', 'INSERT INTO memories_fts_words(rowid, agent, content) VALUES (?, ?, ?)')
    .run(rid, token, text);
  writeLexical(ctx, rid, agentId, userId, text);
  if (cjk) {
    ctx
      .stmt('fts', 'INSERT INTO memories_fts_trigram(rowid, agent, content) VALUES (?, ?, ?)')
      .run(rid, token, text);
  }
  return cjk;
}

/** Removes a row's FTS entries (both FTS5 indexes and the BM25 index). */
export function deleteFts(ctx: StoreContext, rid: number, hadCjk: boolean): void {
  ctx.stmt('fts', 'DELETE FROM memories_fts_words WHERE rowid = ?').run(rid);
  deleteLexical(ctx, rid);
  if (hadCjk) ctx.stmt('fts', 'DELETE FROM memories_fts_trigram WHERE rowid = ?').run(rid);
}

/**
 * Stores a row's vector in the agent's partition with its memory's user key (`user-key.ts`; `userId` null: the
 * agent's own), and its quantised copy when the store keeps one.
 */
export function writeVector(
  ctx: StoreContext,
  rid: number,
  agentId: string,
  userId: string | null | undefined,
  vector: Float32Array,
): void {
  const key = BigInt(userKey(userId));
  ctx
    .stmt('vector', 'INSERT INTO memories_vec(rowid, agent_id, user_key, embedding) VALUES (?, ?, ?, ?)')
    .run(BigInt(rid), agentId, key, vector);
  writeQuantVector(ctx, rid, agentId, key, vector);
}

/** Removes a row's vector (nothing when the store has no vector index). */
export function deleteVector(ctx: StoreContext, rid: number): void {
  if (ctx.profile === null) return;
  ctx.stmt('vector', 'DELETE FROM memories_vec WHERE rowid = ?').run(rid);
  deleteQuantVector(ctx, rid);
}

/** Adds tag rows. */
export function writeTags(ctx: StoreContext, rid: number, agentId: string, tags: readonly string[]): void {
  if (tags.length === 0) return;
  ctx
    .stmt('write', 'INSERT INTO memory_tags(agent_id, tag, rid) SELECT ?, value, ? FROM json_each(?)')
    .run(agentId, rid, JSON.stringify(tags));
}

/** Removes tag rows. */
export function deleteTags(ctx: StoreContext, rid: number, agentId: string, tags: readonly string[]): void {
  if (tags.length === 0) return;
  ctx
    .stmt(
      'write',
      'DELETE FROM memory_tags WHERE agent_id = ? AND rid = ? AND tag IN (SELECT value FROM json_each(?))',
    )
    .run(agentId, rid, JSON.stringify(tags));
}
