import { describe, expect, it } from 'vitest';
import { CHUNK_KEY_SPAN, chunkKey } from './chunking.js';
import { codeOf } from './store-code.test.util.js';
import { embeddingFingerprint, parseEmbeddingFingerprint } from './store-options.js';
import {
  eventFields,
  type MemoryColumns,
  newMemoryRecord,
  sameEvent,
  toEvent,
  toMemoryRecord,
  toSkill,
} from './stored-rows.js';
import { prepareNewMemory } from './validate.js';

const pgRow: MemoryColumns<string | number, string[], boolean, Record<string, unknown>> = {
  rid: '7',
  id: 'm',
  agent_id: 'a',
  kind: 'fact',
  content: 'the sky is blue',
  content_hash: 'h',
  importance: 0.5,
  confidence: 1,
  tags: ['topic:sky'],
  session_id: null,
  seq_from: '3',
  seq_to: null,
  created_at: '100',
  updated_at: 200,
  last_accessed_at: null,
  access_count: '2',
  revision: '4',
  lifecycle: 'active',
  superseded_by: null,
  embedding_state: 'pending',
  embedding_fingerprint: null,
  embedding_attempts: 0,
  has_cjk: false,
  like_text: null,
  chunk_count: 1,
  user_id: 'u',
  metadata: { source: 'chat' },
  valid_from: '100',
  valid_to: null,
  forgotten_at: null,
};

describe('stored memory rows', () => {
  it('read as records with numbers, whatever type the driver gave them', () => {
    const record = toMemoryRecord(pgRow, pgRow.tags, pgRow.metadata);
    expect(record).toMatchObject({
      id: 'm',
      seqFrom: 3,
      seqTo: null,
      createdAt: 100,
      updatedAt: 200,
      accessCount: 2,
      revision: 4,
      tags: ['topic:sky'],
      userId: 'u',
      metadata: { source: 'chat' },
      validFrom: 100,
    });
  });

  it('a fresh insert is revision 1, active, never accessed, with the metadata object', () => {
    const p = prepareNewMemory(
      { agentId: 'a', kind: 'fact', content: 'c', metadata: { b: 1 } },
      { maxContentLength: 100 },
      'memory',
    );
    const record = newMemoryRecord(p, {
      id: 'm',
      contentHash: 'h',
      createdAt: 5,
      updatedAt: 5,
      validFrom: 5,
      embeddingState: 'pending',
      embeddingFingerprint: null,
    });
    expect(record).toMatchObject({
      id: 'm',
      revision: 1,
      lifecycle: 'active',
      accessCount: 0,
      lastAccessedAt: null,
      metadata: { b: 1 },
      validTo: null,
    });
  });
});

describe('stored events and skills', () => {
  const row = {
    agent_id: 'a',
    session_id: 's',
    seq: '2',
    type: 'message',
    role: 'user',
    content: 'hi',
    tool_name: null,
    metadata: '{"k":1}',
    created_at: '9',
    user_id: null,
  };

  it('an event row reads as its record; metadata that is not a JSON object reads as {}, never throws', () => {
    expect(toEvent(row)).toMatchObject({ seq: 2, createdAt: 9, metadata: { k: 1 }, toolName: null });
    for (const bad of ['[1]', 'null', '{']) {
      expect(toEvent({ ...row, metadata: bad }).metadata).toEqual({});
    }
  });

  it('a re-sent event is the same event only when every field matches', () => {
    const stored = eventFields(row);
    expect(sameEvent(stored, { ...stored })).toBe(true);
    expect(sameEvent(stored, { ...stored, metadataJson: '{"k":2}' })).toBe(false);
    expect(sameEvent(stored, { ...stored, toolName: 'search' })).toBe(false);
    expect(sameEvent(stored, { ...stored, userId: 'bob' })).toBe(false);
  });

  it("an event row's user reads as its record's; anything but a string reads as none, never throws", () => {
    expect(toEvent(row).userId).toBeNull();
    expect(toEvent({ ...row, user_id: 'bob' }).userId).toBe('bob');
    expect(eventFields({ ...row, user_id: 'bob' }).userId).toBe('bob');
    for (const bad of [7, {}, undefined]) {
      expect(toEvent({ ...row, user_id: bad as unknown as string }).userId).toBeNull();
    }
  });

  it('a skill row reads as its record', () => {
    expect(
      toSkill({ agent_id: 'a', name: 'n', description: 'd', content: 'c', created_at: '1', updated_at: 2 }),
    ).toEqual({ agentId: 'a', name: 'n', description: 'd', content: 'c', createdAt: 1, updatedAt: 2 });
  });
});

describe('keys and fingerprints', () => {
  it('a chunk key keeps its memory and chunk index apart', () => {
    expect(chunkKey(42, 0)).toBe(42);
    const key = chunkKey(42, 3);
    expect(key % CHUNK_KEY_SPAN).toBe(42);
    expect(Math.floor(key / CHUNK_KEY_SPAN)).toBe(3);
  });

  it('a recorded fingerprint reads back as its profile; a malformed one is CORRUPT', () => {
    const profile = { id: 'openai:text-embedding-3-small', dimensions: 1536 };
    expect(parseEmbeddingFingerprint(embeddingFingerprint(profile))).toEqual(profile);
    expect(parseEmbeddingFingerprint('none')).toBeNull();
    for (const bad of ['x', ':3', 'p:0', 'p:1.5']) {
      expect(codeOf(() => parseEmbeddingFingerprint(bad))).toBe('ENGRAM_STORE_CORRUPT');
    }
  });
});
