/**
 * Process beats of the store port: each process that opens a store for writing publishes its content-free
 * diagnostics snapshot into a small table, keyed by a random process id, so a health page served by any
 * process (a read-only `engram serve` included) shows every live process's runtime figures.
 *
 * What a beat may hold is checked on the way in and again on the way out: a snapshot is JSON of plain objects
 * whose keys are short identifiers (`[A-Za-z][A-Za-z0-9_]*`) and whose values are finite numbers, booleans or
 * null — no strings, no arrays — so no memory text, query, SQL, path or connection string can be stored. A
 * reader never throws on a row it reads: a malformed, oversized or expired row is skipped (and counted).
 */
import { MAX_TIMESTAMP_MS } from '@engram/contracts';
import { invalidInput } from './errors.js';

/** Largest serialized snapshot a beat stores, in UTF-8 bytes (64 KiB). */
export const MAX_PROCESS_SNAPSHOT_BYTES: number = 64 * 1024;
/** Most live beats a listing returns (the oldest processes first); more are counted as skipped. */
export const MAX_PROCESS_BEATS_LISTED = 64;
/** Deepest nesting of a snapshot's objects. */
export const MAX_PROCESS_SNAPSHOT_DEPTH = 8;
/** Longest time-to-live a beat may ask for (one hour). */
export const MAX_PROCESS_BEAT_TTL_MS: number = 60 * 60 * 1000;
/** A process id: 32 lowercase hex digits (random, never a pid or a host name). */
export const PROCESS_ID_PATTERN: RegExp = /^[0-9a-f]{32}$/;

const encoder = new TextEncoder();

function utf8Length(text: string): number {
  return encoder.encode(text).byteLength;
}

const KEY = /^[A-Za-z][A-Za-z0-9_]{0,63}$/;

/** A content-free JSON value: a finite number, a boolean, null, or an object of such values. */
export type ContentFreeValue = number | boolean | null | ContentFreeObject;
/** A content-free JSON object (see {@link ContentFreeValue}). */
export interface ContentFreeObject {
  readonly [key: string]: ContentFreeValue;
}

/** What {@link ProcessBeatSlice.publishProcessBeat} takes. */
export interface ProcessBeatInput {
  /** The publishing process's random id ({@link PROCESS_ID_PATTERN}). */
  readonly processId: string;
  /** When the process started, epoch ms. */
  readonly startedAt: number;
  /** How long after this beat the row counts as live, in ms (1 ms to one hour). */
  readonly ttlMs: number;
  /** The diagnostics snapshot: content-free JSON, at most {@link MAX_PROCESS_SNAPSHOT_BYTES} serialized. */
  readonly snapshot: ContentFreeObject;
}

/** One live process as read back. */
export interface ProcessBeat {
  readonly processId: string;
  readonly startedAt: number;
  /** When the row was last written, epoch ms (the store's clock). */
  readonly beatAt: number;
  readonly ttlMs: number;
  readonly snapshot: ContentFreeObject;
}

/** The live beats (oldest process first) and how many rows were skipped as malformed or over the cap. */
export interface ProcessBeatList {
  readonly beats: readonly ProcessBeat[];
  readonly skipped: number;
}

/**
 * Process beats. Optional: a store without them has no cross-process figures (the health page then shows the
 * serving process only).
 */
export interface ProcessBeatSlice {
  /**
   * Writes (inserts or replaces) this process's row, stamped with the store's clock, and deletes every row whose
   * last beat is older than its own time-to-live. Refused on a read-only store (`ENGRAM_STORE_READ_ONLY`).
   */
  publishProcessBeat?(beat: ProcessBeatInput): Promise<{ readonly expired: number }>;
  /** Deletes this process's row (a clean close); a no-op when there is none. */
  removeProcessBeat?(processId: string): Promise<void>;
  /**
   * The live rows (last beat within their time-to-live), read-only. Malformed rows are skipped and counted,
   * never thrown; a store whose schema predates the table answers an empty list.
   */
  listProcessBeats?(): Promise<ProcessBeatList>;
}

/** The problem of a content-free value, or null when it is one. */
function contentFreeProblem(value: unknown, depth: number): string | null {
  if (value === null || typeof value === 'boolean') return null;
  if (typeof value === 'number') return Number.isFinite(value) ? null : 'a non-finite number';
  if (typeof value !== 'object' || Array.isArray(value))
    return 'a value other than a number, boolean or null';
  if (depth >= MAX_PROCESS_SNAPSHOT_DEPTH) return 'nesting too deep';
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return 'an object other than a plain one';
  for (const [key, inner] of Object.entries(value)) {
    if (!KEY.test(key)) return 'a key other than a short identifier';
    const problem = contentFreeProblem(inner, depth + 1);
    if (problem !== null) return problem;
  }
  return null;
}

/** True when `value` is a content-free JSON object (see {@link ContentFreeValue}). */
export function isContentFreeObject(value: unknown): value is ContentFreeObject {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    contentFreeProblem(value, 0) === null
  );
}

function isTimestamp(value: unknown): value is number {
  return Number.isSafeInteger(value) && (value as number) >= 0 && (value as number) <= MAX_TIMESTAMP_MS;
}

function isTtl(value: unknown): value is number {
  return (
    Number.isSafeInteger(value) && (value as number) >= 1 && (value as number) <= MAX_PROCESS_BEAT_TTL_MS
  );
}

/** Checks a process id; throws `ENGRAM_STORE_INVALID_INPUT` (naming the field, never the value). */
export function validateProcessId(value: unknown): string {
  if (typeof value !== 'string' || !PROCESS_ID_PATTERN.test(value)) {
    throw invalidInput('processId must be 32 lowercase hex digits');
  }
  return value;
}

/** A validated beat and its serialized snapshot, ready to store. */
export interface ValidatedProcessBeat {
  readonly processId: string;
  readonly startedAt: number;
  readonly ttlMs: number;
  readonly snapshotJson: string;
}

/**
 * Checks a beat to publish: the id, the start time, the time-to-live, and the snapshot (content-free, at most
 * {@link MAX_PROCESS_SNAPSHOT_BYTES} serialized). Throws `ENGRAM_STORE_INVALID_INPUT`, naming the field only.
 */
export function validateProcessBeat(input: unknown): ValidatedProcessBeat {
  if (typeof input !== 'object' || input === null) throw invalidInput('beat must be an object');
  const beat = input as Partial<ProcessBeatInput>;
  const processId = validateProcessId(beat.processId);
  if (!isTimestamp(beat.startedAt)) throw invalidInput('startedAt must be an epoch-ms timestamp');
  if (!isTtl(beat.ttlMs)) throw invalidInput('ttlMs must be an integer from 1 ms to one hour');
  const snapshot: unknown = beat.snapshot;
  if (typeof snapshot !== 'object' || snapshot === null || Array.isArray(snapshot)) {
    throw invalidInput('snapshot must be an object');
  }
  const problem = contentFreeProblem(snapshot, 0);
  if (problem !== null) throw invalidInput(`snapshot holds ${problem}`);
  const snapshotJson = JSON.stringify(snapshot);
  if (utf8Length(snapshotJson) > MAX_PROCESS_SNAPSHOT_BYTES) {
    throw invalidInput(`snapshot is over ${MAX_PROCESS_SNAPSHOT_BYTES} bytes serialized`);
  }
  return { processId, startedAt: beat.startedAt, ttlMs: beat.ttlMs, snapshotJson };
}

/** A stored beat row as an adapter reads it (column values as the driver returns them). */
export interface StoredProcessBeatRow {
  readonly process_id: unknown;
  readonly started_at: unknown;
  readonly beat_at: unknown;
  readonly ttl_ms: unknown;
  readonly snapshot: unknown;
}

function asInteger(value: unknown): number | null {
  if (typeof value === 'bigint') {
    return value >= 0n && value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : null;
  }
  if (typeof value === 'string' && /^\d{1,16}$/.test(value)) return Number(value);
  return typeof value === 'number' ? value : null;
}

/**
 * A stored row as a {@link ProcessBeat}, or null when anything in it is malformed: a bad id, a bad time, an
 * oversized or non-JSON snapshot, or one that is not content-free. Never throws.
 */
export function readProcessBeatRow(row: StoredProcessBeatRow): ProcessBeat | null {
  try {
    const { process_id: processId, snapshot: raw } = row;
    const startedAt = asInteger(row.started_at);
    const beatAt = asInteger(row.beat_at);
    const ttlMs = asInteger(row.ttl_ms);
    if (typeof processId !== 'string' || !PROCESS_ID_PATTERN.test(processId)) return null;
    if (!isTimestamp(startedAt) || !isTimestamp(beatAt) || !isTtl(ttlMs)) return null;
    let snapshot: unknown = raw;
    if (typeof raw === 'string') {
      if (raw.length > MAX_PROCESS_SNAPSHOT_BYTES) return null;
      snapshot = JSON.parse(raw);
    } else if (typeof raw === 'object' && raw !== null) {
      // A JSONB column arrives parsed: bound it by its serialized size all the same.
      if (utf8Length(JSON.stringify(raw)) > MAX_PROCESS_SNAPSHOT_BYTES) return null;
    } else {
      return null;
    }
    if (!isContentFreeObject(snapshot)) return null;
    return { processId, startedAt, beatAt, ttlMs, snapshot };
  } catch {
    return null;
  }
}

/**
 * The live beats of `rows` at `now`: malformed rows and rows past `MAX_PROCESS_BEATS_LISTED` are skipped and
 * counted; expired ones (last beat older than their time-to-live) are left out silently. Oldest process first.
 */
export function liveProcessBeats(rows: readonly StoredProcessBeatRow[], now: number): ProcessBeatList {
  const beats: ProcessBeat[] = [];
  let skipped = 0;
  for (const row of rows) {
    const beat = readProcessBeatRow(row);
    if (beat === null) {
      skipped += 1;
      continue;
    }
    if (beat.beatAt + beat.ttlMs < now) continue;
    beats.push(beat);
  }
  beats.sort((a, b) => a.startedAt - b.startedAt || (a.processId < b.processId ? -1 : 1));
  if (beats.length > MAX_PROCESS_BEATS_LISTED) {
    skipped += beats.length - MAX_PROCESS_BEATS_LISTED;
    beats.length = MAX_PROCESS_BEATS_LISTED;
  }
  return { beats, skipped };
}
