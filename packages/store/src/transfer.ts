/**
 * The export format: a stream of records, one JSON object per line (JSON Lines). A header names the format,
 * its version, the schema version of the file it came from and its embedder profile; then memories, events,
 * session cursors and skills, each a stored row keyed by its column names; then an end record with the
 * counts, so a truncated stream is detected. Derived rows (tag rows, chunks, full-text and BM25 indexes) are
 * never exported: an import recomputes them. Vectors travel only when asked, base64 of their float32 bytes.
 *
 * Rows are column-generic: every stored column of a memory except the derived ones is carried, so a column
 * added by a later schema is exported and imported without a change here.
 */
import { z } from 'zod';
import { invalidInput } from './errors.js';
import type { EmbeddingProfile } from './types.js';

/** The format name in every header. */
export const EXPORT_FORMAT = 'engram-export';
/** The format version this store writes and reads. */
export const EXPORT_FORMAT_VERSION = 1;

/** One stored row, by column name (values are JSON: strings, numbers, null). */
export type ExportRow = Readonly<Record<string, string | number | null>>;

/** The first record of an export. */
export interface ExportHeader {
  readonly type: 'header';
  readonly format: typeof EXPORT_FORMAT;
  readonly formatVersion: number;
  /** The schema version of the file exported. */
  readonly schemaVersion: number;
  /** The embedder profile of the file exported (null: none). */
  readonly embedder: EmbeddingProfile | null;
  /** The one agent exported, or null for every agent. */
  readonly agentId: string | null;
  /** True when memory records carry their vectors. */
  readonly vectors: boolean;
}

/** The counts an export ends with. */
export interface ExportCounts {
  readonly memories: number;
  readonly events: number;
  readonly cursors: number;
  readonly skills: number;
  /** Links between memories (a conflict between two facts). */
  readonly links: number;
  /** History entries of memories (updates, supersessions, tombstones). */
  readonly history: number;
}

/** One record of an export stream. */
export type ExportRecord =
  | ExportHeader
  | {
      readonly type: 'memory';
      readonly row: ExportRow;
      /** With vectors: one entry per chunk (one for a short memory), base64 float32, null for no vector. */
      readonly vectors?: readonly (string | null)[];
    }
  | { readonly type: 'event'; readonly row: ExportRow }
  | { readonly type: 'cursor'; readonly row: ExportRow }
  | { readonly type: 'skill'; readonly row: ExportRow }
  | { readonly type: 'link'; readonly row: ExportRow }
  | { readonly type: 'history'; readonly row: ExportRow }
  | {
      readonly type: 'end';
      readonly counts: ExportCounts;
      /**
       * Stored rows left out because an import would refuse them (a row damaged by another tool or by hand; the
       * store's integrity check names the file damaged). Absent when none was.
       */
      readonly skipped?: number;
    };

/** Options of an export. */
export interface ExportOptions {
  /** One agent only (default: every agent). */
  readonly agentId?: string;
  /** Carry each memory's vectors with the embedder profile (default false: rows import as `pending`). */
  readonly vectors?: boolean;
}

/** Options of an import. */
export interface ImportOptions {
  /** Called every few hundred records with the records read so far (nothing is committed before the end). */
  readonly onProgress?: (records: number) => void;
  /**
   * Import the file's rows into this agent (a one-agent export, or a file whose rows all name one agent);
   * default: each row into its own agent.
   */
  readonly agentId?: string;
  /**
   * Start each imported memory's decay clock (`updated_at`) at this time (epoch ms) instead of the exported
   * one, so a restored backup is not aged out by the next maintenance pass. A memory the store already holds is
   * compared without its clock (a re-import stays unchanged) and keeps its own. Default: the exported ages.
   */
  readonly restartClocksAt?: number;
}

/** What an import did, per record type. */
export interface ImportSummary {
  /** Records written. */
  readonly imported: ExportCounts;
  /** Records already present and identical (an import run twice writes nothing the second time). */
  readonly unchanged: ExportCounts;
  /** Records whose key is present with other values: left as stored, never overwritten. */
  readonly conflicts: ExportCounts;
  /** Memories imported with their vectors (`ready`); the others wait for the drain. */
  readonly vectorsImported: number;
  /** The agent every row was imported into, when the import named one (`ImportOptions.agentId`). */
  readonly agentId?: string;
}

/** The schema of one export line, built on its first use (an import), not when the store loads. */
let recordSchema: ReturnType<typeof buildRecordSchema> | undefined;

function buildRecordSchema() {
  const cell = z.union([z.string(), z.number(), z.null()]);
  const row = z.record(z.string().regex(/^[a-z][a-z0-9_]{0,63}$/), cell);
  const counts = z
    .object({
      memories: z.number().int().min(0),
      events: z.number().int().min(0),
      cursors: z.number().int().min(0),
      skills: z.number().int().min(0),
      links: z.number().int().min(0),
      history: z.number().int().min(0),
    })
    .strict();
  return z.discriminatedUnion('type', [
    z
      .object({
        type: z.literal('header'),
        format: z.literal(EXPORT_FORMAT),
        formatVersion: z.number().int().min(1),
        schemaVersion: z.number().int().min(0),
        embedder: z
          .object({ id: z.string().min(1).max(200), dimensions: z.number().int().min(1).max(65_536) })
          .strict()
          .nullable(),
        agentId: z.string().nullable(),
        vectors: z.boolean(),
      })
      .strict(),
    z
      .object({
        type: z.literal('memory'),
        row,
        vectors: z.array(z.string().max(2_000_000).nullable()).max(10_000).optional(),
      })
      .strict(),
    z.object({ type: z.literal('event'), row }).strict(),
    z.object({ type: z.literal('cursor'), row }).strict(),
    z.object({ type: z.literal('skill'), row }).strict(),
    z.object({ type: z.literal('link'), row }).strict(),
    z.object({ type: z.literal('history'), row }).strict(),
    z.object({ type: z.literal('end'), counts, skipped: z.number().int().min(0).optional() }).strict(),
  ]);
}

const RECORD_FIELDS: ReadonlySet<string> = new Set([
  'type',
  'format',
  'formatVersion',
  'schemaVersion',
  'embedder',
  'agentId',
  'vectors',
  'row',
  'counts',
  'skipped',
]);

/**
 * Parses one line of an export (`lineNumber` names it in the error). A malformed line is
 * `ENGRAM_STORE_INVALID_INPUT` without its text.
 */
export function parseExportLine(line: string, lineNumber: number): ExportRecord {
  let raw: unknown;
  try {
    raw = JSON.parse(line);
  } catch {
    throw invalidInput(`line ${lineNumber} of the export is not JSON`);
  }
  recordSchema ??= buildRecordSchema();
  const parsed = recordSchema.safeParse(raw);
  if (!parsed.success) {
    // Only a field name of the format itself is named (never a key or a value read from the line).
    const first = parsed.error.issues[0]?.path[0];
    const field = typeof first === 'string' && RECORD_FIELDS.has(first) ? first : 'the record';
    throw invalidInput(`line ${lineNumber} of the export is not a valid record (at ${field})`);
  }
  return parsed.data as ExportRecord;
}

/** One record as its export line (no trailing newline). */
export function formatExportLine(record: ExportRecord): string {
  return JSON.stringify(record);
}

/** The header an adapter's export starts with: the format, the store's schema and embedder, the agent, vectors. */
export function exportHeader(store: {
  readonly schemaVersion: number;
  readonly profile: { readonly id: string; readonly dimensions: number } | null;
  readonly agentId: string | null;
  readonly vectors: boolean;
}): ExportHeader {
  return {
    type: 'header',
    format: EXPORT_FORMAT,
    formatVersion: EXPORT_FORMAT_VERSION,
    schemaVersion: store.schemaVersion,
    embedder: store.profile === null ? null : { id: store.profile.id, dimensions: store.profile.dimensions },
    agentId: store.agentId,
    vectors: store.vectors,
  };
}
