/**
 * The derived rows of a memory, written in the memory's transaction: chunk rows (a memory longer than the
 * chunk budget), BM25 units (`lexical_docs`, with the unit's token sequence for phrase checks) and their
 * postings, and vectors. Keys follow the SQLite store: chunk `i` of memory `rid` is `rid + i·2^40`, so a memory
 * within the budget is one unit keyed by its own `rid`. Deleting a memory cascades to all of them.
 */

import type { ChunkSpan } from '@engram/store';
import {
  CHUNK_KEY_SPAN,
  CHUNK_VEC_NONE,
  CHUNK_VEC_PENDING,
  CHUNK_VEC_READY,
  chunkKey,
  chunkSpans,
  indexTokens,
} from '@engram/store/port-kit';
import type { PgContext, Queryable } from './context.js';
import { vectorLiteral } from './rows.js';
import { vectorColumnType } from './schema.js';

export { CHUNK_KEY_SPAN, CHUNK_VEC_NONE, CHUNK_VEC_PENDING, CHUNK_VEC_READY, chunkKey };

/** One memory whose content is to be indexed. */
export interface IndexItem {
  readonly rid: number;
  readonly agentId: string;
  readonly content: string;
  readonly spans?: readonly ChunkSpan[];
}

/**
 * Indexes the content of several memories in three statements at most: their chunk rows, their BM25 units and
 * their postings. Must run inside a transaction; the memories must not be indexed yet.
 */
export async function indexContents(
  ctx: PgContext,
  db: Queryable,
  items: readonly IndexItem[],
): Promise<void> {
  const chunkCols: { agent: string[]; rid: number[]; idx: number[]; start: number[]; end: number[] } = {
    agent: [],
    rid: [],
    idx: [],
    start: [],
    end: [],
  };
  const docs: { agent: string[]; key: number[]; rid: number[]; length: number[]; tokens: string[] } = {
    agent: [],
    key: [],
    rid: [],
    length: [],
    tokens: [],
  };
  const post: { agent: string[]; term: string[]; key: number[]; tf: number[]; length: number[] } = {
    agent: [],
    term: [],
    key: [],
    tf: [],
    length: [],
  };
  for (const item of items) {
    const spans = item.spans ?? chunkSpans(item.content);
    for (const s of spans) {
      const key = spans.length === 1 ? item.rid : chunkKey(item.rid, s.index);
      if (spans.length > 1) {
        chunkCols.agent.push(item.agentId);
        chunkCols.rid.push(item.rid);
        chunkCols.idx.push(s.index);
        chunkCols.start.push(s.start);
        chunkCols.end.push(s.end);
      }
      const text = (spans.length === 1 ? item.content : item.content.slice(s.start, s.end)).normalize('NFKC');
      const tokens = indexTokens(text);
      const tf = new Map<string, number>();
      for (const t of tokens) tf.set(t, (tf.get(t) ?? 0) + 1);
      docs.agent.push(item.agentId);
      docs.key.push(key);
      docs.rid.push(item.rid);
      docs.length.push(tokens.length);
      docs.tokens.push(JSON.stringify(tokens));
      for (const [term, n] of tf) {
        post.agent.push(item.agentId);
        post.term.push(term);
        post.key.push(key);
        post.tf.push(n);
        post.length.push(tokens.length);
      }
    }
  }
  if (chunkCols.rid.length > 0) {
    await ctx.run(
      db,
      'write',
      `INSERT INTO memory_chunks(agent_id, rid, idx, start_at, end_at, vec)
       SELECT a, r, i, s, e, 0 FROM unnest($1::text[], $2::bigint[], $3::int[], $4::int[], $5::int[]) AS u(a, r, i, s, e)`,
      [chunkCols.agent, chunkCols.rid, chunkCols.idx, chunkCols.start, chunkCols.end],
    );
  }
  if (docs.key.length > 0) {
    await ctx.run(
      db,
      'fts',
      `INSERT INTO lexical_docs(agent_id, key, rid, length, tokens)
       SELECT a, k, r, l, ARRAY(SELECT jsonb_array_elements_text(t::jsonb))
       FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::int[], $5::text[]) AS u(a, k, r, l, t)`,
      [docs.agent, docs.key, docs.rid, docs.length, docs.tokens],
    );
  }
  if (post.key.length > 0) {
    await ctx.run(
      db,
      'fts',
      `INSERT INTO lexical_postings(agent_id, term, key, tf, length)
       SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::int[], $5::int[])`,
      [post.agent, post.term, post.key, post.tf, post.length],
    );
  }
}

/** Removes every derived row of a memory's content (chunks, BM25 units and postings, vectors). */
export async function unindexContent(ctx: PgContext, db: Queryable, rid: number): Promise<void> {
  await ctx.run(db, 'fts', 'DELETE FROM lexical_docs WHERE rid = $1', [rid]);
  await ctx.run(db, 'write', 'DELETE FROM memory_chunks WHERE rid = $1', [rid]);
  if (ctx.profile !== null) await ctx.run(db, 'vector', 'DELETE FROM memory_vectors WHERE rid = $1', [rid]);
}

/** Stores (or replaces) one vector under `key`. */
export async function writeVector(
  ctx: PgContext,
  db: Queryable,
  key: number,
  rid: number,
  agentId: string,
  vector: Float32Array,
): Promise<void> {
  const type = vectorColumnType(ctx.profile?.dimensions ?? 1);
  await ctx.run(
    db,
    'vector',
    `INSERT INTO memory_vectors(agent_id, key, rid, embedding) VALUES ($1, $2, $3, $4::${type})
     ON CONFLICT (key) DO UPDATE SET embedding = EXCLUDED.embedding, agent_id = EXCLUDED.agent_id`,
    [agentId, key, rid, vectorLiteral(vector)],
  );
}

/** One vector to store. */
export interface VectorItem {
  readonly key: number;
  readonly rid: number;
  readonly agentId: string;
  readonly vector: Float32Array;
}

/** Stores (or replaces) several vectors in one statement; their keys must differ. */
export async function writeVectors(
  ctx: PgContext,
  db: Queryable,
  items: readonly VectorItem[],
): Promise<void> {
  if (items.length === 0) return;
  const type = vectorColumnType(ctx.profile?.dimensions ?? 1);
  await ctx.run(
    db,
    'vector',
    `INSERT INTO memory_vectors(agent_id, key, rid, embedding)
     SELECT a, k, r, e::${type} FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::text[]) AS u(a, k, r, e)
     ON CONFLICT (key) DO UPDATE SET embedding = EXCLUDED.embedding, agent_id = EXCLUDED.agent_id`,
    [
      items.map((i) => i.agentId),
      items.map((i) => i.key),
      items.map((i) => i.rid),
      items.map((i) => vectorLiteral(i.vector)),
    ],
  );
}

/** The chunk columns a search statement reads with its hits (start and end null unless a chunk was hit). */
export interface ChunkColumns {
  readonly key: string;
  readonly start_at: number | null;
  readonly end_at: number | null;
}

/** The span of the chunk a search hit names (its row read with the hit: `ChunkColumns`). */
export function chunkOf(row: ChunkColumns): ChunkSpan {
  return {
    index: Math.floor(Number(row.key) / CHUNK_KEY_SPAN),
    start: row.start_at as number,
    end: row.end_at as number,
  };
}
