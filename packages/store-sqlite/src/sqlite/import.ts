/**
 * The import side of the transfer format (see `transfer.ts`): all or nothing. The header is read, then one
 * write transaction on the store's connection holds the whole stream: records are checked (`import-rows.ts` of
 * `@engram/store`, the rules every store applies) and written one by one, and the transaction commits only once
 * the end record was read and every one of its counts matched. A failure, a truncated stream (no end record), a
 * count that differs, or a process killed part-way leaves the file exactly as it was. While the import runs, other
 * connections keep reading the file as it was; writes wait for it (the busy timeout), and writes through this
 * same store are refused with `ENGRAM_STORE_BUSY`. Records are never held in memory beyond the one at hand.
 *
 * Derived rows (tags, chunks, full-text and BM25 entries) are recomputed from the content; vectors are stored
 * only when the header's embedder profile is the store's. Idempotent: a record whose key is stored with the same
 * values is `unchanged`, one stored with other values is a `conflict` and is left as stored.
 */
import { contentHash, hasCjk } from '@engram/contracts';
import type {
  ExportHeader,
  ExportRecord,
  ExportRow,
  ImportBody,
  ImportOptions,
  ImportSummary,
} from '@engram/store/port-kit';
import { chunkSpans, EngramStoreError, importRows, invalidInput, likeText } from '@engram/store/port-kit';
import { SCHEMA_VERSION } from '../schema.js';
import { CHUNK_VEC_NONE, CHUNK_VEC_READY, chunkKey, indexContent } from './chunks.js';
import { classifySqliteError } from './classify.js';
import type { StoreContext } from './context.js';
import { DERIVED_MEMORY_COLUMNS, PLAIN_TABLES, type PlainTable, tableExists } from './export.js';
import { activeDuplicate } from './memory-rows.js';
import { writeTags, writeVector } from './mirrors.js';
import { linksChanged } from './open-links.js';
import { repairVectorChunks } from './vector-chunks.js';

/** Records between two progress reports (and two writes of the BM25 units indexed so far). */
const STEP = 256;

type Body = ImportBody;
const TABLES: ReadonlyMap<string, PlainTable> = new Map(PLAIN_TABLES.map((t) => [t.type, t]));

function columnsOf(ctx: StoreContext, table: string): ReadonlySet<string> {
  const rows = ctx.db.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[];
  return new Set(rows.map((r) => r.name));
}

/** The importer of one stream over one store. */
class Importer extends importRows.ImportTally {
  readonly #ctx: StoreContext;
  readonly #columns = new Map<string, ReadonlySet<string>>();

  constructor(ctx: StoreContext, header: ExportHeader, options: ImportOptions) {
    super(header, ctx.profile, options);
    this.#ctx = ctx;
    for (const table of ['memories', ...PLAIN_TABLES.map((t) => t.table)]) {
      if (tableExists(ctx, table)) this.#columns.set(table, columnsOf(ctx, table));
    }
  }

  /** Checks that every column is one this store has; a null in an unknown column is dropped. */
  #known(table: string, row: ExportRow): Record<string, string | number | null> {
    const columns = this.#columns.get(table);
    if (columns === undefined) throw invalidInput('the export has rows of a table this store does not have');
    const out: Record<string, string | number | null> = {};
    for (const [key, value] of Object.entries(row)) {
      if (columns.has(key)) out[key] = value;
      else if (value !== null)
        throw invalidInput(`the export has a ${table} column this store does not have`);
    }
    return out;
  }

  #insert(table: string, row: Readonly<Record<string, unknown>>): number {
    const cols = Object.keys(row);
    if (table === 'memory_links') linksChanged(this.#ctx);
    const sql = `INSERT INTO ${table}(${cols.join(', ')}) VALUES (${cols.map((c) => `@${c}`).join(', ')})`;
    return Number(this.#ctx.stmt('write', sql).run(row).lastInsertRowid);
  }

  apply(record: Body): void {
    this.count(
      record.type,
      record.type === 'memory' ? this.#memory(record.row, record.vectors) : this.#plain(record),
    );
  }

  #memory(
    input: ExportRow,
    vectors: readonly (string | null)[] | undefined,
  ): 'imported' | 'unchanged' | 'conflicts' {
    const ctx = this.#ctx;
    for (const key of DERIVED_MEMORY_COLUMNS)
      if (key in input) throw invalidInput('a memory record carries a derived column');
    const { id, agentId, content, tags, row } = importRows.checkImportMemoryRow(
      this.#known('memories', input),
      ctx.limits,
      this.agents,
    );

    const ignore = this.restartClock(row);
    const stored = ctx.stmt('read', 'SELECT * FROM memories WHERE id = ?').get<Record<string, unknown>>(id);
    if (stored !== undefined) {
      return stored.agent_id === agentId && importRows.sameImportValues(stored, row, ignore)
        ? 'unchanged'
        : 'conflicts';
    }

    // The same text already active under another id (an exact duplicate is never stored twice): a conflict.
    if (
      (row.lifecycle ?? 'active') === 'active' &&
      row.kind !== 'event' &&
      activeDuplicate(
        ctx,
        agentId,
        String(row.kind),
        String(row.content_hash),
        typeof row.user_id === 'string' ? row.user_id : null,
      ) !== undefined
    ) {
      return 'conflicts';
    }
    const spans = chunkSpans(content);
    const decoded = this.takeVectors(row, vectors, spans.length);
    if (decoded !== null) row.embedding_fingerprint = ctx.fingerprint;
    const cjk = hasCjk(content.normalize('NFKC'));
    const userId = typeof row.user_id === 'string' ? row.user_id : null;
    const rid = this.#insert('memories', {
      ...row,
      has_cjk: cjk ? 1 : 0,
      like_text: likeText(content),
      chunk_count: spans.length,
    });
    writeTags(ctx, rid, agentId, tags);
    indexContent(ctx, rid, agentId, userId, content, spans);
    if (decoded !== null) {
      if (spans.length === 1) {
        const v = decoded[0];
        if (v !== null && v !== undefined) writeVector(ctx, rid, agentId, userId, v);
      } else {
        const mark = ctx.stmt(
          'write',
          'UPDATE memory_chunks SET vec = ? WHERE agent_id = ? AND rid = ? AND idx = ?',
        );
        decoded.forEach((v, idx) => {
          if (v !== null) writeVector(ctx, chunkKey(rid, idx), agentId, userId, v);
          mark.run(v === null ? CHUNK_VEC_NONE : CHUNK_VEC_READY, agentId, rid, idx);
        });
      }
      this.vectorsImported += 1;
    }
    return 'imported';
  }

  /** One row of a plain table: validated, looked up by its key, inserted when absent. */
  #plain(record: Exclude<Body, { type: 'memory' }>): 'imported' | 'unchanged' | 'conflicts' {
    const t = TABLES.get(record.type);
    if (t === undefined) throw invalidInput('unknown record type');
    for (const key of t.derived)
      if (key in record.row) throw invalidInput(`a ${record.type} record carries a derived column`);
    const row = importRows.checkImportPlainRow(
      record.type,
      this.#known(t.table, record.row),
      this.#ctx.limits,
      this.agents,
    );
    const extra = record.type === 'event' ? { content_hash: contentHash(String(row.content)) } : {};
    const key = t.key.length > 0 ? t.key : Object.keys(row);
    for (const k of key) if (!(k in row)) throw invalidInput(`a ${record.type} record lacks its key`);
    const where = key.map((k) => (row[k] === null ? `${k} IS NULL` : `${k} = @${k}`)).join(' AND ');
    const params = Object.fromEntries(key.filter((k) => row[k] !== null).map((k) => [k, row[k]]));
    const stored = this.#ctx
      .stmt('read', `SELECT * FROM ${t.table} WHERE ${where} LIMIT 1`)
      .get<Record<string, unknown>>(params);
    if (stored !== undefined)
      return importRows.sameImportValues(stored, row, new Set()) ? 'unchanged' : 'conflicts';
    this.#insert(t.table, { ...row, ...extra });
    return 'imported';
  }
}

function checkHeader(record: ExportRecord | undefined): ExportHeader {
  const header = importRows.checkImportHeader(record);
  if (header.schemaVersion > SCHEMA_VERSION) {
    throw new EngramStoreError(
      'ENGRAM_STORE_SCHEMA_TOO_NEW',
      `the export comes from schema version ${header.schemaVersion}, newer than this store supports (${SCHEMA_VERSION})`,
    );
  }
  return header;
}

/** Imports an export stream (see the module comment); the summary counts what was written. */
export async function importRecords(
  ctx: StoreContext,
  records: AsyncIterable<ExportRecord> | Iterable<ExportRecord>,
  options: ImportOptions = {},
): Promise<ImportSummary> {
  if (ctx.closed)
    throw new EngramStoreError('ENGRAM_STORE_CLOSED', 'store import failed: the store is closed');
  let began = false;
  let done: Importer;
  try {
    const { importer, read } = await importRows.readImportStream(records, {
      start: (record) => {
        const started = new Importer(ctx, checkHeader(record), options);
        beginImport(ctx);
        began = true;
        return started;
      },
      apply: (importer, record) => importer.apply(record),
      closed: () => ctx.closed,
      every: STEP,
      step: (read) => {
        ctx.flushLexical();
        options.onProgress?.(read);
      },
    });
    ctx.flushLexical();
    // The last report comes before the commit, as every other: a callback that throws aborts the import with
    // nothing written, never after it is written.
    options.onProgress?.(read);
    ctx.stmt('meta', 'COMMIT').run();
    // Every damaged vector chunk was repaired at the start of the import (`beginImport`).
    ctx.noteVectorChunksRepaired();
    ctx.held = null;
    done = importer;
  } catch (err) {
    if (began) rollbackImport(ctx);
    const own = importRows.streamError(err);
    throw own === null ? classifySqliteError(err, 'importRecords') : own.error;
  }
  return {
    imported: { ...done.imported },
    unchanged: { ...done.unchanged },
    conflicts: { ...done.conflicts },
    vectorsImported: done.vectorsImported,
    ...(done.agents.target === null ? {} : { agentId: done.agents.target }),
  };
}

/** Opens the import's write transaction on the store's connection and marks the connection held by it. */
function beginImport(ctx: StoreContext): void {
  ctx.assertWritable('importRecords');
  ctx.stmt('meta', 'BEGIN IMMEDIATE').run();
  ctx.vectorIndexChecked = false;
  ctx.held = 'import';
  // The import runs in its own transaction, outside `tx`'s repair-and-retry: damaged vector chunks are repaired
  // first, in it (rolled back with it).
  repairVectorChunks(ctx);
}

/** Rolls the import's transaction back (nothing of it stays) and frees the connection. */
function rollbackImport(ctx: StoreContext): void {
  ctx.lexical.clear();
  ctx.held = null;
  if (ctx.closed || !ctx.db.inTransaction) return;
  try {
    ctx.stmt('meta', 'ROLLBACK').run();
  } catch {
    // the original error wins
  }
}
