/**
 * The event and skill rows both adapters store, and their records. A driver may give the numbers as strings
 * (PostgreSQL's bigint); the records always hold numbers.
 */
import type { EmbeddingState, EventType, Lifecycle, MemoryKind } from '@engram/contracts';
import { storedMetadata, storedText, storedTimestamp, storedTimestampOrNull } from './stored-values.js';
import type { EventRecord, MemoryRecord, SkillRecord } from './types.js';
import type { PreparedMemory } from './validate.js';

/** A row of `events`. */
export interface EventRow {
  agent_id: string;
  session_id: string;
  seq: string | number;
  type: string;
  role: string;
  content: string;
  tool_name: string | null;
  metadata: string;
  created_at: string | number;
  /** The event's user, or null; read tolerantly (a non-string reads as none). */
  user_id: string | null;
}

/** A stored user id: a non-string (none, or a damaged value) reads as null. */
function storedUserId(value: unknown): string | null {
  // A driver or a damaged row may give anything here; only a string is a user.
  return typeof value === 'string' ? value : null;
}

/**
 * The record of an event row; malformed metadata reads as `{}` and a user that is not a string as none (the
 * integrity check reports the row).
 */
export function toEvent(row: EventRow): EventRecord {
  const metadata = storedMetadata(row.metadata);
  return {
    agentId: row.agent_id,
    sessionId: row.session_id,
    seq: Number(row.seq),
    type: row.type as EventType,
    role: row.role,
    content: storedText(row.content),
    toolName: row.tool_name,
    metadata,
    createdAt: storedTimestamp(row.created_at),
    userId: storedUserId(row.user_id),
  };
}

/** A row of `skills`. */
export interface SkillRow {
  agent_id: string;
  name: string;
  description: string;
  content: string;
  created_at: string | number;
  updated_at: string | number;
}

/** The record of a skill row. */
export function toSkill(row: SkillRow): SkillRecord {
  return {
    agentId: row.agent_id,
    name: row.name,
    description: row.description,
    content: storedText(row.content),
    createdAt: storedTimestamp(row.created_at),
    updatedAt: storedTimestamp(row.updated_at),
  };
}

/**
 * A row of `memories` as both adapters store it, with the driver's types: `N` the integers (PostgreSQL's
 * bigint may come as a string), `T` the tags (a JSON text or an array), `F` the CJK flag (0/1 or a boolean),
 * `M` the metadata (a JSON text or an object).
 */
export interface MemoryColumns<N, T, F, M> {
  rid: N;
  id: string;
  agent_id: string;
  kind: string;
  content: string;
  content_hash: string;
  importance: number;
  confidence: number;
  tags: T;
  session_id: string | null;
  seq_from: N | null;
  seq_to: N | null;
  created_at: N;
  updated_at: N;
  last_accessed_at: N | null;
  access_count: N;
  revision: N;
  lifecycle: string;
  superseded_by: string | null;
  embedding_state: string;
  embedding_fingerprint: string | null;
  embedding_attempts: number;
  has_cjk: F;
  /** NFKC form of the content for the LIKE path, when it differs (see `likeText`). */
  like_text: string | null;
  /** Number of chunks (1: the content fits the chunk budget and has no chunk rows). */
  chunk_count: number;
  user_id: string | null;
  /** The metadata: a JSON object (with sorted keys, as text). */
  metadata: M;
  valid_from: N;
  valid_to: N | null;
  forgotten_at: N | null;
}

function num(value: string | number | null): number | null {
  return value === null ? null : Number(value);
}

/**
 * The record of a memory row, with its tags and metadata as the adapter read them. A read never throws on a
 * stored value: a timestamp that is not a number reads as `NaN` (see `stored-values.ts`).
 */
export function toMemoryRecord(
  row: MemoryColumns<string | number, unknown, unknown, unknown>,
  tags: readonly string[],
  metadata: Readonly<Record<string, unknown>>,
): MemoryRecord {
  return {
    id: storedText(row.id),
    agentId: row.agent_id,
    kind: row.kind as MemoryKind,
    content: storedText(row.content),
    contentHash: row.content_hash,
    importance: Number(row.importance),
    confidence: Number(row.confidence),
    tags: [...tags],
    sessionId: row.session_id,
    seqFrom: num(row.seq_from),
    seqTo: num(row.seq_to),
    createdAt: storedTimestamp(row.created_at),
    updatedAt: storedTimestamp(row.updated_at),
    lastAccessedAt: storedTimestampOrNull(row.last_accessed_at),
    accessCount: Number(row.access_count),
    revision: Number(row.revision),
    lifecycle: row.lifecycle as Lifecycle,
    supersededBy: row.superseded_by,
    embeddingState: row.embedding_state as EmbeddingState,
    embeddingFingerprint: row.embedding_fingerprint,
    embeddingAttempts: Number(row.embedding_attempts),
    userId: row.user_id,
    metadata,
    validFrom: storedTimestamp(row.valid_from),
    validTo: storedTimestampOrNull(row.valid_to),
    forgottenAt: storedTimestampOrNull(row.forgotten_at),
  };
}

/** What an insert decided besides the prepared memory: the id, hash, times and embedding state. */
export interface InsertedFields {
  readonly id: string;
  readonly contentHash: string;
  readonly createdAt: number;
  readonly updatedAt: number;
  readonly validFrom: number;
  readonly embeddingState: EmbeddingState;
  readonly embeddingFingerprint: string | null;
}

/** The record of a freshly inserted memory (revision 1, active, never accessed). */
export function newMemoryRecord(p: PreparedMemory, f: InsertedFields): MemoryRecord {
  return {
    id: f.id,
    agentId: p.agentId,
    kind: p.kind,
    content: p.content,
    contentHash: f.contentHash,
    importance: p.importance,
    confidence: p.confidence,
    tags: [...p.tags],
    sessionId: p.sessionId,
    seqFrom: p.seqFrom,
    seqTo: p.seqTo,
    createdAt: f.createdAt,
    updatedAt: f.updatedAt,
    lastAccessedAt: null,
    accessCount: 0,
    revision: 1,
    lifecycle: 'active',
    supersededBy: null,
    embeddingState: f.embeddingState,
    embeddingFingerprint: f.embeddingFingerprint,
    embeddingAttempts: 0,
    userId: p.userId,
    metadata: p.metadataJson === '{}' ? {} : (JSON.parse(p.metadataJson) as Record<string, unknown>),
    validFrom: f.validFrom,
    validTo: null,
    forgottenAt: null,
  };
}

/** The fields that make two events with one seq the same event. */
export interface EventFields {
  readonly type: string;
  readonly role: string;
  readonly content: string;
  readonly toolName: string | null;
  readonly metadataJson: string;
  /** The event's user, or null: the same seq with another user is another event (a conflict). */
  readonly userId: string | null;
}

/** The fields of a stored event row. */
export function eventFields(
  row: Pick<EventRow, 'type' | 'role' | 'content' | 'tool_name' | 'metadata' | 'user_id'>,
): EventFields {
  return {
    type: row.type,
    role: row.role,
    content: storedText(row.content),
    toolName: row.tool_name,
    metadataJson: row.metadata,
    userId: storedUserId(row.user_id),
  };
}

/** True when two events with one seq are the same event (a re-send, skipped), not a conflict. */
export function sameEvent(a: EventFields, b: EventFields): boolean {
  return (
    a.userId === b.userId &&
    a.type === b.type &&
    a.role === b.role &&
    a.content === b.content &&
    a.toolName === b.toolName &&
    a.metadataJson === b.metadataJson
  );
}
