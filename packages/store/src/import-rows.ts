/**
 * The checks of an imported row, one place for every store: a row of an export passes the same rules as the
 * facade's and the tools' writes (ids, agent, user and session ids in normal form, timestamps within
 * JavaScript's `Date` range, metadata a JSON object, tags, vectors finite in float32 with the profile's width),
 * whichever store imports it. Each store keeps only its SQL; what a row may hold is decided here.
 *
 * Agents stay apart: a one-agent export's rows must all name its header's agent, and an import into a chosen
 * agent (`ImportOptions.agentId`) takes a file that holds one agent only.
 */
import { checkTimestamp, contentHash, EMBEDDING_STATES, EVENT_TYPES } from '@engram/contracts';
import { MAX_CONTENT_LENGTH_CAP } from './chunking.js';
import { EngramStoreError, invalidInput } from './errors.js';
import { UNKNOWN_HISTORY_USER } from './history-rules.js';
import type {
  ExportCounts,
  ExportHeader,
  ExportRecord,
  ExportRow,
  ImportOptions,
  ImportSummary,
} from './transfer.js';
import { EXPORT_FORMAT, EXPORT_FORMAT_VERSION } from './transfer.js';
import type { ValidationLimits } from './validate.js';
import {
  MAX_COUNTER,
  memoryMetadataJson,
  stableMetadataJson,
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
} from './validate.js';

/** The record types after the header, before the end record. */
export type ImportBody = Exclude<ExportRecord, ExportHeader | { type: 'end' }>;
/** A mutable tally per record type. */
export type ImportCounts = { -readonly [K in keyof ExportCounts]: number };

/** A zero tally. */
export const zeroCounts = (): ImportCounts => ({
  memories: 0,
  events: 0,
  cursors: 0,
  skills: 0,
  links: 0,
  history: 0,
});

/** The count key of each record type. */
export const COUNT_KEY: Readonly<Record<ImportBody['type'], keyof ExportCounts>> = {
  memory: 'memories',
  event: 'events',
  cursor: 'cursors',
  skill: 'skills',
  link: 'links',
  history: 'history',
};

const EMBEDDING_STATE_SET: ReadonlySet<string> = new Set<string>(EMBEDDING_STATES);
const EVENT_TYPE_SET: ReadonlySet<string> = new Set<string>(EVENT_TYPES);
const LINK_STATES: ReadonlySet<string> = new Set(['open', 'resolved', 'dismissed']);
/** Every history action a store writes (the SQLite schema's CHECK list). */
export const HISTORY_ACTION_LIST: readonly string[] = [
  'updated',
  'superseded',
  'forgotten',
  'conflictLinked',
  'conflictResolved',
];
const HISTORY_ACTIONS: ReadonlySet<string> = new Set(HISTORY_ACTION_LIST);

/** Checks the first record: an Engram export header of a format version this store reads. */
export function checkImportHeader(record: ExportRecord | undefined): ExportHeader {
  if (record === undefined || record.type !== 'header' || record.format !== EXPORT_FORMAT) {
    throw invalidInput('the export does not start with an Engram export header');
  }
  const version: unknown = record.formatVersion;
  if (!Number.isSafeInteger(version) || (version as number) < 1) {
    throw invalidInput('the export header has no valid formatVersion');
  }
  if ((version as number) > EXPORT_FORMAT_VERSION) {
    throw invalidInput(`the export format version ${version} is newer than this store reads`);
  }
  if (!Number.isSafeInteger(record.schemaVersion))
    throw invalidInput('the export header has no valid schemaVersion');
  if (typeof record.vectors !== 'boolean') throw invalidInput('the export header has no valid vectors flag');
  const embedder: unknown = record.embedder;
  if (
    embedder !== null &&
    (typeof embedder !== 'object' ||
      typeof (embedder as { id?: unknown }).id !== 'string' ||
      !Number.isSafeInteger((embedder as { dimensions?: unknown }).dimensions) ||
      ((embedder as { dimensions: number }).dimensions as number) < 1)
  ) {
    throw invalidInput(
      'the export header has no valid embedder (null, or an id and a positive dimension count)',
    );
  }
  if (record.agentId === undefined || (record.agentId !== null && typeof record.agentId !== 'string')) {
    throw invalidInput('the export header has no valid agentId (null, or an agent id)');
  }
  if (record.agentId !== null) validateAgentId(record.agentId, 'header.agentId');
  return record;
}

/** True when every count of the end record is the count read (memories, events, cursors, skills, links, history). */
export function sameImportCounts(seen: ExportCounts, end: ExportCounts): boolean {
  return (
    seen.memories === end.memories &&
    seen.events === end.events &&
    seen.cursors === end.cursors &&
    seen.skills === end.skills &&
    seen.links === end.links &&
    seen.history === end.history
  );
}

/** The error of a stream that ended without its end record (a truncated file): nothing is committed. */
export function truncatedExport(): EngramStoreError {
  return invalidInput('the export is truncated: it has no end record, and nothing was imported');
}

/** The error of an end record whose counts differ from the records read: nothing is committed. */
export function incompleteExport(): EngramStoreError {
  return invalidInput(
    'the export is incomplete: its record counts differ from its end record, and nothing was imported',
  );
}

/**
 * The agent rule of one import: every row's agent is checked against the header's (a one-agent export whose
 * row names another agent is refused), and mapped to the import's target agent when one is given.
 */
export class ImportAgents {
  readonly #header: string | null;
  readonly #target: string | null;
  #first: string | null = null;

  constructor(header: ExportHeader, target: string | undefined) {
    this.#header = header.agentId;
    this.#target = target === undefined ? null : validateAgentId(target, 'agentId');
  }

  /** The agent the import writes into (null: each row's own). */
  get target(): string | null {
    return this.#target;
  }

  /** The agent a row is written under, after the checks. */
  map(value: unknown, field: string): string {
    const agent = validateAgentId(value, field);
    if (this.#header !== null && agent !== this.#header) {
      throw invalidInput(`${field} names another agent than the export's header: nothing was imported`);
    }
    if (this.#target === null) return agent;
    this.#first ??= agent;
    if (agent !== this.#first) {
      throw invalidInput(
        'the export holds more than one agent: an import into one agent takes a one-agent export',
      );
    }
    return this.#target;
  }
}

function timestampOrNull(row: Record<string, unknown>, column: string, field: string): void {
  const v = row[column];
  if (v !== null && v !== undefined) validateTimestamp(v, `${field}.${column}`);
}

function intOrNull(value: unknown, field: string, min: number): void {
  if (value !== null && value !== undefined) validateInteger(value, field, min, MAX_COUNTER);
}

function idOrNull(value: unknown, field: string): void {
  if (value !== null && value !== undefined) validateId(value, field);
}

function textOrNull(value: unknown, field: string, limits: ValidationLimits): void {
  if (value !== null && value !== undefined) validateContent(value, limits, field, true);
}

function parseJson(value: unknown, field: string, what: string): unknown {
  if (typeof value !== 'string') throw invalidInput(`${field} is not ${what}`);
  try {
    return JSON.parse(value);
  } catch {
    throw invalidInput(`${field} is not ${what}`);
  }
}

/** A memory row after the checks: the columns to store (canonical tags and metadata, content hash). */
export interface CheckedMemoryRow {
  readonly id: string;
  readonly agentId: string;
  readonly content: string;
  readonly tags: string[];
  /** The row to write, by column (tags and metadata as canonical JSON text). */
  readonly row: Record<string, string | number | null>;
}

/**
 * Checks one memory row of an export with the facade's rules, and returns it in canonical form: the agent mapped
 * (see {@link ImportAgents}), tags sorted JSON, metadata sorted-key JSON, the content hash recomputed, and
 * `valid_from` defaulting to `created_at`. Only known columns are checked here; the caller refuses columns its
 * schema does not have.
 */
export function checkImportMemoryRow(
  input: ExportRow,
  limits: ValidationLimits,
  agents: ImportAgents,
): CheckedMemoryRow {
  const row: Record<string, string | number | null> = { ...input };
  const id = validateId(row.id, 'memory.id');
  const agentId = agents.map(row.agent_id, 'memory.agent_id');
  row.agent_id = agentId;
  validateKind(row.kind, 'memory.kind');
  const content = validateContent(row.content, limits, 'memory.content');
  validateUnit(row.importance, 'memory.importance');
  validateUnit(row.confidence, 'memory.confidence');
  validateLifecycle(row.lifecycle ?? 'active', 'memory.lifecycle');
  const createdAt = validateTimestamp(row.created_at, 'memory.created_at');
  validateTimestamp(row.updated_at, 'memory.updated_at');
  for (const c of ['last_accessed_at', 'valid_from', 'valid_to', 'forgotten_at']) {
    timestampOrNull(row, c, 'memory');
  }
  intOrNull(row.seq_from, 'memory.seq_from', 0);
  intOrNull(row.seq_to, 'memory.seq_to', 0);
  intOrNull(row.access_count, 'memory.access_count', 0);
  intOrNull(row.revision, 'memory.revision', 1);
  intOrNull(row.embedding_attempts, 'memory.embedding_attempts', 0);
  for (const c of ['session_id', 'user_id']) {
    if (row[c] !== null && row[c] !== undefined) validateAgentId(row[c], `memory.${c}`);
  }
  idOrNull(row.superseded_by, 'memory.superseded_by');
  const state = row.embedding_state;
  if (state !== undefined && (typeof state !== 'string' || !EMBEDDING_STATE_SET.has(state))) {
    throw invalidInput('memory.embedding_state is not an embedding state');
  }
  const fingerprint = row.embedding_fingerprint;
  if (fingerprint !== undefined && fingerprint !== null && typeof fingerprint !== 'string') {
    throw invalidInput('memory.embedding_fingerprint must be a string');
  }
  const tags = validateTags(parseJson(row.tags ?? '[]', 'memory.tags', 'a JSON list'), 'memory.tags');
  row.tags = JSON.stringify(tags);
  if ('metadata' in row || row.metadata !== undefined) {
    const meta = parseJson(row.metadata ?? '{}', 'memory.metadata', 'a JSON object');
    row.metadata = memoryMetadataJson(meta, 'memory.metadata');
  }
  row.content_hash = contentHash(content);
  if ('valid_from' in row && (row.valid_from === null || row.valid_from === undefined)) {
    row.valid_from = createdAt;
  }
  return { id, agentId, content, tags, row };
}

/**
 * Checks one row of a table other than `memories` (event, cursor, skill, link, history) with the facade's rules,
 * the agent mapped; returns the row to write (event metadata as sorted-key JSON).
 */
export function checkImportPlainRow(
  type: Exclude<ImportBody['type'], 'memory'>,
  input: ExportRow,
  limits: ValidationLimits,
  agents: ImportAgents,
): Record<string, string | number | null> {
  const row: Record<string, string | number | null> = { ...input };
  row.agent_id = agents.map(row.agent_id, `${type}.agent_id`);
  switch (type) {
    case 'event': {
      validateAgentId(row.session_id, 'event.session_id');
      validateInteger(row.seq, 'event.seq', 1, MAX_COUNTER);
      if (row.type !== undefined && (typeof row.type !== 'string' || !EVENT_TYPE_SET.has(row.type)))
        throw invalidInput('event.type is not an event type');
      validateContent(row.content, limits, 'event.content', true);
      validateTimestamp(row.created_at, 'event.created_at');
      if (typeof row.role !== 'string') throw invalidInput('event.role must be a string');
      if (row.user_id !== undefined && row.user_id !== null) validateAgentId(row.user_id, 'event.user_id');
      textOrNull(row.tool_name, 'event.tool_name', limits);
      const meta = parseJson(row.metadata ?? '{}', 'event.metadata', 'a JSON object');
      row.metadata = stableMetadataJson(meta, limits, 'event.metadata');
      return row;
    }
    case 'cursor':
      validateAgentId(row.session_id, 'cursor.session_id');
      validateInteger(row.cursor, 'cursor.cursor', 0, MAX_COUNTER);
      validateTimestamp(row.updated_at, 'cursor.updated_at');
      return row;
    case 'skill':
      validateSkillName(row.name);
      validateContent(row.content, limits, 'skill.content');
      if (typeof row.description !== 'string') throw invalidInput('skill.description must be a string');
      validateContent(row.description, limits, 'skill.description', true);
      validateTimestamp(row.created_at, 'skill.created_at');
      validateTimestamp(row.updated_at, 'skill.updated_at');
      return row;
    case 'link':
      validateId(row.older_id, 'link.older_id');
      validateId(row.newer_id, 'link.newer_id');
      if (row.state !== undefined && (typeof row.state !== 'string' || !LINK_STATES.has(row.state)))
        throw invalidInput('link.state is not a link state');
      textOrNull(row.reason, 'link.reason', limits);
      validateTimestamp(row.created_at, 'link.created_at');
      timestampOrNull(row, 'resolved_at', 'link');
      return row;
    case 'history':
      validateId(row.memory_id, 'history.memory_id');
      if (typeof row.action !== 'string' || !HISTORY_ACTIONS.has(row.action))
        throw invalidInput('history.action is not a history action');
      validateTimestamp(row.at, 'history.at');
      intOrNull(row.revision, 'history.revision', 1);
      idOrNull(row.related_id, 'history.related_id');
      textOrNull(row.actor, 'history.actor', limits);
      textOrNull(row.reason, 'history.reason', limits);
      textOrNull(row.content, 'history.content', limits);
      // The memory's user: a user id, null (the agent's own), or '' or absent (an export from before the
      // column, or a row whose user was never known: `historyRules.UNKNOWN_HISTORY_USER`).
      if (row.user_id !== undefined && row.user_id !== null && row.user_id !== UNKNOWN_HISTORY_USER)
        validateAgentId(row.user_id, 'history.user_id');
      return row;
  }
}

/** One exported vector (base64 of float32 bytes) as a checked vector of the profile's width. */
export function decodeImportVector(b64: string, dimensions: number): Float32Array {
  let binary: string;
  try {
    binary = atob(b64);
  } catch {
    throw invalidInput('an exported vector is not base64');
  }
  if (binary.length !== dimensions * 4) throw invalidInput('an exported vector has the wrong length');
  const copy = new Float32Array(dimensions);
  const bytes = new Uint8Array(copy.buffer);
  for (let i = 0; i < binary.length; i += 1) bytes[i] = binary.charCodeAt(i);
  return validateVector(copy, dimensions, 'vector');
}

/** The checked `restartClocksAt` of import options (a timestamp a `Date` holds), or undefined. */
export function restartClocksAt(options: { readonly restartClocksAt?: unknown }): number | undefined {
  const at = options.restartClocksAt;
  if (at === undefined) return undefined;
  if (checkTimestamp(at) !== null)
    throw invalidInput('restartClocksAt must be a timestamp in epoch milliseconds');
  return at as number;
}

/** What the caller's record stream threw while an import read it: the import rethrows it unchanged. */
class StreamFailure {
  constructor(readonly error: unknown) {}
}

/**
 * The records of an import's source, read one by one. An error the source itself throws (a reader that refuses
 * an over-long line, a parse error, an aborted stream) is the caller's, not the store's: the adapter rolls back
 * and rethrows it as it was thrown (see {@link streamError}), instead of reporting an unknown store failure.
 */
export async function* sourceRecords(
  records: AsyncIterable<ExportRecord> | Iterable<ExportRecord>,
): AsyncGenerator<ExportRecord> {
  const iterator =
    Symbol.asyncIterator in records
      ? (records as AsyncIterable<ExportRecord>)[Symbol.asyncIterator]()
      : (records as Iterable<ExportRecord>)[Symbol.iterator]();
  for (;;) {
    let step: IteratorResult<ExportRecord>;
    try {
      step = await iterator.next();
    } catch (error) {
      throw new StreamFailure(error);
    }
    if (step.done === true) return;
    yield step.value;
  }
}

/** The source's own error when `error` (or the store error wrapping it) came from {@link sourceRecords}. */
export function streamError(error: unknown): { readonly error: unknown } | null {
  if (error instanceof StreamFailure) return { error: error.error };
  const cause =
    typeof error === 'object' && error !== null ? (error as { cause?: unknown }).cause : undefined;
  return cause instanceof StreamFailure ? { error: cause.error } : null;
}

/** What an adapter's importer keeps while an import stream is read (see {@link readImportStream}). */
export interface StreamImporter {
  /** Records of each type the stream held so far (compared with the end record's counts). */
  readonly seen: ImportCounts;
}

/** The adapter's part of reading an import stream: everything but the order of the records. */
export interface ImportStreamSteps<I extends StreamImporter> {
  /** The header was read: check it and start the importer (and the adapter's transaction). */
  start(header: ExportRecord): I | Promise<I>;
  /** One record of the body. */
  apply(importer: I, record: ImportBody): void | Promise<void>;
  /** True once the store was closed: the import stops with `ENGRAM_STORE_CLOSED`. */
  closed(): boolean;
  /** Every `every` records (progress, and any batched write the adapter keeps). */
  step?(read: number): void;
  readonly every: number;
}

/**
 * Reads an import stream in the order the format gives it, the same for every adapter: a header first, then
 * the body, then the end record, whose counts must equal what was read (else `incompleteExport`); no record
 * after the end, no second header; a stream without an end record is truncated (`truncatedExport`). The
 * caller's own stream errors pass through {@link sourceRecords}. Resolves the importer and the records read.
 */
export async function readImportStream<I extends StreamImporter>(
  records: AsyncIterable<ExportRecord> | Iterable<ExportRecord>,
  steps: ImportStreamSteps<I>,
): Promise<{ readonly importer: I; readonly read: number }> {
  let importer: I | null = null;
  let read = 0;
  let ended = false;
  for await (const record of sourceRecords(records)) {
    read += 1;
    if (typeof record !== 'object' || record === null)
      throw invalidInput('an export record must be an object');
    if (importer === null) {
      importer = await steps.start(record);
      continue;
    }
    if (steps.closed()) {
      throw new EngramStoreError('ENGRAM_STORE_CLOSED', 'store import failed: the store is closed');
    }
    if (ended) throw invalidInput('the export has records after its end record');
    if (record.type === 'header') throw invalidInput('the export has a second header');
    if (record.type === 'end') {
      if (!sameImportCounts(importer.seen, record.counts)) throw incompleteExport();
      ended = true;
      continue;
    }
    await steps.apply(importer, record);
    if (read % steps.every === 0) steps.step?.(read);
  }
  if (importer === null) throw invalidInput('the export is empty');
  if (!ended) throw truncatedExport();
  return { importer, read };
}

/** Columns an import recomputes, so a stored memory that differs only there is unchanged. */
const RECOMPUTED_COLUMNS: ReadonlySet<string> = new Set([
  'embedding_state',
  'embedding_fingerprint',
  'embedding_attempts',
]);
/** The same, and the decay clock an import restarts (`restartClocksAt`). */
const RECOMPUTED_AND_CLOCK: ReadonlySet<string> = new Set([...RECOMPUTED_COLUMNS, 'updated_at']);

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

function sameMetadataText(have: string, value: string): boolean {
  try {
    return canonicalJson(JSON.parse(have)) === canonicalJson(JSON.parse(value));
  } catch {
    return have === value;
  }
}

/**
 * Whether a stored row holds the values of an imported one, column by column (`ignore` left out): a driver's
 * bigint or numeric text equals the number, and metadata compares as JSON (key order aside).
 */
export function sameImportValues(
  stored: Readonly<Record<string, unknown>>,
  row: ExportRow,
  ignore: ReadonlySet<string> = new Set(),
): boolean {
  for (const [key, value] of Object.entries(row)) {
    if (ignore.has(key)) continue;
    const have = stored[key];
    if (key === 'metadata' && typeof have === 'string' && typeof value === 'string') {
      if (!sameMetadataText(have, value)) return false;
      continue;
    }
    const comparable =
      typeof have === 'bigint' || (typeof have === 'string' && typeof value === 'number')
        ? Number(have)
        : have;
    if (comparable !== value) return false;
  }
  return true;
}

/**
 * What every adapter's importer counts and decides besides its own statements: the records read and their
 * outcome, the agent rule, the restarted decay clock, whether the header's vectors fit this store's embedder,
 * and the summary.
 */
export class ImportTally {
  readonly imported: ImportCounts = zeroCounts();
  readonly unchanged: ImportCounts = zeroCounts();
  readonly conflicts: ImportCounts = zeroCounts();
  readonly seen: ImportCounts = zeroCounts();
  vectorsImported = 0;
  readonly agents: ImportAgents;
  readonly #restartAt: number | undefined;
  /** The store's vector width when the header's vectors were made by the store's embedder, else null. */
  readonly #dimensions: number | null;

  constructor(
    header: ExportHeader,
    profile: { readonly id: string; readonly dimensions: number } | null,
    options: ImportOptions,
  ) {
    this.agents = new ImportAgents(header, options.agentId);
    this.#restartAt = restartClocksAt(options);
    this.#dimensions =
      header.vectors &&
      header.embedder !== null &&
      profile !== null &&
      header.embedder.id === profile.id &&
      header.embedder.dimensions === profile.dimensions
        ? profile.dimensions
        : null;
  }

  /** Counts one record of `type` read with its `outcome`. */
  count(type: ImportBody['type'], outcome: 'imported' | 'unchanged' | 'conflicts'): void {
    this.seen[COUNT_KEY[type]] += 1;
    this[outcome][COUNT_KEY[type]] += 1;
  }

  /**
   * Restarts the memory row's decay clock when the import asks for it, and answers the columns a comparison
   * with a stored memory leaves out.
   */
  restartClock(row: Record<string, string | number | null>): ReadonlySet<string> {
    if (this.#restartAt === undefined) return RECOMPUTED_COLUMNS;
    row.updated_at = this.#restartAt;
    return RECOMPUTED_AND_CLOCK;
  }

  /**
   * The vectors to store with a new memory of `chunks` chunks, one per chunk (null: none for that chunk), when
   * the export carries them for this store's embedder; otherwise null, and the row is marked for the drain to
   * embed again (`pending`, no fingerprint).
   */
  takeVectors(
    row: Record<string, string | number | null>,
    vectors: readonly (string | null)[] | undefined,
    chunks: number,
  ): (Float32Array | null)[] | null {
    const dimensions = this.#dimensions;
    const decoded =
      dimensions !== null &&
      row.embedding_state === 'ready' &&
      vectors !== undefined &&
      vectors.length === chunks &&
      vectors.some((v) => v !== null)
        ? vectors.map((v) => (v === null ? null : decodeImportVector(v, dimensions)))
        : null;
    if (decoded === null) {
      if (row.embedding_state === 'ready' || row.embedding_state === undefined) {
        row.embedding_state = 'pending';
        row.embedding_attempts = 0;
      }
      row.embedding_fingerprint = null;
    }
    return decoded;
  }

  /** What the import did. */
  summary(): ImportSummary {
    return {
      imported: { ...this.imported },
      unchanged: { ...this.unchanged },
      conflicts: { ...this.conflicts },
      vectorsImported: this.vectorsImported,
      ...(this.agents.target === null ? {} : { agentId: this.agents.target }),
    };
  }
}

/** The widest limits a store can be opened with: the store an import writes into applies its own. */
const ANY_STORE_LIMITS: ValidationLimits = { maxContentLength: MAX_CONTENT_LENGTH_CAP };

/**
 * Agents as an export that names none maps them: each row keeps its own. Without a target it keeps no state,
 * so one serves every check.
 */
const ANY_AGENT = new ImportAgents(
  {
    type: 'header',
    format: EXPORT_FORMAT,
    formatVersion: EXPORT_FORMAT_VERSION,
    schemaVersion: 0,
    embedder: null,
    agentId: null,
    vectors: false,
  },
  undefined,
);

/**
 * Whether an import would take this stored row (a memory, or a row of another table): the checks an import
 * makes (under the widest content cap), run by the export, which leaves out a row that fails them (a row damaged by another tool or by hand)
 * and counts it as `skipped` in its end record, so that one damaged row never makes the rest of a backup
 * impossible to restore. Any other error is rethrown.
 */
export function restorableRow(type: ImportBody['type'], row: ExportRow): boolean {
  try {
    if (type === 'memory') checkImportMemoryRow(row, ANY_STORE_LIMITS, ANY_AGENT);
    else checkImportPlainRow(type, row, ANY_STORE_LIMITS, ANY_AGENT);
    return true;
  } catch (err) {
    if (err instanceof EngramStoreError && err.code === 'ENGRAM_STORE_INVALID_INPUT') return false;
    throw err;
  }
}
