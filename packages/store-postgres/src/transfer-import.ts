/**
 * Import on PostgreSQL: reads the export format of `@engram/store` (from either store) as the SQLite store does —
 * records applied in batches, one transaction per batch; every row validated before it is written; derived rows
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
  EXPORT_FORMAT,
  EXPORT_FORMAT_VERSION,
  type ExportCounts,
  type ExportHeader,
  type ExportRecord,
  type ExportRow,
  type ImportOptions,
  type ImportSummary,
} from '@engram/store';
import {
  chunkSpans,
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
import type { PgContext, Queryable } from './context.js';
import { CHUNK_VEC_NONE, CHUNK_VEC_READY, chunkKey, indexContents, writeVector } from './derived.js';
import { MEMORY_COLUMNS, type MemoryRow } from './rows.js';
import { memoryExportRow, PLAIN_TABLES } from './transfer-export.js';

/** Records per transaction. */
const BATCH = 256;
/** Columns an import may recompute, so a difference there is no conflict. */
const EMBEDDING_COLUMNS = new Set(['embedding_state', 'embedding_fingerprint', 'embedding_attempts']);
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

type Counts = { -readonly [K in keyof ExportCounts]: number };
type Body = Exclude<ExportRecord, ExportHeader | { type: 'end' }>;
type PlainTable = (typeof PLAIN_TABLES)[number];
const zero = (): Counts => ({ memories: 0, events: 0, cursors: 0, skills: 0, links: 0, history: 0 });
const KEY: Record<Body['type'], keyof Counts> = {
  memory: 'memories',
  event: 'events',
  cursor: 'cursors',
  skill: 'skills',
  link: 'links',
  history: 'history',
};
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

function intOrNull(value: unknown, field: string, min: number): void {
  if (value !== null && value !== undefined) validateInteger(value, field, min);
}

function jsonObject(value: unknown, field: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(String(value ?? '{}'));
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
      throw new Error('not an object');
    return parsed as Record<string, unknown>;
  } catch {
    throw invalidInput(`${field} is not a JSON object`);
  }
}

function decodeVector(b64: string, dimensions: number): Float32Array {
  const bytes = Buffer.from(b64, 'base64');
  if (bytes.byteLength !== dimensions * 4) throw invalidInput('an exported vector has the wrong length');
  const copy = new Float32Array(dimensions);
  new Uint8Array(copy.buffer).set(bytes);
  return validateVector(copy, dimensions, 'vector');
}

function checkHeader(record: ExportRecord | undefined): ExportHeader {
  if (record === undefined || record.type !== 'header' || record.format !== EXPORT_FORMAT) {
    throw invalidInput('the export does not start with an Engram export header');
  }
  if (record.formatVersion > EXPORT_FORMAT_VERSION) {
    throw invalidInput(`the export format version ${record.formatVersion} is newer than this store reads`);
  }
  return record;
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

  constructor(ctx: PgContext, header: ExportHeader) {
    this.#ctx = ctx;
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
    const id = validateId(row.id, 'memory.id');
    const agentId = validateAgentId(row.agent_id, 'memory.agent_id');
    validateKind(row.kind, 'memory.kind');
    const content = validateContent(row.content, ctx.limits, 'memory.content');
    validateUnit(row.importance, 'memory.importance');
    validateUnit(row.confidence, 'memory.confidence');
    validateLifecycle(row.lifecycle ?? 'active', 'memory.lifecycle');
    const createdAt = validateTimestamp(row.created_at, 'memory.created_at');
    validateTimestamp(row.updated_at, 'memory.updated_at');
    for (const c of [
      'last_accessed_at',
      'seq_from',
      'seq_to',
      'access_count',
      'embedding_attempts',
      'valid_to',
      'forgotten_at',
    ]) {
      intOrNull(row[c], `memory.${c}`, 0);
    }
    intOrNull(row.revision, 'memory.revision', 1);
    intOrNull(row.valid_from, 'memory.valid_from', 0);
    for (const c of ['session_id', 'user_id']) {
      if (row[c] !== null && row[c] !== undefined) validateAgentId(row[c], `memory.${c}`);
    }
    if (row.superseded_by !== null && row.superseded_by !== undefined)
      validateId(row.superseded_by, 'memory.superseded_by');
    let tags: string[];
    try {
      tags = validateTags(JSON.parse(String(row.tags ?? '[]')), 'memory.tags');
    } catch (err) {
      if (err instanceof EngramStoreError) throw err;
      throw invalidInput('memory.tags is not a JSON list');
    }
    const metadata = jsonObject(row.metadata, 'memory.metadata');
    row.tags = JSON.stringify(tags);
    row.metadata = JSON.stringify(metadata);
    row.content_hash = contentHash(content);
    row.valid_from = row.valid_from ?? createdAt;

    const stored = (
      await ctx.q<MemoryRow>(db, 'read', `SELECT ${MEMORY_COLUMNS} FROM memories WHERE id = $1`, [id])
    )[0];
    if (stored !== undefined) {
      return stored.agent_id === agentId && sameValues(memoryExportRow(stored), row, EMBEDDING_COLUMNS)
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
    const values: Record<string, unknown> = {
      ...row,
      tags,
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
    validateAgentId(row.agent_id, `${record.type}.agent_id`);
    const extra = this.#check(record.type, row);
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

  /** Checks of one record type beyond the table's constraints; returns the derived columns to write. */
  #check(type: PlainTable['type'], row: Record<string, string | number | null>): Record<string, unknown> {
    const limits = this.#ctx.limits;
    switch (type) {
      case 'event': {
        validateAgentId(row.session_id, 'event.session_id');
        validateInteger(row.seq, 'event.seq', 1);
        const content = validateContent(row.content, limits, 'event.content', true);
        validateTimestamp(row.created_at, 'event.created_at');
        if (typeof row.role !== 'string') throw invalidInput('event.role must be a string');
        if (row.user_id != null) validateAgentId(row.user_id, 'event.user_id');
        jsonObject(row.metadata, 'event.metadata');
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

function sameCounts(a: Counts, b: ExportCounts): boolean {
  return (
    a.memories === b.memories && a.events === b.events && a.cursors === b.cursors && a.skills === b.skills
  );
}

/** Imports an export stream (see the module comment); the summary counts what was written. */
export async function importRecords(
  ctx: PgContext,
  records: AsyncIterable<ExportRecord> | Iterable<ExportRecord>,
  options: ImportOptions = {},
): Promise<ImportSummary> {
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
      ctx.tx(async (db) => {
        for (const r of current) await target.apply(db, r);
      }),
    );
    await ctx.noteInserted(current.length);
    options.onProgress?.(read);
  };
  await ctx.op('importRecords', async () => {
    for await (const record of records) {
      read += 1;
      if (typeof record !== 'object' || record === null)
        throw invalidInput('an export record must be an object');
      if (importer === null) {
        importer = new Importer(ctx, checkHeader(record));
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
  });
  const done = importer as Importer | null;
  if (done === null) throw invalidInput('the export is empty');
  await flush();
  if (!ended) throw invalidInput('the export is truncated: it has no end record');
  return {
    imported: { ...done.imported },
    unchanged: { ...done.unchanged },
    conflicts: { ...done.conflicts },
    vectorsImported: done.vectorsImported,
  };
}
