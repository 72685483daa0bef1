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
import {
  CHUNK_VEC_NONE,
  CHUNK_VEC_READY,
  chunkKey,
  type IndexItem,
  indexContents,
  type VectorItem,
  writeVectors,
} from './derived.js';
import { MEMORY_COLUMNS, type MemoryRow } from './rows.js';
import { memoryExportRow, PLAIN_TABLES } from './transfer-export.js';

/** Records between two progress reports. */
const STEP = 256;
/** Memory records written together (one multi-row statement per table). */
const BATCH = 500;
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

/** The SQL type of a memories column an import writes (`tags` and `metadata` travel as JSON text). */
function importColumnType(column: string): string {
  if (column === 'importance' || column === 'confidence') return 'float8';
  if (column === 'embedding_attempts' || column === 'chunk_count') return 'int';
  if (column === 'has_cjk') return 'boolean';
  return BIGINT_COLUMNS.has(column) ? 'bigint' : 'text';
}
const BIGINT_COLUMNS: ReadonlySet<string> = new Set([
  'seq_from',
  'seq_to',
  'created_at',
  'updated_at',
  'last_accessed_at',
  'access_count',
  'revision',
  'valid_from',
  'valid_to',
  'forgotten_at',
]);

/** A checked memory record waiting for its batch. */
interface PendingMemory {
  readonly id: string;
  readonly agentId: string;
  readonly content: string;
  readonly spans: ReturnType<typeof chunkSpans>;
  readonly decoded: (Float32Array | null)[] | null;
  /** The row as compared with a stored one of the same id. */
  readonly compared: ExportRow;
  readonly ignore: ReadonlySet<string>;
  /** The values to insert, by column. */
  readonly values: Record<string, string | number | boolean | null>;
}

/** The importer of one stream over one store. */
class Importer extends importRows.ImportTally {
  readonly #ctx: PgContext;
  readonly #pending: PendingMemory[] = [];

  constructor(ctx: PgContext, header: ExportHeader, options: ImportOptions) {
    super(header, ctx.profile, options);
    this.#ctx = ctx;
  }

  /**
   * One record. Memories are buffered and written a batch at a time ({@link Importer.flush}); any other record
   * first flushes them, so records are written in the stream's order.
   */
  async apply(db: Queryable, record: Body): Promise<void> {
    if (record.type === 'memory') {
      await this.#memory(db, record.row, record.vectors);
      return;
    }
    await this.flush(db);
    this.count(record.type, await this.#plain(db, record));
  }

  /**
   * Checks a memory record and buffers it, counted as imported until its batch is written (the end record
   * compares the records read, whatever their outcome; {@link Importer.flush} corrects the outcome).
   */
  async #memory(
    db: Queryable,
    input: ExportRow,
    vectors: readonly (string | null)[] | undefined,
  ): Promise<void> {
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
      row: checked,
    } = importRows.checkImportMemoryRow(row, ctx.limits, this.agents);
    Object.assign(row, checked);
    row.valid_from = row.valid_from ?? row.created_at ?? null;
    // A second record of an id in this batch is compared with the first one as stored.
    if (this.#pending.some((m) => m.id === id)) await this.flush(db);
    const ignore = this.restartClock(row);
    const compared = { ...row };
    const spans = chunkSpans(content);
    const decoded = this.takeVectors(row, vectors, spans.length);
    if (decoded !== null) row.embedding_fingerprint = ctx.fingerprint;
    const values: Record<string, string | number | boolean | null> = {
      ...row,
      metadata: row.metadata ?? '{}',
      has_cjk: hasCjk(content.normalize('NFKC')),
      like_text: likeText(content),
      chunk_count: spans.length,
    };
    this.#pending.push({ id, agentId, content, spans, decoded, compared, ignore, values });
    this.count('memory', 'imported');
    if (this.#pending.length >= BATCH) await this.flush(db);
  }

  /** Moves one memory record's outcome from `imported` (as counted when read) to `outcome`. */
  #recount(outcome: 'unchanged' | 'conflicts'): void {
    this.imported.memories -= 1;
    this[outcome].memories += 1;
  }

  /**
   * Writes the buffered memories: one read for the ids already stored (`unchanged` when stored with the same
   * values, else `conflicts`), one multi-row insert per column set (a row skipped there is an active exact
   * duplicate: `conflicts`), then the derived rows and vectors of the batch in a few statements.
   */
  async flush(db: Queryable): Promise<void> {
    const batch = this.#pending.splice(0);
    if (batch.length === 0) return;
    const ctx = this.#ctx;
    const stored = new Map(
      (
        await ctx.q<MemoryRow>(
          db,
          'read',
          `SELECT ${MEMORY_COLUMNS} FROM memories WHERE id = ANY($1::text[])`,
          [batch.map((m) => m.id)],
        )
      ).map((r) => [r.id, r]),
    );
    const fresh: PendingMemory[] = [];
    for (const m of batch) {
      const have = stored.get(m.id);
      if (have === undefined) fresh.push(m);
      else
        this.#recount(
          have.agent_id === m.agentId &&
            importRows.sameImportValues(memoryExportRow(have), m.compared, m.ignore)
            ? 'unchanged'
            : 'conflicts',
        );
    }
    const ridOf = new Map<string, number>();
    const bySignature = new Map<string, PendingMemory[]>();
    for (const m of fresh) {
      const signature = Object.keys(m.values).join(',');
      bySignature.set(signature, [...(bySignature.get(signature) ?? []), m]);
    }
    for (const [signature, group] of bySignature) {
      const cols = signature.split(',');
      const returned = await ctx.q<{ rid: string; id: string }>(
        db,
        'write',
        `INSERT INTO memories(${cols.join(', ')})
         SELECT ${cols.map((c, i) => (c === 'tags' ? `ARRAY(SELECT jsonb_array_elements_text(c${i}::jsonb))` : c === 'metadata' ? `c${i}::jsonb` : `c${i}`)).join(', ')}
         FROM unnest(${cols.map((c, i) => `$${i + 1}::${importColumnType(c)}[]`).join(', ')}) AS u(${cols.map((_, i) => `c${i}`).join(', ')})
         ON CONFLICT DO NOTHING RETURNING rid, id`,
        cols.map((c) => group.map((m) => m.values[c] ?? null)),
      );
      for (const r of returned) ridOf.set(r.id, Number(r.rid));
    }
    const items: IndexItem[] = [];
    const vectorsOut: VectorItem[] = [];
    const chunkVec: { rid: number[]; idx: number[]; vec: number[] } = { rid: [], idx: [], vec: [] };
    for (const m of fresh) {
      const rid = ridOf.get(m.id);
      // Taken meanwhile, or an active exact duplicate of a stored row under another id: left as stored.
      if (rid === undefined) {
        this.#recount('conflicts');
        continue;
      }
      items.push({ rid, agentId: m.agentId, content: m.content, spans: m.spans });
      if (m.decoded === null) continue;
      if (m.spans.length === 1) {
        const v = m.decoded[0];
        if (v !== null && v !== undefined) vectorsOut.push({ key: rid, rid, agentId: m.agentId, vector: v });
      } else {
        for (const [idx, v] of m.decoded.entries()) {
          if (v !== null) vectorsOut.push({ key: chunkKey(rid, idx), rid, agentId: m.agentId, vector: v });
          chunkVec.rid.push(rid);
          chunkVec.idx.push(idx);
          chunkVec.vec.push(v === null ? CHUNK_VEC_NONE : CHUNK_VEC_READY);
        }
      }
      this.vectorsImported += 1;
    }
    await indexContents(ctx, db, items);
    await writeVectors(ctx, db, vectorsOut);
    if (chunkVec.rid.length > 0) {
      await ctx.run(
        db,
        'write',
        `UPDATE memory_chunks c SET vec = u.v FROM unnest($1::bigint[], $2::int[], $3::smallint[]) AS u(r, i, v)
         WHERE c.rid = u.r AND c.idx = u.i`,
        [chunkVec.rid, chunkVec.idx, chunkVec.vec],
      );
    }
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
        await importer.flush(db);
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
