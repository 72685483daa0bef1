/**
 * Export on PostgreSQL: the same stream as the SQLite store's (`@engram/store`'s export format), so either store
 * imports the other's export. Rows use the SQLite store's column names and encodings (tags and metadata as JSON
 * text); derived rows are never exported. One page of rows is held at a time. The whole stream is one
 * point-in-time snapshot: one `REPEATABLE READ, READ ONLY` transaction on one pooled connection, held from the
 * first page to the end record however long the stream takes (writers are never blocked by it, and none of their
 * commits shows in the export). A consumer that stops early ends it with `return()` (a `for await` loop's
 * `break` does), which gives the connection back.
 */

import {
  EngramStoreError,
  type ExportCounts,
  type ExportOptions,
  type ExportRecord,
  type ExportRow,
} from '@engram/store';
import { exportHeader, importRows, validateAgentId } from '@engram/store/port-kit';
import type pg from 'pg';
import type { PgContext, Queryable } from './context.js';
import { CHUNK_VEC_READY, chunkKey } from './derived.js';
import { classifyPgError } from './errors.js';
import { MEMORY_COLUMNS, type MemoryRow, toRecord } from './rows.js';

const PAGE = 500;

/** The plain tables after the memories: export type, count key, table, columns and paging order. */
export const PLAIN_TABLES = [
  {
    type: 'event',
    count: 'events',
    table: 'events',
    columns: [
      'agent_id',
      'session_id',
      'seq',
      'type',
      'role',
      'content',
      'tool_name',
      'metadata',
      'created_at',
      'user_id',
    ],
    order: ['agent_id', 'session_id', 'seq'],
  },
  {
    type: 'cursor',
    count: 'cursors',
    table: 'session_cursors',
    columns: ['agent_id', 'session_id', 'cursor', 'updated_at'],
    order: ['agent_id', 'session_id'],
  },
  {
    type: 'skill',
    count: 'skills',
    table: 'skills',
    columns: ['agent_id', 'name', 'description', 'content', 'created_at', 'updated_at'],
    order: ['agent_id', 'name'],
  },
  {
    type: 'link',
    count: 'links',
    table: 'memory_links',
    columns: ['agent_id', 'older_id', 'newer_id', 'kind', 'state', 'reason', 'created_at', 'resolved_at'],
    order: ['agent_id', 'older_id', 'newer_id', 'kind'],
  },
  {
    type: 'history',
    count: 'history',
    table: 'memory_history',
    columns: [
      'agent_id',
      'memory_id',
      'action',
      'at',
      'revision',
      'actor',
      'reason',
      'related_id',
      'content',
      'user_id',
    ],
    order: ['seq'],
  },
] as const;

/** A memory row in the SQLite store's column names and encodings. */
export function memoryExportRow(row: MemoryRow): ExportRow {
  const r = toRecord(row);
  return {
    id: r.id,
    agent_id: r.agentId,
    kind: r.kind,
    content: r.content,
    content_hash: r.contentHash,
    importance: r.importance,
    confidence: r.confidence,
    tags: JSON.stringify(r.tags),
    session_id: r.sessionId,
    seq_from: r.seqFrom,
    seq_to: r.seqTo,
    created_at: r.createdAt,
    updated_at: r.updatedAt,
    last_accessed_at: r.lastAccessedAt,
    access_count: r.accessCount,
    revision: r.revision,
    lifecycle: r.lifecycle,
    superseded_by: r.supersededBy,
    embedding_state: r.embeddingState,
    embedding_fingerprint: r.embeddingFingerprint,
    embedding_attempts: r.embeddingAttempts,
    user_id: r.userId,
    metadata: JSON.stringify(r.metadata),
    valid_from: r.validFrom,
    valid_to: r.validTo,
    forgotten_at: r.forgottenAt,
  };
}

/** pgvector's text form (`[1,2,3]`) as base64 of float32 bytes. */
function vectorBase64(text: string | undefined): string | null {
  if (text === undefined) return null;
  const values = text.slice(1, -1).split(',').map(Number);
  return Buffer.from(Float32Array.from(values).buffer).toString('base64');
}

async function memoryVectors(ctx: PgContext, db: Queryable, row: MemoryRow): Promise<(string | null)[]> {
  const rid = Number(row.rid);
  const get = async (key: number): Promise<string | null> =>
    vectorBase64(
      (
        await ctx.q<{ e: string }>(
          db,
          'vector',
          'SELECT embedding::text AS e FROM memory_vectors WHERE key = $1',
          [key],
        )
      )[0]?.e,
    );
  if (row.chunk_count <= 1) return [await get(rid)];
  const chunks = await ctx.q<{ idx: number; vec: number }>(
    db,
    'read',
    'SELECT idx, vec FROM memory_chunks WHERE rid = $1 ORDER BY idx',
    [rid],
  );
  const out: (string | null)[] = [];
  for (const c of chunks) out.push(c.vec === CHUNK_VEC_READY ? await get(chunkKey(rid, c.idx)) : null);
  return out;
}

/** A stored cell as an export carries it; undefined for a value the format cannot carry (a damaged row). */
function cellOf(value: unknown): string | number | null | undefined {
  if (value === null || typeof value === 'string' || typeof value === 'number') return value;
  if (typeof value === 'bigint') return Number(value);
  return undefined;
}

async function* records(ctx: PgContext, db: Queryable, options: ExportOptions): AsyncGenerator<ExportRecord> {
  const agentId = options.agentId === undefined ? null : validateAgentId(options.agentId);
  const withVectors = options.vectors === true && ctx.profile !== null;
  yield exportHeader({
    schemaVersion: ctx.schemaVersion,
    profile: ctx.profile,
    agentId,
    vectors: withVectors,
  });
  const counts: Record<keyof ExportCounts, number> = {
    memories: 0,
    events: 0,
    cursors: 0,
    skills: 0,
    links: 0,
    history: 0,
  };
  // Rows an import would refuse (damaged by another tool or by hand), left out so the rest restores.
  let skipped = 0;
  let after = 0;
  for (;;) {
    const page = await ctx.q<MemoryRow>(
      db,
      'read',
      `SELECT ${MEMORY_COLUMNS} FROM memories WHERE rid > $1 AND ($2::text IS NULL OR agent_id = $2)
       ORDER BY rid LIMIT ${PAGE}`,
      [after, agentId],
    );
    for (const row of page) {
      const exported = memoryExportRow(row);
      if (!importRows.restorableRow('memory', exported)) {
        skipped += 1;
        continue;
      }
      counts.memories += 1;
      yield withVectors
        ? { type: 'memory', row: exported, vectors: await memoryVectors(ctx, db, row) }
        : { type: 'memory', row: exported };
    }
    if (page.length < PAGE) break;
    after = Number(page[page.length - 1]?.rid);
  }
  for (const t of PLAIN_TABLES) {
    // Keyset paging in the table's order (text keys in byte order, as the SQLite store sorts them).
    const keys = t.order.map((c, i) => `${c} AS k${i}`).join(', ');
    const order = t.order.map((c) => (c === 'seq' ? c : `${c} COLLATE "C"`)).join(', ');
    const after = `(${order}) > (${t.order
      .map((c, i) => (c === 'seq' ? `$${i + 2}::bigint` : `$${i + 2}::text COLLATE "C"`))
      .join(', ')})`;
    let last: unknown[] | null = null;
    for (;;) {
      const page: Record<string, unknown>[] = await ctx.q<Record<string, unknown>>(
        db,
        'read',
        `SELECT ${t.columns.join(', ')}, ${keys} FROM ${t.table}
         WHERE ($1::text IS NULL OR agent_id = $1) ${last === null ? '' : `AND ${after}`}
         ORDER BY ${order} LIMIT ${PAGE}`,
        last === null ? [agentId] : [agentId, ...last],
      );
      for (const raw of page) {
        const row: Record<string, string | number | null> = {};
        let carried = true;
        for (const c of t.columns) {
          const v = raw[c];
          const cell =
            typeof v === 'string' && /^(seq|cursor|created_at|updated_at|at|revision|resolved_at)$/.test(c)
              ? Number(v)
              : cellOf(v);
          if (cell === undefined) carried = false;
          else row[c] = cell;
        }
        if (!carried || !importRows.restorableRow(t.type, row)) {
          skipped += 1;
          continue;
        }
        counts[t.count] += 1;
        yield { type: t.type, row };
      }
      if (page.length < PAGE) break;
      const tail = page[page.length - 1] as Record<string, unknown>;
      last = t.order.map((_, i) => tail[`k${i}`]);
    }
  }
  yield { type: 'end', counts, ...(skipped === 0 ? {} : { skipped }) };
}

/** Streams the store's records (or one agent's) in the export format; every failure is an `EngramStoreError`. */
export async function* exportRecords(
  ctx: PgContext,
  options: ExportOptions = {},
): AsyncGenerator<ExportRecord> {
  if (ctx.closed)
    throw new EngramStoreError('ENGRAM_STORE_CLOSED', 'store export failed: the store is closed');
  let client: pg.PoolClient | null = null;
  let broken = false;
  try {
    client = await ctx.pool.connect();
    await ctx.run(client, 'meta', 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    // The snapshot is taken at the first statement after BEGIN: now, before the header is handed out.
    await ctx.q(client, 'meta', 'SELECT 1');
    yield* records(ctx, client, options);
  } catch (err) {
    broken = true;
    throw classifyPgError(err, 'export');
  } finally {
    if (client !== null) {
      try {
        await ctx.run(client, 'meta', broken ? 'ROLLBACK' : 'COMMIT');
      } catch {
        broken = true;
      }
      client.release(broken);
    }
  }
}
