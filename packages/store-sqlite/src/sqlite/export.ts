/**
 * The export side of the transfer format (see `transfer.ts`): a header, then every memory, event, session
 * cursor, skill, link and history entry of the file (or of one agent), page by page in storage order, then the
 * end record counting each type. The whole stream is one point-in-time snapshot: one read transaction, held from
 * the first page to the end record however long the stream takes. On a plain file that transaction runs on a
 * read-only connection of its own, so the store and other processes keep writing meanwhile (WAL: a reader never
 * blocks a writer) and none of their commits shows in the export. Otherwise (`:memory:`, an encrypted file, a
 * `file:` URI, a custom driver) it runs on the store's connection, and this store's writes are refused with
 * `ENGRAM_STORE_BUSY` until the export ends. An export holds one page in memory whatever the file's size; a
 * consumer that stops early ends it with `return()` (a `for await` loop's `break` does).
 */

import type { ExportCounts, ExportOptions, ExportRecord, ExportRow } from '@engram/store/port-kit';
import { EngramStoreError, exportHeader, importRows, validateAgentId } from '@engram/store/port-kit';
import { CHUNK_VEC_READY, chunkKey } from './chunks.js';
import { classifySqliteError } from './classify.js';
import { StoreContext } from './context.js';
import { isVectorChunkFailure } from './vector-chunks.js';

/** Rows per page. */
const PAGE = 500;

/** Columns of `memories` that an import recomputes from the content (never exported). */
export const DERIVED_MEMORY_COLUMNS: ReadonlySet<string> = new Set([
  'rid',
  'has_cjk',
  'like_text',
  'chunk_count',
]);
/** Columns of `events` that an import recomputes. */
export const DERIVED_EVENT_COLUMNS: ReadonlySet<string> = new Set(['content_hash']);

/** A table exported row by row as it is stored (besides `memories`). */
export interface PlainTable {
  readonly type: 'event' | 'cursor' | 'skill' | 'link' | 'history';
  readonly count: keyof ExportCounts;
  readonly table: string;
  /** The columns that identify a row (an import looks it up by them); empty: every exported column. */
  readonly key: readonly string[];
  /** The order of the export (a unique key), used for paging. */
  readonly order: readonly string[];
  /** Columns recomputed or assigned by an import, never exported. */
  readonly derived: ReadonlySet<string>;
}

/** The plain tables, in export order (history last: it refers to memories and links). */
export const PLAIN_TABLES: readonly PlainTable[] = [
  {
    type: 'event',
    count: 'events',
    table: 'events',
    key: ['agent_id', 'session_id', 'seq'],
    order: ['agent_id', 'session_id', 'seq'],
    derived: DERIVED_EVENT_COLUMNS,
  },
  {
    type: 'cursor',
    count: 'cursors',
    table: 'session_cursors',
    key: ['agent_id', 'session_id'],
    order: ['agent_id', 'session_id'],
    derived: new Set(),
  },
  {
    type: 'skill',
    count: 'skills',
    table: 'skills',
    key: ['agent_id', 'name'],
    order: ['agent_id', 'name'],
    derived: new Set(),
  },
  {
    type: 'link',
    count: 'links',
    table: 'memory_links',
    key: ['agent_id', 'older_id', 'newer_id', 'kind'],
    order: ['agent_id', 'older_id', 'newer_id', 'kind'],
    derived: new Set(),
  },
  {
    type: 'history',
    count: 'history',
    table: 'memory_history',
    key: [],
    order: ['seq'],
    derived: new Set(['seq']),
  },
];

/** True when the file has the table (a table added by a later schema may be absent from an older file). */
export function tableExists(ctx: StoreContext, table: string): boolean {
  return (
    ctx
      .stmt('meta', "SELECT 1 AS x FROM sqlite_master WHERE type = 'table' AND name = ?")
      .get<{ x: number }>(table) !== undefined
  );
}

/** Runs one synchronous read of an export: closed check, and every driver error classified. */
function read<T>(ctx: StoreContext, fn: () => T): T {
  if (ctx.closed)
    throw new EngramStoreError('ENGRAM_STORE_CLOSED', 'store export failed: the store is closed');
  try {
    return fn();
  } catch (err) {
    throw classifySqliteError(err, 'export');
  }
}

/**
 * A stored row without its internal and derived columns; null when a column holds a value the export format
 * cannot carry (a blob: a damaged row, left out and counted as skipped).
 */
function exportRow(raw: Record<string, unknown>, derived: ReadonlySet<string>): ExportRow | null {
  const out: Record<string, string | number | null> = {};
  for (const [key, value] of Object.entries(raw)) {
    if (derived.has(key) || key.startsWith('_')) continue;
    if (typeof value === 'bigint') out[key] = Number(value);
    else if (typeof value === 'string' || typeof value === 'number' || value === null) out[key] = value;
    else return null;
  }
  return out;
}

function vectorBase64(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (value instanceof Uint8Array)
    return Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64');
  return null;
}

/** The vectors of one memory, one entry per chunk (null where a chunk has none). */
function memoryVectors(ctx: StoreContext, raw: Record<string, unknown>): (string | null)[] {
  const rid = Number(raw.rid);
  const chunks = Number(raw.chunk_count ?? 1);
  const agent = String(raw.agent_id);
  const stmt = ctx.stmt('vector', 'SELECT embedding FROM memories_vec WHERE rowid = ?');
  // A vector in a damaged chunk (`vector-chunks.ts`) is left out: the restored memory is embedded again.
  const get = {
    get<T>(key: bigint): T | undefined {
      try {
        return stmt.get<T>(key);
      } catch (err) {
        if (isVectorChunkFailure(err)) return undefined;
        throw err;
      }
    },
  };
  if (chunks <= 1) return [vectorBase64(get.get<{ embedding: unknown }>(BigInt(rid))?.embedding)];
  const states = ctx
    .stmt('read', 'SELECT idx, vec FROM memory_chunks WHERE agent_id = ? AND rid = ? ORDER BY idx')
    .all<{ idx: number; vec: number }>(agent, rid);
  return states.map((c) =>
    c.vec === CHUNK_VEC_READY
      ? vectorBase64(get.get<{ embedding: unknown }>(BigInt(chunkKey(rid, c.idx)))?.embedding)
      : null,
  );
}

/** The connection an export reads on, inside its read transaction, and how to end it. */
interface Snapshot {
  readonly ctx: StoreContext;
  end(): void;
}

/** Opens the export's read transaction: on a connection of its own when the file allows one. */
function openSnapshot(ctx: StoreContext): Snapshot {
  if (ctx.openReader !== null) {
    const reader = new StoreContext({
      db: ctx.openReader(),
      observer: ctx.observer,
      now: ctx.now,
      idFactory: ctx.idFactory,
      limits: ctx.limits,
      vectorKey: '',
      encrypted: false,
      access: 'read',
      busyTimeoutMs: ctx.busyTimeoutMs,
      mmapSize: ctx.mmapSize,
    });
    try {
      reader.stmt('meta', 'BEGIN').run();
      // The snapshot starts at the first read: taken now, before the header is handed out.
      reader.stmt('meta', 'SELECT count(*) AS n FROM sqlite_master').get();
    } catch (err) {
      reader.close();
      throw err;
    }
    return { ctx: reader, end: () => reader.close() };
  }
  if (ctx.held !== null || ctx.db.inTransaction) {
    throw new EngramStoreError(
      'ENGRAM_STORE_BUSY',
      `store export refused: an ${ctx.held ?? 'operation'} of this store is running on its connection; retry when it ends`,
    );
  }
  ctx.stmt('meta', 'BEGIN').run();
  ctx.held = 'export';
  ctx.stmt('meta', 'SELECT count(*) AS n FROM sqlite_master').get();
  return {
    ctx,
    end: () => {
      ctx.held = null;
      if (!ctx.closed && ctx.db.inTransaction) ctx.stmt('meta', 'COMMIT').run();
    },
  };
}

/**
 * Streams the file's records (see the module comment). With `vectors`, a `ready` memory carries its vectors
 * (the header names the embedder profile they belong to).
 */
export async function* exportRecords(
  ctx: StoreContext,
  options: ExportOptions = {},
): AsyncGenerator<ExportRecord> {
  const agentId = options.agentId === undefined ? null : read(ctx, () => validateAgentId(options.agentId));
  const snapshot = read(ctx, () => openSnapshot(ctx));
  try {
    yield* snapshotRecords(ctx, snapshot.ctx, agentId, options.vectors === true);
  } finally {
    try {
      snapshot.end();
    } catch {
      // a read transaction has nothing to lose; the connection is closed or reused as it is
    }
  }
}

/** The records of one snapshot (`ctx`: the connection holding it; `store`: the store's). */
async function* snapshotRecords(
  store: StoreContext,
  ctx: StoreContext,
  agentId: string | null,
  vectors: boolean,
): AsyncGenerator<ExportRecord> {
  const withVectors = vectors && store.profile !== null;
  yield exportHeader({
    schemaVersion: store.schemaVersion,
    profile: store.profile,
    agentId,
    vectors: withVectors,
  });
  const counts = { memories: 0, events: 0, cursors: 0, skills: 0, links: 0, history: 0 };
  // Rows an import would refuse (damaged by another tool or by hand), left out so the rest restores.
  let skipped = 0;
  const agentCond = agentId === null ? '' : 'AND agent_id = @agent';
  const agentParam = agentId === null ? {} : { agent: agentId };
  let after = 0;
  for (;;) {
    const page = read(ctx, () =>
      ctx
        .stmt('read', `SELECT * FROM memories WHERE rid > @after ${agentCond} ORDER BY rid LIMIT ${PAGE}`)
        .all<Record<string, unknown>>({ after, ...agentParam }),
    );
    if (page.length === 0) break;
    const records = read(ctx, () =>
      page.map((raw): ExportRecord | null => {
        const row = exportRow(raw, DERIVED_MEMORY_COLUMNS);
        if (row === null || !importRows.restorableRow('memory', row)) return null;
        if (!withVectors || raw.embedding_state !== 'ready') return { type: 'memory', row };
        return { type: 'memory', row, vectors: memoryVectors(ctx, raw) };
      }),
    );
    after = Number(page[page.length - 1]?.rid);
    for (const r of records) {
      if (r === null) {
        skipped += 1;
        continue;
      }
      counts.memories += 1;
      yield r;
    }
  }

  // The other tables, each paged by its key in key order.
  for (const t of PLAIN_TABLES) {
    if (!read(ctx, () => tableExists(ctx, t.table))) continue;
    const order = t.order.join(', ');
    const after = `(${order}) > (${t.order.map((_, i) => `@k${i}`).join(', ')})`;
    let last: Record<string, unknown> | undefined;
    for (;;) {
      const cond = [last === undefined ? '' : after, agentId === null ? '' : 'agent_id = @agent'].filter(
        (c) => c !== '',
      );
      const where = cond.length === 0 ? '' : `WHERE ${cond.join(' AND ')}`;
      const keys: Record<string, unknown> = {};
      t.order.forEach((col, i) => {
        if (last !== undefined) keys[`k${i}`] = last[col];
      });
      const page = read(ctx, () =>
        ctx
          .stmt('read', `SELECT * FROM ${t.table} ${where} ORDER BY ${order} LIMIT ${PAGE}`)
          .all<Record<string, unknown>>({ ...keys, ...agentParam }),
      );
      if (page.length === 0) break;
      last = page[page.length - 1];
      for (const raw of page) {
        const row = read(ctx, () => exportRow(raw, t.derived));
        if (row === null || !importRows.restorableRow(t.type, row)) {
          skipped += 1;
          continue;
        }
        counts[t.count] += 1;
        yield { type: t.type, row } as ExportRecord;
      }
    }
  }
  const end: ExportCounts = { ...counts };
  yield { type: 'end', counts: end, ...(skipped === 0 ? {} : { skipped }) };
}
