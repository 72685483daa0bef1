import type { MemoryRecord } from '@engram/store';

/**
 * A test row: an active, embedded `fact` of agent `a` whose content and hash are its id, created and updated
 * at 0, unless `fields` say otherwise. The behaviour-tier tests build their rows with it (no store runs there).
 */
export function memoryRecord(fields: Partial<MemoryRecord> & Pick<MemoryRecord, 'id'>): MemoryRecord {
  return {
    agentId: 'a',
    kind: 'fact',
    content: fields.id,
    contentHash: fields.id,
    importance: 0.5,
    confidence: 1,
    tags: [],
    sessionId: null,
    seqFrom: null,
    seqTo: null,
    createdAt: 0,
    updatedAt: 0,
    lastAccessedAt: null,
    accessCount: 0,
    revision: 1,
    lifecycle: 'active',
    supersededBy: null,
    embeddingState: 'ready',
    embeddingFingerprint: null,
    embeddingAttempts: 0,
    ...fields,
  };
}
