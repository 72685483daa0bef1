/**
 * Import on PostgreSQL: reads the export format of `@engram/store` (from either store) as the SQLite store does —
 * all or nothing: one transaction on one pooled connection holds the whole stream and commits only once the end
 * record was read and every one of its counts matched (a failure, a truncated stream or a dead process leaves the
 * database exactly as it was); every row checked by `import-rows.ts` of `@engram/store`, the rules every store
 * applies, before it is written; derived rows
 * (chunks, BM25 units) recomputed from the content; vectors kept only when the header's embedder profile is the
 * store's. Idempotent: a record whose key is stored with the same values is `unchanged`, one stored with other
 * values (or an active exact duplicate under another id) is a `conflict` and is left as stored.
 *
 * Over 400 lines on purpose: the importer and its per-record validation are one unit, mirroring the SQLite
 * store's importer so the two can be compared side by side.
 */
import { contentHash, hasCjk } from '@engram/contracts';
import type { ExportHeader, ExportRecord, ExportRow, ImportOptions, ImportSummary } from '@engram/store';
import { chunkSpans, importRows, invalidInput, likeText } from '@engram/store/port-kit';
import type { PgContext, Queryable } from './context.js';
import { CHUNK_VEC_NONE, CHUNK_VEC_READY, chunkKey, indexContents, writeVector } from './derived.js';
import { MEMORY_COLUMNS, type MemoryRow } from './rows.js';
import { memoryExportRow, PLAIN_TABLES } from './transfer-export.js';

/** Records between two progress reports. */
const STEP = 256;
/** The memory columns an export carries. */
const MEMORY_EXPORT_COLUMNS: ReadonlySet<string> = new Set([
  'id',
  'agent_id',
  'kind',
  'content',
  'content_hash',
  'importance',
  'confidence',
  'tags',
  'session_id',
  'seq_from',
  'seq_to',
  'created_at',
  'updated_at',
  'last_accessed_at',
  'access_count',
  'revision',
  'lifecycle',
  'superseded_by',
  'embedding_state',
  'embedding_fingerprint',
  'embedding_attempts',
  'user_id',
  'metadata',
  'valid_from',
  'valid_to',
  'forgotten_at',
]);

type Body = importRows.ImportBody;
type PlainTable = (typeof PLAIN_TABLES)[number];
const PLAIN_KEYS: Record<PlainTable['type'], readonly string[]> = {
  event: ['agent_id', 'session_id', 'seq'],
  cursor: ['agent_id', 'session_id'],
  skill: ['agent_id', 'name'],
  link: ['agent_id', 'older_id', 'newer_id', 'kind'],
  history: [],
};

/** JSON with object keys sorted (jsonb keeps its own key order), for comparing metadata. */

/** The importer of one stream over one store. */
class Importer extends importRows.ImportTally {
  readonly #ctx: PgContext;

  constructor(ctx: PgContext, header: ExportHeader, options: ImportOptions) {
    super(header, ctx.profile, options);
    this.#ctx = ctx;
  }

  async apply(db: Queryable, record: Body): Promise<void> {
    this.count(
      record.type,
      record.type === 'memory'
        ? await this.#memory(db, record.row, record.vectors)
        : await this.#plain(db, record),
    );
  }

  async #memory(
    db: Queryable,
    input: ExportRow,
    vectors: readonly (string | null)[] | undefined,
  ): Promise<'imported' | 'unchanged' | 'conflicts'> {
    const ctx = this.#ctx;
    const row: Record<string, string | number | null> = {};
    for (const [key, value] of Object.entries(input)) {
      if (MEMORY_EXPORT_COLUMNS.has(key)) row[key] = value;
      else if (value !== null)
        throw invalidInput('the export has a memories column this store does not have');
    }
    const {
      id,
      agentId,
      content,
      tags,
      row: checked,
    } = importRows.checkImportMemoryRow(row, ctx.limits, this.agents);
    Object.assign(row, checked);
    row.valid_from = row.valid_from ?? row.created_at ?? null;

    const stored = (
      await ctx.q<MemoryRow>(db, 'read', `SELECT ${MEMORY_COLUMNS} FROM memories WHERE id = $1`, [id])
    )[0];
    const ignore = this.restartClock(row);
    if (stored !== undefined) {
      return stored.agent_id === agentId && importRows.sameImportValues(memoryExportRow(stored), row, ignore)
        ? 'unchanged'
        : 'conflicts';
    }
    const spans = chunkSpans(content);
    const decoded = this.takeVectors(row, vectors, spans.length);
    if (decoded !== null) row.embedding_fingerprint = ctx.fingerprint;
    const values: Record<string, unknown> = {
      ...row,
      tags,
      metadata: row.metadata ?? '{}',
      has_cjk: hasCjk(content.normalize('NFKC')),
      like_text: likeText(content),
      chunk_count: spans.length,
    };
    const cols = Object.keys(values);
    const inserted = await ctx.q<{ rid: string }>(
      db,
      'write',
      `INSERT INTO memories(${cols.join(', ')})
       VALUES (${cols.map((c, i) => `$${i + 1}${c === 'tags' ? '::text[]' : c === 'metadata' ? '::jsonb' : ''}`).join(', ')})
       ON CONFLICT DO NOTHING RETURNING rid`,
      cols.map((c) => values[c]),
    );
    // Taken meanwhile, or an active exact duplicate of a stored row under another id: left as stored.
    if (inserted[0] === undefined) return 'conflicts';
    const rid = Number(inserted[0].rid);
    await indexContents(ctx, db, [{ rid, agentId, content, spans }]);
    if (decoded !== null) {
      if (spans.length === 1) {
        const v = decoded[0];
        if (v !== null && v !== undefined) await writeVector(ctx, db, rid, rid, agentId, v);
      } else {
        for (const [idx, v] of decoded.entries()) {
          if (v !== null) await writeVector(ctx, db, chunkKey(rid, idx), rid, agentId, v);
          await ctx.run(db, 'write', 'UPDATE memory_chunks SET vec = $1 WHERE rid = $2 AND idx = $3', [
            v === null ? CHUNK_VEC_NONE : CHUNK_VEC_READY,
            rid,
            idx,
          ]);
        }
      }
      this.vectorsImported += 1;
    }
    return 'imported';
  }

  /** One row of a plain table: validated, looked up by its key, inserted when absent. */
  async #plain(
    db: Queryable,
    record: Exclude<Body, { type: 'memory' }>,
  ): Promise<'imported' | 'unchanged' | 'conflicts'> {
    const t = PLAIN_TABLES.find((p) => p.type === record.type);
    if (t === undefined) throw invalidInput('unknown record type');
    const known: ReadonlySet<string> = new Set(t.columns);
    const row: Record<string, string | number | null> = {};
    for (const [key, value] of Object.entries(record.row)) {
      if (known.has(key)) row[key] = value;
      else if (value !== null)
        throw invalidInput(`the export has a ${t.table} column this store does not have`);
    }
    Object.assign(row, importRows.checkImportPlainRow(record.type, row, this.#ctx.limits, this.agents));
    const extra = record.type === 'event' ? { content_hash: contentHash(String(row.content)) } : {};
    const key = PLAIN_KEYS[t.type].length > 0 ? PLAIN_KEYS[t.type] : Object.keys(row);
    for (const k of key) if (!(k in row)) throw invalidInput(`a ${record.type} record lacks its key`);
    const params: unknown[] = [];
    const where = key
      .map((k) => {
        if (row[k] === null) return `${k} IS NULL`;
        params.push(row[k]);
        return t.type === 'skill' && k === 'name'
          ? `lower(name) = lower($${params.length})`
          : `${k} = $${params.length}`;
      })
      .join(' AND ');
    const stored = (
      await this.#ctx.q<Record<string, unknown>>(
        db,
        'read',
        `SELECT * FROM ${t.table} WHERE ${where} LIMIT 1`,
        params,
      )
    )[0];
    if (stored !== undefined)
      return importRows.sameImportValues(stored, row, new Set()) ? 'unchanged' : 'conflicts';
    const values: Record<string, unknown> = { ...row, ...extra };
    const cols = Object.keys(values);
    const n = await this.#ctx.run(
      db,
      'write',
      `INSERT INTO ${t.table}(${cols.join(', ')}) VALUES (${cols.map((_, i) => `$${i + 1}`).join(', ')})
       ON CONFLICT DO NOTHING`,
      cols.map((c) => values[c]),
    );
    return n === 1 ? 'imported' : 'conflicts';
  }
}

/** Imports an export stream (see the module comment); the summary counts what was written. */
export async function importRecords(
  ctx: PgContext,
  records: AsyncIterable<ExportRecord> | Iterable<ExportRecord>,
  options: ImportOptions = {},
): Promise<ImportSummary> {
  const done = await ctx
    .op('importRecords', () =>
      ctx.tx(async (db) => {
        const { importer, read } = await importRows.readImportStream(records, {
          start: (record) => new Importer(ctx, importRows.checkImportHeader(record), options),
          apply: (importer, record) => importer.apply(db, record),
          closed: () => ctx.closed,
          every: STEP,
          step: (n) => options.onProgress?.(n),
        });
        options.onProgress?.(read);
        return importer;
      }),
    )
    .catch((err: unknown) => {
      // The source's own error (a reader refusing a line …) is the caller's: rethrown as it was thrown.
      const own = importRows.streamError(err);
      throw own === null ? err : own.error;
    });
  const written = Object.values(done.imported).reduce((a, b) => a + b, 0);
  await ctx.noteInserted(written);
  return done.summary();
}
