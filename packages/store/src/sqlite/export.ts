/**
 * The export side of the transfer format (see `transfer.ts`): a header, then every memory, event, session
 * cursor and skill of the file (or of one agent), page by page in storage order, then the end record. Each
 * page is one short read, so an export holds one page in memory whatever the file's size, and other
 * connections keep writing between pages.
 */
import { classifySqliteError, EngramStoreError } from '../errors.js';
import type { ExportCounts, ExportOptions, ExportRecord, ExportRow } from '../transfer.js';
import { EXPORT_FORMAT, EXPORT_FORMAT_VERSION } from '../transfer.js';
import { validateAgentId } from '../validate.js';
import { CHUNK_VEC_READY, chunkKey } from './chunks.js';
import type { StoreContext } from './context.js';

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

/** A stored row without its internal and derived columns. */
function exportRow(raw: Record<string, unknown>, derived: ReadonlySet<string>): ExportRow {
  const out: Record<string, string | number | null> = {};
  for (const [key, value] of Object.entries(raw)) {
    if (derived.has(key) || key.startsWith('_')) continue;
    if (typeof value === 'bigint') out[key] = Number(value);
    else if (typeof value === 'string' || typeof value === 'number' || value === null) out[key] = value;
    else
      throw new EngramStoreError(
        'ENGRAM_STORE_CORRUPT',
        'a stored column holds a value the export cannot carry',
      );
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
  const get = ctx.stmt('vector', 'SELECT embedding FROM memories_vec WHERE rowid = ?');
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

/**
 * Streams the file's records (see `transfer.ts`). With `vectors`, a `ready` memory carries its vectors
 * (the header names the embedder profile they belong to).
 */
export async function* exportRecords(
  ctx: StoreContext,
  options: ExportOptions = {},
): AsyncGenerator<ExportRecord> {
  const agentId = options.agentId === undefined ? null : read(ctx, () => validateAgentId(options.agentId));
  const withVectors = options.vectors === true && ctx.profile !== null;
  yield {
    type: 'header',
    format: EXPORT_FORMAT,
    formatVersion: EXPORT_FORMAT_VERSION,
    schemaVersion: ctx.schemaVersion,
    embedder: ctx.profile === null ? null : { id: ctx.profile.id, dimensions: ctx.profile.dimensions },
    agentId,
    vectors: withVectors,
  };
  const counts = { memories: 0, events: 0, cursors: 0, skills: 0 };
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
      page.map((raw): ExportRecord => {
        const row = exportRow(raw, DERIVED_MEMORY_COLUMNS);
        if (!withVectors || raw.embedding_state !== 'ready') return { type: 'memory', row };
        return { type: 'memory', row, vectors: memoryVectors(ctx, raw) };
      }),
    );
    after = Number(page[page.length - 1]?.rid);
    for (const r of records) {
      counts.memories += 1;
      yield r;
    }
  }

  // Events, cursors and skills page by their rowid or key, in storage order.
  const tables: readonly { type: 'event' | 'skill'; table: string; derived: ReadonlySet<string> }[] = [
    { type: 'event', table: 'events', derived: DERIVED_EVENT_COLUMNS },
    { type: 'skill', table: 'skills', derived: new Set() },
  ];
  for (const t of tables) {
    let afterRow = 0;
    for (;;) {
      const page = read(ctx, () =>
        ctx
          .stmt(
            'read',
            `SELECT rowid AS _rowid, * FROM ${t.table} WHERE rowid > @after ${agentCond} ORDER BY rowid LIMIT ${PAGE}`,
          )
          .all<Record<string, unknown>>({ after: afterRow, ...agentParam }),
      );
      if (page.length === 0) break;
      afterRow = Number(page[page.length - 1]?._rowid);
      for (const raw of page) {
        const row = read(ctx, () => exportRow(raw, t.derived));
        if (t.type === 'event') counts.events += 1;
        else counts.skills += 1;
        yield { type: t.type, row };
      }
    }
    if (t.type === 'event') {
      // Cursors after the events they point into (a WITHOUT ROWID table: keyset on its key).
      let key: [string, string] = ['', ''];
      for (;;) {
        const page = read(ctx, () =>
          ctx
            .stmt(
              'read',
              `SELECT * FROM session_cursors WHERE (agent_id, session_id) > (@a, @s) ${agentCond}
               ORDER BY agent_id, session_id LIMIT ${PAGE}`,
            )
            .all<Record<string, unknown>>({ a: key[0], s: key[1], ...agentParam }),
        );
        if (page.length === 0) break;
        const last = page[page.length - 1];
        key = [String(last?.agent_id), String(last?.session_id)];
        for (const raw of page) {
          counts.cursors += 1;
          yield { type: 'cursor', row: read(ctx, () => exportRow(raw, new Set())) };
        }
      }
    }
  }
  const end: ExportCounts = { ...counts };
  yield { type: 'end', counts: end };
}
