/**
 * Row mapping: the stored row shapes of `memories`, `events` and `skills`, and their records.
 */
import { z } from 'zod';
import { EngramStoreError } from '../errors.js';
import type {
  EmbeddingState,
  EventRecord,
  EventType,
  Lifecycle,
  MemoryKind,
  MemoryRecord,
  SkillRecord,
} from '../types.js';

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

/** The record of a memory row; a malformed tag list or metadata is `ENGRAM_STORE_CORRUPT`. */
export function toRecord(row: MemoryRow): MemoryRecord {
  let tags: string[];
  try {
    tags = tagsJsonSchema.parse(JSON.parse(row.tags));
  } catch (cause) {
    throw new EngramStoreError('ENGRAM_STORE_CORRUPT', 'a stored tag list is not valid JSON', { cause });
  }
  let metadata: Record<string, unknown>;
  try {
    metadata = metadataJsonSchema.parse(JSON.parse(row.metadata));
  } catch (cause) {
    throw new EngramStoreError('ENGRAM_STORE_CORRUPT', 'stored memory metadata is not valid JSON', {
      cause,
    });
  }
  return {
    id: row.id,
    agentId: row.agent_id,
    kind: row.kind as MemoryKind,
    content: row.content,
    contentHash: row.content_hash,
    importance: row.importance,
    confidence: row.confidence,
    tags,
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
    metadata,
    validFrom: row.valid_from,
    validTo: row.valid_to,
    forgottenAt: row.forgotten_at,
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
