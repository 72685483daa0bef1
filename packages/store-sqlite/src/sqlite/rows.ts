/**
 * Row mapping: the stored row shapes of `memories`, `events` and `skills`, and their records.
 */

import type {
  EmbeddingState,
  EventRecord,
  EventType,
  Lifecycle,
  MemoryBrief,
  MemoryKind,
  MemoryRecord,
  SkillRecord,
} from '@engram/store/port-kit';
import { EngramStoreError } from '@engram/store/port-kit';
import { z } from 'zod';

const tagsJsonSchema = z.array(z.string());
const metadataJsonSchema = z.record(z.string(), z.unknown());

/** A row of `memories`. */
export interface MemoryRow {
  rid: number;
  id: string;
  agent_id: string;
  kind: string;
  content: string;
  content_hash: string;
  importance: number;
  confidence: number;
  tags: string;
  session_id: string | null;
  seq_from: number | null;
  seq_to: number | null;
  created_at: number;
  updated_at: number;
  last_accessed_at: number | null;
  access_count: number;
  revision: number;
  lifecycle: string;
  superseded_by: string | null;
  embedding_state: string;
  embedding_fingerprint: string | null;
  embedding_attempts: number;
  has_cjk: number;
  /** NFKC form of the content for the LIKE path, when it differs (see `likeText`). */
  like_text: string | null;
  /** Number of chunks (1: the content fits the chunk budget and has no chunk rows). */
  chunk_count: number;
  user_id: string | null;
  /** JSON object with sorted keys. */
  metadata: string;
  valid_from: number;
  valid_to: number | null;
  forgotten_at: number | null;
}

/** A row of `events`. */
export interface EventRow {
  agent_id: string;
  session_id: string;
  seq: number;
  type: string;
  role: string;
  content: string;
  tool_name: string | null;
  metadata: string;
  created_at: number;
  user_id: string | null;
}

/** A row of `skills`. */
export interface SkillRow {
  agent_id: string;
  name: string;
  description: string;
  content: string;
  created_at: number;
  updated_at: number;
}

/** A stored tag list; malformed is `ENGRAM_STORE_CORRUPT`. */
function parseTags(text: string): string[] {
  if (text === '[]') return [];
  try {
    return tagsJsonSchema.parse(JSON.parse(text));
  } catch (cause) {
    throw new EngramStoreError('ENGRAM_STORE_CORRUPT', 'a stored tag list is not valid JSON', { cause });
  }
}

/** Stored metadata; malformed is `ENGRAM_STORE_CORRUPT`. */
function parseMetadata(text: string): Record<string, unknown> {
  if (text === '{}') return {};
  try {
    return metadataJsonSchema.parse(JSON.parse(text));
  } catch (cause) {
    throw new EngramStoreError('ENGRAM_STORE_CORRUPT', 'stored memory metadata is not valid JSON', {
      cause,
    });
  }
}

/** The record of a memory row; a malformed tag list or metadata is `ENGRAM_STORE_CORRUPT`. */
export function toRecord(row: MemoryRow): MemoryRecord {
  return {
    id: row.id,
    agentId: row.agent_id,
    kind: row.kind as MemoryKind,
    content: row.content,
    contentHash: row.content_hash,
    importance: row.importance,
    confidence: row.confidence,
    tags: parseTags(row.tags),
    sessionId: row.session_id,
    seqFrom: row.seq_from,
    seqTo: row.seq_to,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    lastAccessedAt: row.last_accessed_at,
    accessCount: row.access_count,
    revision: row.revision,
    lifecycle: row.lifecycle as Lifecycle,
    supersededBy: row.superseded_by,
    embeddingState: row.embedding_state as EmbeddingState,
    embeddingFingerprint: row.embedding_fingerprint,
    embeddingAttempts: row.embedding_attempts,
    userId: row.user_id,
    metadata: parseMetadata(row.metadata),
    validFrom: row.valid_from,
    validTo: row.valid_to,
    forgottenAt: row.forgotten_at,
  };
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
export const BRIEF_COLUMNS = 'm.id, m.kind, m.revision, m.importance, m.tags, m.created_at, m.updated_at';

/** The index of `revision` in {@link BriefValues}. */
export const BRIEF_REVISION_VALUE = 2;

/** The values of {@link BRIEF_COLUMNS}, in order. */
export type BriefValues = readonly [string, string, number, number, string, number, number];

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
  };
}

/** The record of the values of {@link RECORD_COLUMNS}: the same record {@link toRecord} makes of the row. */
export function recordFromValues(v: RecordValues): MemoryRecord {
  return {
    id: v[0],
    agentId: v[1],
    kind: v[2] as MemoryKind,
    content: v[3],
    contentHash: v[4],
    importance: v[5],
    confidence: v[6],
    tags: parseTags(v[7]),
    sessionId: v[8],
    seqFrom: v[9],
    seqTo: v[10],
    createdAt: v[11],
    updatedAt: v[12],
    lastAccessedAt: v[13],
    accessCount: v[14],
    revision: v[15],
    lifecycle: v[16] as Lifecycle,
    supersededBy: v[17],
    embeddingState: v[18] as EmbeddingState,
    embeddingFingerprint: v[19],
    embeddingAttempts: v[20],
    userId: v[21],
    metadata: parseMetadata(v[22]),
    validFrom: v[23],
    validTo: v[24],
    forgottenAt: v[25],
  };
}

/** The record of an event row; malformed metadata is `ENGRAM_STORE_CORRUPT`. */
export function toEvent(row: EventRow): EventRecord {
  let metadata: Record<string, unknown>;
  try {
    metadata = metadataJsonSchema.parse(JSON.parse(row.metadata));
  } catch (cause) {
    throw new EngramStoreError('ENGRAM_STORE_CORRUPT', 'stored event metadata is not valid JSON', {
      cause,
    });
  }
  return {
    agentId: row.agent_id,
    sessionId: row.session_id,
    seq: row.seq,
    type: row.type as EventType,
    role: row.role,
    content: row.content,
    toolName: row.tool_name,
    metadata,
    createdAt: row.created_at,
    userId: row.user_id,
  };
}

/** The record of a skill row. */
export function toSkill(row: SkillRow): SkillRecord {
  return {
    agentId: row.agent_id,
    name: row.name,
    description: row.description,
    content: row.content,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
