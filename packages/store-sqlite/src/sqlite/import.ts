/**
 * The import side of the transfer format (see `transfer.ts`): records are read one by one and applied in
 * batches, one transaction per batch, so an import holds one batch in memory whatever the stream's size.
 * Every row is validated before it is written; derived rows (tags, chunks, full-text and BM25 entries) are
 * recomputed from the content; vectors are stored only when the header's embedder profile is the store's.
 *
 * Idempotent: a record whose key is stored with the same values is `unchanged`, one stored with other values
 * is a `conflict` and is left as stored. A stream that ends without its end record, or whose counts differ
 * from it, fails after the batches read so far were committed (importing it again completes it).
 */
import { contentHash, hasCjk } from '@engram/contracts';
import type {
  ExportCounts,
  ExportHeader,
  ExportRecord,
  ExportRow,
  ImportOptions,
  ImportSummary,
} from '@engram/store/port-kit';
import {
  chunkSpans,
  EngramStoreError,
  EXPORT_FORMAT,
  EXPORT_FORMAT_VERSION,
  invalidInput,
  likeText,
  validateAgentId,
  validateContent,
  validateId,
  validateInteger,
  validateKind,
  validateLifecycle,
  validateSkillName,
  validateTags,
  validateTimestamp,
  validateUnit,
  validateVector,
} from '@engram/store/port-kit';
import { SCHEMA_VERSION } from '../schema.js';
import { CHUNK_VEC_NONE, CHUNK_VEC_READY, chunkKey, indexContent } from './chunks.js';
import type { StoreContext } from './context.js';
import { DERIVED_MEMORY_COLUMNS, PLAIN_TABLES, type PlainTable, tableExists } from './export.js';
import { activeDuplicate } from './memory-rows.js';
import { writeTags, writeVector } from './mirrors.js';
import { linksChanged } from './open-links.js';

/** Records per transaction. */
const BATCH = 256;
/** Columns an import may recompute, so a difference there is no conflict. */
const EMBEDDING_COLUMNS = new Set(['embedding_state', 'embedding_fingerprint', 'embedding_attempts']);

type Counts = { -readonly [K in keyof ExportCounts]: number };
type Body = Exclude<ExportRecord, ExportHeader | { type: 'end' }>;
const zero = (): Counts => ({ memories: 0, events: 0, cursors: 0, skills: 0, links: 0, history: 0 });
const KEY: Record<Body['type'], keyof Counts> = {
  memory: 'memories',
  event: 'events',
  cursor: 'cursors',
  skill: 'skills',
  link: 'links',
  history: 'history',
};
const TABLES: ReadonlyMap<string, PlainTable> = new Map(PLAIN_TABLES.map((t) => [t.type, t]));

function columnsOf(ctx: StoreContext, table: string): ReadonlySet<string> {
  const rows = ctx.db.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[];
  return new Set(rows.map((r) => r.name));
}

function intOrNull(value: unknown, field: string, min: number): void {
  if (value !== null && value !== undefined) validateInteger(value, field, min);
}

function sameValues(stored: Record<string, unknown>, row: ExportRow, ignore: ReadonlySet<string>): boolean {
  for (const [key, value] of Object.entries(row)) {
    if (ignore.has(key)) continue;
    const have = stored[key];
    if ((typeof have === 'bigint' ? Number(have) : have) !== value) return false;
  }
  return true;
}

function decodeVector(b64: string, dimensions: number): Float32Array {
  const bytes = Buffer.from(b64, 'base64');
  if (bytes.byteLength !== dimensions * 4) throw invalidInput('an exported vector has the wrong length');
  const copy = new Float32Array(dimensions);
  new Uint8Array(copy.buffer).set(bytes);
  return validateVector(copy, dimensions, 'vector');
}

/** The importer of one stream over one store. */
class Importer {
  readonly imported: Counts = zero();
  readonly unchanged: Counts = zero();
  readonly conflicts: Counts = zero();
  readonly seen: Counts = zero();
  vectorsImported = 0;
  readonly #ctx: StoreContext;
  readonly #columns = new Map<string, ReadonlySet<string>>();
  readonly #vectors: boolean;

  constructor(ctx: StoreContext, header: ExportHeader) {
    this.#ctx = ctx;
    for (const table of ['memories', ...PLAIN_TABLES.map((t) => t.table)]) {
      if (tableExists(ctx, table)) this.#columns.set(table, columnsOf(ctx, table));
    }
    const p = ctx.profile;
    this.#vectors =
      header.vectors &&
      header.embedder !== null &&
      p !== null &&
      header.embedder.id === p.id &&
      header.embedder.dimensions === p.dimensions;
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
    this.seen[KEY[record.type]] += 1;
    const outcome = record.type === 'memory' ? this.#memory(record.row, record.vectors) : this.#plain(record);
    this[outcome][KEY[record.type]] += 1;
  }

  #memory(
    input: ExportRow,
    vectors: readonly (string | null)[] | undefined,
  ): 'imported' | 'unchanged' | 'conflicts' {
    const ctx = this.#ctx;
    for (const key of DERIVED_MEMORY_COLUMNS)
      if (key in input) throw invalidInput('a memory record carries a derived column');
    const row = this.#known('memories', input);
    const id = validateId(row.id, 'memory.id');
    const agentId = validateAgentId(row.agent_id, 'memory.agent_id');
    validateKind(row.kind, 'memory.kind');
    const content = validateContent(row.content, ctx.limits, 'memory.content');
    validateUnit(row.importance, 'memory.importance');
    validateUnit(row.confidence, 'memory.confidence');
    validateLifecycle(row.lifecycle ?? 'active', 'memory.lifecycle');
    validateTimestamp(row.created_at, 'memory.created_at');
    validateTimestamp(row.updated_at, 'memory.updated_at');
    intOrNull(row.last_accessed_at, 'memory.last_accessed_at', 0);
    intOrNull(row.seq_from, 'memory.seq_from', 0);
    intOrNull(row.seq_to, 'memory.seq_to', 0);
    intOrNull(row.access_count, 'memory.access_count', 0);
    intOrNull(row.revision, 'memory.revision', 1);
    intOrNull(row.embedding_attempts, 'memory.embedding_attempts', 0);
    if (row.session_id !== null && row.session_id !== undefined)
      validateAgentId(row.session_id, 'memory.session_id');
    if (row.superseded_by !== null && row.superseded_by !== undefined)
      validateId(row.superseded_by, 'memory.superseded_by');
    let tags: string[];
    try {
      tags = validateTags(JSON.parse(String(row.tags ?? '[]')), 'memory.tags');
    } catch (err) {
      if (err instanceof EngramStoreError) throw err;
      throw invalidInput('memory.tags is not a JSON list');
    }
    row.tags = JSON.stringify(tags);
    row.content_hash = contentHash(content);

    const stored = ctx.stmt('read', 'SELECT * FROM memories WHERE id = ?').get<Record<string, unknown>>(id);
    if (stored !== undefined) {
      return stored.agent_id === agentId && sameValues(stored, row, EMBEDDING_COLUMNS)
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
        row.content_hash,
        (row.user_id as string | null) ?? null,
      ) !== undefined
    ) {
      return 'conflicts';
    }
    const spans = chunkSpans(content);
    const profile = ctx.profile;
    const useVectors =
      this.#vectors &&
      profile !== null &&
      row.embedding_state === 'ready' &&
      vectors !== undefined &&
      vectors.length === spans.length &&
      vectors.some((v) => v !== null);
    const decoded =
      useVectors && profile !== null
        ? vectors.map((v) => (v === null ? null : decodeVector(v, profile.dimensions)))
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
    const cjk = hasCjk(content.normalize('NFKC'));
    const rid = this.#insert('memories', {
      ...row,
      has_cjk: cjk ? 1 : 0,
      like_text: likeText(content),
      chunk_count: spans.length,
    });
    writeTags(ctx, rid, agentId, tags);
    indexContent(ctx, rid, agentId, content, spans);
    if (decoded !== null) {
      if (spans.length === 1) {
        const v = decoded[0];
        if (v !== null && v !== undefined) writeVector(ctx, rid, agentId, v);
      } else {
        const mark = ctx.stmt(
          'write',
          'UPDATE memory_chunks SET vec = ? WHERE agent_id = ? AND rid = ? AND idx = ?',
        );
        decoded.forEach((v, idx) => {
          if (v !== null) writeVector(ctx, chunkKey(rid, idx), agentId, v);
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
    const row = this.#known(t.table, record.row);
    validateAgentId(row.agent_id, `${record.type}.agent_id`);
    const extra = this.#check(record.type, row);
    const key = t.key.length > 0 ? t.key : Object.keys(row);
    for (const k of key) if (!(k in row)) throw invalidInput(`a ${record.type} record lacks its key`);
    const where = key.map((k) => (row[k] === null ? `${k} IS NULL` : `${k} = @${k}`)).join(' AND ');
    const params = Object.fromEntries(key.filter((k) => row[k] !== null).map((k) => [k, row[k]]));
    const stored = this.#ctx
      .stmt('read', `SELECT * FROM ${t.table} WHERE ${where} LIMIT 1`)
      .get<Record<string, unknown>>(params);
    if (stored !== undefined) return sameValues(stored, row, new Set()) ? 'unchanged' : 'conflicts';
    this.#insert(t.table, { ...row, ...extra });
    return 'imported';
  }

  /** Checks of one record type beyond the table's constraints; returns the derived columns to write. */
  #check(
    type: Exclude<Body, { type: 'memory' }>['type'],
    row: Record<string, string | number | null>,
  ): Record<string, unknown> {
    const limits = this.#ctx.limits;
    switch (type) {
      case 'event': {
        validateAgentId(row.session_id, 'event.session_id');
        validateInteger(row.seq, 'event.seq', 1);
        const content = validateContent(row.content, limits, 'event.content', true);
        validateTimestamp(row.created_at, 'event.created_at');
        if (typeof row.role !== 'string') throw invalidInput('event.role must be a string');
        if (row.user_id != null) validateAgentId(row.user_id, 'event.user_id');
        try {
          const meta: unknown = JSON.parse(String(row.metadata ?? '{}'));
          if (typeof meta !== 'object' || meta === null || Array.isArray(meta))
            throw new Error('not an object');
        } catch {
          throw invalidInput('event.metadata is not a JSON object');
        }
        return { content_hash: contentHash(content) };
      }
      case 'cursor':
        validateAgentId(row.session_id, 'cursor.session_id');
        validateInteger(row.cursor, 'cursor.cursor', 0);
        validateTimestamp(row.updated_at, 'cursor.updated_at');
        return {};
      case 'skill':
        validateSkillName(row.name);
        validateContent(row.content, limits, 'skill.content');
        if (typeof row.description !== 'string') throw invalidInput('skill.description must be a string');
        validateTimestamp(row.created_at, 'skill.created_at');
        validateTimestamp(row.updated_at, 'skill.updated_at');
        return {};
      case 'link':
        validateId(row.older_id, 'link.older_id');
        validateId(row.newer_id, 'link.newer_id');
        validateTimestamp(row.created_at, 'link.created_at');
        return {};
      case 'history':
        validateId(row.memory_id, 'history.memory_id');
        validateTimestamp(row.at, 'history.at');
        if (row.content !== null && row.content !== undefined)
          validateContent(row.content, limits, 'history.content', true);
        return {};
    }
  }
}

function checkHeader(record: ExportRecord | undefined): ExportHeader {
  if (record === undefined || record.type !== 'header' || record.format !== EXPORT_FORMAT) {
    throw invalidInput('the export does not start with an Engram export header');
  }
  if (record.formatVersion > EXPORT_FORMAT_VERSION) {
    throw invalidInput(`the export format version ${record.formatVersion} is newer than this store reads`);
  }
  if (record.schemaVersion > SCHEMA_VERSION) {
    throw new EngramStoreError(
      'ENGRAM_STORE_SCHEMA_TOO_NEW',
      `the export comes from schema version ${record.schemaVersion}, newer than this store supports (${SCHEMA_VERSION})`,
    );
  }
  return record;
}

function sameCounts(a: Counts, b: ExportCounts): boolean {
  return (
    a.memories === b.memories && a.events === b.events && a.cursors === b.cursors && a.skills === b.skills
  );
}

/** Imports an export stream (see the module comment); the summary counts what was written. */
export async function importRecords(
  ctx: StoreContext,
  records: AsyncIterable<ExportRecord> | Iterable<ExportRecord>,
  options: ImportOptions = {},
): Promise<ImportSummary> {
  const check = (): void => {
    if (ctx.closed)
      throw new EngramStoreError('ENGRAM_STORE_CLOSED', 'store import failed: the store is closed');
  };
  check();
  let importer: Importer | null = null;
  let batch: Body[] = [];
  let read = 0;
  let ended = false;
  const flush = async (): Promise<void> => {
    if (batch.length === 0 || importer === null) return;
    const current = batch;
    const target = importer;
    batch = [];
    await ctx.op('importRecords', () =>
      ctx.tx(() => {
        for (const r of current) target.apply(r);
      }),
    );
    options.onProgress?.(read);
  };
  for await (const record of records) {
    read += 1;
    if (typeof record !== 'object' || record === null)
      throw invalidInput('an export record must be an object');
    if (importer === null) {
      importer = await ctx.op('importRecords', () => new Importer(ctx, checkHeader(record)));
      continue;
    }
    if (ended) throw invalidInput('the export has records after its end record');
    if (record.type === 'header') throw invalidInput('the export has a second header');
    if (record.type === 'end') {
      await flush();
      if (!sameCounts(importer.seen, record.counts)) {
        throw invalidInput('the export is incomplete: its record counts differ from its end record');
      }
      ended = true;
      continue;
    }
    batch.push(record);
    if (batch.length >= BATCH) await flush();
  }
  if (importer === null) throw invalidInput('the export is empty');
  await flush();
  if (!ended) throw invalidInput('the export is truncated: it has no end record');
  return {
    imported: { ...importer.imported },
    unchanged: { ...importer.unchanged },
    conflicts: { ...importer.conflicts },
    vectorsImported: importer.vectorsImported,
  };
}
