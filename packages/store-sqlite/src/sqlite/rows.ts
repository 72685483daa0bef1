/**
 * Row mapping: the stored row shapes of `memories`, `events` and `skills`, and their records.
 */

import type {
  EmbeddingState,
  Lifecycle,
  MemoryBrief,
  MemoryKind,
  MemoryRecord,
} from '@engram/store/port-kit';
import {
  storedMetadata,
  storedRows,
  storedTags,
  storedText,
  storedTimestamp,
  storedTimestampOrNull,
} from '@engram/store/port-kit';

/** A row of `memories`. */
export type MemoryRow = storedRows.MemoryColumns<number, string, number, string>;

/** A stored tag list; malformed reads as none (the integrity check reports the row). */
const parseTags = storedTags;

/** Stored metadata; anything but a JSON object reads as `{}` (the integrity check reports the row). */
const parseMetadata = storedMetadata;

/** The record of a memory row; a malformed stored value reads as invalid, never throws (see `stored-values.ts`). */
export function toRecord(row: MemoryRow): MemoryRecord {
  // A malformed stored value reads as invalid, never throws (see `stored-values.ts`); the integrity check
  // reports the row.
  return storedRows.toMemoryRecord(row, storedTags(row.tags), storedMetadata(row.metadata));
}

/**
 * The columns of a record over the memory alias `m`, in the order {@link recordFromValues} reads them: a
 * statement that selects them with `CountedStatement.values` gets arrays instead of one object per row (a
 * wide row's object costs more than its values).
 */
export const RECORD_COLUMNS = `m.id, m.agent_id, m.kind, m.content, m.content_hash, m.importance, m.confidence,
  m.tags, m.session_id, m.seq_from, m.seq_to, m.created_at, m.updated_at, m.last_accessed_at, m.access_count,
  m.revision, m.lifecycle, m.superseded_by, m.embedding_state, m.embedding_fingerprint, m.embedding_attempts,
  m.user_id, m.metadata, m.valid_from, m.valid_to, m.forgotten_at`;

/** The index of `revision` in {@link RecordValues}. */
export const REVISION_VALUE = 15;

/** The values of {@link RECORD_COLUMNS}, in order. */
export type RecordValues = readonly [
  string,
  string,
  string,
  string,
  string,
  number,
  number,
  string,
  string | null,
  number | null,
  number | null,
  number,
  number,
  number | null,
  number,
  number,
  string,
  string | null,
  string,
  string | null,
  number,
  string | null,
  string,
  number,
  number | null,
  number | null,
];

/** The columns of a {@link MemoryBrief} over the memory alias `m`, in the order {@link briefFromValues} reads them. */
export const BRIEF_COLUMNS =
  'm.id, m.kind, m.revision, m.importance, m.tags, m.created_at, m.updated_at, m.session_id, m.seq_from, m.seq_to, m.valid_from';

/** The index of `revision` in {@link BriefValues}. */
export const BRIEF_REVISION_VALUE = 2;

/** The values of {@link BRIEF_COLUMNS}, in order. */
export type BriefValues = readonly [
  string,
  string,
  number,
  number,
  string,
  number,
  number,
  string | null,
  number | null,
  number | null,
  number,
];

/** The brief of the values of {@link BRIEF_COLUMNS}: the fields {@link recordFromValues} gives them. */
export function briefFromValues(v: BriefValues): MemoryBrief {
  return {
    id: v[0],
    kind: v[1] as MemoryKind,
    revision: v[2],
    importance: v[3],
    tags: parseTags(v[4]),
    createdAt: v[5],
    updatedAt: v[6],
    sessionId: v[7],
    seqFrom: v[8],
    seqTo: v[9],
    validFrom: storedTimestamp(v[10]),
  };
}

/** The record of the values of {@link RECORD_COLUMNS}: the same record {@link toRecord} makes of the row. */
export function recordFromValues(v: RecordValues): MemoryRecord {
  return {
    id: v[0],
    agentId: v[1],
    kind: v[2] as MemoryKind,
    content: storedText(v[3]),
    contentHash: v[4],
    importance: v[5],
    confidence: v[6],
    tags: parseTags(v[7]),
    sessionId: v[8],
    seqFrom: v[9],
    seqTo: v[10],
    createdAt: storedTimestamp(v[11]),
    updatedAt: storedTimestamp(v[12]),
    lastAccessedAt: storedTimestampOrNull(v[13]),
    accessCount: v[14],
    revision: v[15],
    lifecycle: v[16] as Lifecycle,
    supersededBy: v[17],
    embeddingState: v[18] as EmbeddingState,
    embeddingFingerprint: v[19],
    embeddingAttempts: v[20],
    userId: v[21],
    metadata: parseMetadata(v[22]),
    validFrom: storedTimestamp(v[23]),
    validTo: storedTimestampOrNull(v[24]),
    forgottenAt: storedTimestampOrNull(v[25]),
  };
}
