/**
 * Row mapping of the PostgreSQL store: the stored shapes of `memories`, `events` and `skills` and their
 * records. `bigint` columns arrive from `pg` as strings; every value the store writes fits a double exactly.
 */
import {
  type EmbeddingState,
  EngramStoreError,
  type EventRecord,
  type EventType,
  type Lifecycle,
  type MemoryBrief,
  type MemoryKind,
  type MemoryRecord,
  type SkillRecord,
} from '@engram/store';

/** A row of `memories` as `pg` returns it. */
export interface MemoryRow {
  rid: string | number;
  id: string;
  agent_id: string;
  kind: string;
  content: string;
  content_hash: string;
  importance: number;
  confidence: number;
  tags: string[];
  session_id: string | null;
  seq_from: string | number | null;
  seq_to: string | number | null;
  created_at: string | number;
  updated_at: string | number;
  last_accessed_at: string | number | null;
  access_count: string | number;
  revision: string | number;
  lifecycle: string;
  superseded_by: string | null;
  embedding_state: string;
  embedding_fingerprint: string | null;
  embedding_attempts: number;
  has_cjk: boolean;
  like_text: string | null;
  chunk_count: number;
  user_id: string | null;
  metadata: Record<string, unknown>;
  valid_from: string | number;
  valid_to: string | number | null;
  forgotten_at: string | number | null;
}

/** The columns of a memory record (never the whole row: leases and derived text stay inside). */
export const MEMORY_COLUMNS =
  'rid, id, agent_id, kind, content, content_hash, importance, confidence, tags, session_id, seq_from, seq_to, created_at, updated_at, last_accessed_at, access_count, revision, lifecycle, superseded_by, embedding_state, embedding_fingerprint, embedding_attempts, has_cjk, like_text, chunk_count, user_id, metadata, valid_from, valid_to, forgotten_at';

/** A nullable bigint column as a number. */
export function num(value: string | number | null): number | null {
  return value === null ? null : Number(value);
}

/** The record of a memory row. */
export function toRecord(row: MemoryRow): MemoryRecord {
  if (
    !Array.isArray(row.tags) ||
    typeof row.metadata !== 'object' ||
    row.metadata === null ||
    Array.isArray(row.metadata)
  ) {
    throw new EngramStoreError('ENGRAM_STORE_CORRUPT', 'a stored tag list or metadata is malformed');
  }
  return {
    id: row.id,
    agentId: row.agent_id,
    kind: row.kind as MemoryKind,
    content: row.content,
    contentHash: row.content_hash,
    importance: Number(row.importance),
    confidence: Number(row.confidence),
    tags: [...row.tags],
    sessionId: row.session_id,
    seqFrom: num(row.seq_from),
    seqTo: num(row.seq_to),
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
    lastAccessedAt: num(row.last_accessed_at),
    accessCount: Number(row.access_count),
    revision: Number(row.revision),
    lifecycle: row.lifecycle as Lifecycle,
    supersededBy: row.superseded_by,
    embeddingState: row.embedding_state as EmbeddingState,
    embeddingFingerprint: row.embedding_fingerprint,
    embeddingAttempts: Number(row.embedding_attempts),
    userId: row.user_id,
    metadata: row.metadata,
    validFrom: Number(row.valid_from),
    validTo: num(row.valid_to),
    forgottenAt: num(row.forgotten_at),
  };
}

/** The columns of a {@link MemoryBrief} (see {@link toBrief}). */
export const BRIEF_COLUMNS = 'id, kind, revision, importance, tags, created_at, updated_at';

/** The brief of a memory row read with {@link BRIEF_COLUMNS}: the fields {@link toRecord} gives them. */
export function toBrief(
  row: Pick<MemoryRow, 'id' | 'kind' | 'revision' | 'importance' | 'tags' | 'created_at' | 'updated_at'>,
): MemoryBrief {
  if (!Array.isArray(row.tags)) {
    throw new EngramStoreError('ENGRAM_STORE_CORRUPT', 'a stored tag list or metadata is malformed');
  }
  return {
    id: row.id,
    kind: row.kind as MemoryKind,
    revision: Number(row.revision),
    importance: Number(row.importance),
    tags: [...row.tags],
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}

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
  user_id: string | null;
}

/** The record of an event row; malformed metadata is `ENGRAM_STORE_CORRUPT`. */
export function toEvent(row: EventRow): EventRecord {
  let metadata: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(row.metadata);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
      throw new TypeError('not an object');
    metadata = parsed as Record<string, unknown>;
  } catch (cause) {
    throw new EngramStoreError('ENGRAM_STORE_CORRUPT', 'stored event metadata is not valid JSON', { cause });
  }
  return {
    agentId: row.agent_id,
    sessionId: row.session_id,
    seq: Number(row.seq),
    type: row.type as EventType,
    role: row.role,
    content: row.content,
    toolName: row.tool_name,
    metadata,
    createdAt: Number(row.created_at),
    userId: row.user_id,
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
    content: row.content,
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}

/** pgvector's text form of a vector (every float32 prints exactly as a double). */
export function vectorLiteral(vector: Float32Array): string {
  return `[${Array.from(vector).join(',')}]`;
}
