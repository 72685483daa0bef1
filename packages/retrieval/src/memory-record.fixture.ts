import type { MemoryRecord } from '@engram/store';
import { FRESH_MEMORY_FIELDS } from '@engram/test-support';

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
    ...FRESH_MEMORY_FIELDS,
    ...fields,
  };
}
