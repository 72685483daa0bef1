/**
 * Row mapping of the PostgreSQL store: the stored shapes of `memories`, `events` and `skills` and their
 * records. `bigint` columns arrive from `pg` as strings; every value the store writes fits a double exactly.
 */

import type { MemoryBrief, MemoryKind, MemoryRecord } from '@engram/store';
import { storedMetadata, storedRows, storedTags, storedTimestamp } from '@engram/store/port-kit';

/** A row of `memories` as `pg` returns it. */
export type MemoryRow = storedRows.MemoryColumns<string | number, string[], boolean, Record<string, unknown>>;

/** The columns of a memory record (never the whole row: leases and derived text stay inside). */
export const MEMORY_COLUMNS =
  'rid, id, agent_id, kind, content, content_hash, importance, confidence, tags, session_id, seq_from, seq_to, created_at, updated_at, last_accessed_at, access_count, revision, lifecycle, superseded_by, embedding_state, embedding_fingerprint, embedding_attempts, has_cjk, like_text, chunk_count, user_id, metadata, valid_from, valid_to, forgotten_at';

/** A nullable bigint column as a number. */
export function num(value: string | number | null): number | null {
  return value === null ? null : Number(value);
}

/** The record of a memory row. */
export function toRecord(row: MemoryRow): MemoryRecord {
  // A malformed stored value reads as invalid, never throws (see `stored-values.ts`); the integrity check
  // reports the row.
  return storedRows.toMemoryRecord(row, storedTags(row.tags), storedMetadata(row.metadata));
}

/** The columns of a {@link MemoryBrief} (see {@link toBrief}). */
export const BRIEF_COLUMNS =
  'id, kind, revision, importance, tags, created_at, updated_at, session_id, seq_from, seq_to, valid_from';

/** The brief of a memory row read with {@link BRIEF_COLUMNS}: the fields {@link toRecord} gives them. */
export function toBrief(
  row: Pick<
    MemoryRow,
    | 'id'
    | 'kind'
    | 'revision'
    | 'importance'
    | 'tags'
    | 'created_at'
    | 'updated_at'
    | 'session_id'
    | 'seq_from'
    | 'seq_to'
    | 'valid_from'
  >,
): MemoryBrief {
  return {
    id: row.id,
    kind: row.kind as MemoryKind,
    revision: Number(row.revision),
    importance: Number(row.importance),
    tags: storedTags(row.tags),
    createdAt: storedTimestamp(row.created_at),
    updatedAt: storedTimestamp(row.updated_at),
    sessionId: row.session_id,
    seqFrom: num(row.seq_from),
    seqTo: num(row.seq_to),
    validFrom: storedTimestamp(row.valid_from),
  };
}

/** pgvector's text form of a vector (every float32 prints exactly as a double). */
export function vectorLiteral(vector: Float32Array): string {
  return `[${Array.from(vector).join(',')}]`;
}
