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
import {
  EngramStoreError,
  type ExportHeader,
  type ExportRecord,
  type ExportRow,
  type ImportOptions,
  type ImportSummary,
} from '@engram/store';
import {
  COUNT_KEY,
  checkImportHeader,
  checkImportMemoryRow,
  checkImportPlainRow,
  chunkSpans,
  decodeImportVector,
  ImportAgents,
  type ImportBody,
  type ImportCounts,
  incompleteExport,
  invalidInput,
  likeText,
  restartClocksAt,
  sameImportCounts,
  sourceRecords,
  streamError,
  truncatedExport,
  zeroCounts,
} from '@engram/store/port-kit';
import type { PgContext, Queryable } from './context.js';
import { CHUNK_VEC_NONE, CHUNK_VEC_READY, chunkKey, indexContents, writeVector } from './derived.js';
import { MEMORY_COLUMNS, type MemoryRow } from './rows.js';
import { memoryExportRow, PLAIN_TABLES } from './transfer-export.js';

/** Records between two progress reports. */
const STEP = 256;
/** Columns an import may recompute, so a difference there is no conflict. */
const EMBEDDING_COLUMNS = new Set(['embedding_state', 'embedding_fingerprint', 'embedding_attempts']);
/** The same, and the decay clock an import restarts (`restartClocksAt`). */
const EMBEDDING_AND_CLOCK = new Set([...EMBEDDING_COLUMNS, 'updated_at']);
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

type Counts = ImportCounts;
type Body = ImportBody;
type PlainTable = (typeof PLAIN_TABLES)[number];
const zero = zeroCounts;
const KEY = COUNT_KEY;
const PLAIN_KEYS: Record<PlainTable['type'], readonly string[]> = {
  event: ['agent_id', 'session_id', 'seq'],
  cursor: ['agent_id', 'session_id'],
  skill: ['agent_id', 'name'],
  link: ['agent_id', 'older_id', 'newer_id', 'kind'],
  history: [],
};

/** JSON with object keys sorted (jsonb keeps its own key order), for comparing metadata. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

function sameValues(stored: Record<string, unknown>, row: ExportRow, ignore: ReadonlySet<string>): boolean {
  for (const [key, value] of Object.entries(row)) {
    if (ignore.has(key)) continue;
    const have = stored[key];
    if (key === 'metadata' && typeof have === 'string' && typeof value === 'string') {
      if (canonical(JSON.parse(have)) !== canonical(JSON.parse(value))) return false;
      continue;
    }
    if ((typeof have === 'string' && typeof value === 'number' ? Number(have) : have) !== value) return false;
  }
  return true;
}

/** The importer of one stream over one store. */
class Importer {
  readonly imported: Counts = zero();
  readonly unchanged: Counts = zero();
  readonly conflicts: Counts = zero();
  readonly seen: Counts = zero();
  vectorsImported = 0;
  readonly #ctx: PgContext;
  readonly #vectors: boolean;
  readonly #restartAt: number | undefined;
  readonly agents: ImportAgents;

  constructor(
    ctx: PgContext,
    header: ExportHeader,
    agentId: string | undefined,
    restartAt: number | undefined,
  ) {
    this.#ctx = ctx;
    this.#restartAt = restartAt;
    this.agents = new ImportAgents(header, agentId);
    const p = ctx.profile;
    this.#vectors =
      header.vectors &&
      header.embedder !== null &&
      p !== null &&
      header.embedder.id === p.id &&
      header.embedder.dimensions === p.dimensions;
  }

  async apply(db: Queryable, record: Body): Promise<void> {
    this.seen[KEY[record.type]] += 1;
    const outcome =
      record.type === 'memory'
        ? await this.#memory(db, record.row, record.vectors)
        : await this.#plain(db, record);
    this[outcome][KEY[record.type]] += 1;
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
    const { id, agentId, content, tags, row: checked } = checkImportMemoryRow(row, ctx.limits, this.agents);
    Object.assign(row, checked);
    row.valid_from = row.valid_from ?? row.created_at ?? null;

    const stored = (
      await ctx.q<MemoryRow>(db, 'read', `SELECT ${MEMORY_COLUMNS} FROM memories WHERE id = $1`, [id])
    )[0];
    if (this.#restartAt !== undefined) row.updated_at = this.#restartAt;
    if (stored !== undefined) {
      const ignore = this.#restartAt === undefined ? EMBEDDING_COLUMNS : EMBEDDING_AND_CLOCK;
      return stored.agent_id === agentId && sameValues(memoryExportRow(stored), row, ignore)
        ? 'unchanged'
        : 'conflicts';
    }
    const spans = chunkSpans(content);
    const profile = ctx.profile;
    const decoded =
      this.#vectors &&
      profile !== null &&
      row.embedding_state === 'ready' &&
      vectors !== undefined &&
      vectors.length === spans.length &&
      vectors.some((v) => v !== null)
        ? vectors.map((v) => (v === null ? null : decodeImportVector(v, profile.dimensions)))
        : null;
    if (decoded === null) {
      if (row.embedding_state === 'ready' || row.embedding_state === undefined) {
        // No vector to go with it here: the drain embeds it again.
        row.embedding_state = 'pending';
        row.embedding_attempts = 0;
      }
      row.embedding_fingerprint = null;
    } else {
      row.embedding_fingerprint = ctx.fingerprint;
    }
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
    Object.assign(row, checkImportPlainRow(record.type, row, this.#ctx.limits, this.agents));
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
    if (stored !== undefined) return sameValues(stored, row, new Set()) ? 'unchanged' : 'conflicts';
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
        let importer: Importer | null = null;
        let read = 0;
        let ended = false;
        for await (const record of sourceRecords(records)) {
          read += 1;
          if (typeof record !== 'object' || record === null)
            throw invalidInput('an export record must be an object');
          if (importer === null) {
            importer = new Importer(
              ctx,
              checkImportHeader(record),
              options.agentId,
              restartClocksAt(options),
            );
            continue;
          }
          if (ctx.closed)
            throw new EngramStoreError('ENGRAM_STORE_CLOSED', 'store import failed: the store is closed');
          if (ended) throw invalidInput('the export has records after its end record');
          if (record.type === 'header') throw invalidInput('the export has a second header');
          if (record.type === 'end') {
            if (!sameImportCounts(importer.seen, record.counts)) throw incompleteExport();
            ended = true;
            continue;
          }
          await importer.apply(db, record);
          if (read % STEP === 0) options.onProgress?.(read);
        }
        if (importer === null) throw invalidInput('the export is empty');
        if (!ended) throw truncatedExport();
        options.onProgress?.(read);
        return importer as Importer;
      }),
    )
    .catch((err: unknown) => {
      // The source's own error (a reader refusing a line …) is the caller's: rethrown as it was thrown.
      const own = streamError(err);
      throw own === null ? err : own.error;
    });
  const written = Object.values(done.imported).reduce((a, b) => a + b, 0);
  await ctx.noteInserted(written);
  return {
    imported: { ...done.imported },
    unchanged: { ...done.unchanged },
    conflicts: { ...done.conflicts },
    vectorsImported: done.vectorsImported,
    ...(done.agents.target === null ? {} : { agentId: done.agents.target }),
  };
}
