import { describe, expect, it } from 'vitest';
import { codeOf } from './store-code.test.util.js';
import {
  prepareEvent,
  prepareNewMemory,
  preparePatch,
  prepareSkill,
  stableMetadataJson,
  validateAgentId,
  validateLimit,
  validateTag,
  validateTags,
  validateTimestamp,
  validateVector,
} from './validate.js';

const limits = { maxContentLength: 100 };

describe('agent ids', () => {
  it('rejects empty, blank, oversize, NUL and non-strings', () => {
    for (const bad of ['', '   ', 'x'.repeat(257), 'a\u0000b', 'tab\there', 42, null, undefined]) {
      expect(codeOf(() => validateAgentId(bad))).toBe('ENGRAM_STORE_INVALID_INPUT');
    }
    expect(validateAgentId('agent-1')).toBe('agent-1');
    expect(validateAgentId('x'.repeat(256))).toHaveLength(256);
  });

  it('refuses look-alikes out of normal form (surrounding whitespace, not NFC), agent and session ids alike', () => {
    for (const bad of ['alice ', ' alice', 'alice\u00a0', '\talice', 'cafe\u0301']) {
      expect(codeOf(() => validateAgentId(bad))).toBe('ENGRAM_STORE_INVALID_INPUT');
      expect(codeOf(() => validateAgentId(bad, 'sessionId'))).toBe('ENGRAM_STORE_INVALID_INPUT');
    }
    expect(() => validateAgentId('alice ')).toThrow(
      'invalid input: agentId has leading or trailing whitespace',
    );
    expect(() => validateAgentId('cafe\u0301', 'sessionId')).toThrow(
      'invalid input: sessionId is not in Unicode normalization form NFC',
    );
    // Inner spaces and composed characters are ordinary ids.
    expect(validateAgentId('caf\u00e9 team/coder 7')).toBe('caf\u00e9 team/coder 7');
  });
});

describe('new memories', () => {
  const base = { agentId: 'a', kind: 'fact' as const, content: 'hello' };

  it('applies defaults and sorts/dedupes tags', () => {
    const p = prepareNewMemory({ ...base, tags: ['tool:bash', 'file:a.ts', 'tool:bash'] }, limits);
    expect(p.importance).toBe(0.5);
    expect(p.confidence).toBe(1);
    expect(p.tags).toEqual(['file:a.ts', 'tool:bash']);
    expect(p.sessionId).toBeNull();
  });

  it('rejects each bad field with INVALID_INPUT', () => {
    const bad: Record<string, unknown>[] = [
      { agentId: '' },
      { kind: 'note' },
      { content: '' },
      { content: '   \n ' },
      { content: 'x'.repeat(101) },
      { content: 'lone \uD800 surrogate' },
      { importance: Number.NaN },
      { importance: 1.5 },
      { importance: -0.1 },
      { confidence: Number.POSITIVE_INFINITY },
      { tags: ['nocolon'] },
      { tags: ['Upper:x'] },
      { id: 'x'.repeat(129) },
      { seqFrom: 0 },
      { seqFrom: 1.5 },
      { seqFrom: 5, seqTo: 4 },
      { createdAt: -1 },
      { sessionId: '' },
    ];
    for (const patch of bad) {
      expect(
        codeOf(() => prepareNewMemory({ ...base, ...patch } as never, limits)),
        JSON.stringify(patch),
      ).toBe('ENGRAM_STORE_INVALID_INPUT');
    }
  });

  it('accepts content exactly at the cap', () => {
    expect(prepareNewMemory({ ...base, content: 'x'.repeat(100) }, limits).content).toHaveLength(100);
  });

  it('rejects a vector that is not a Float32Array as VECTOR_INVALID', () => {
    expect(codeOf(() => prepareNewMemory({ ...base, vector: [1, 2] as never }, limits))).toBe(
      'ENGRAM_STORE_VECTOR_INVALID',
    );
  });
});

describe('tags', () => {
  const accepted = (tag: unknown): boolean => codeOf(() => validateTag(tag)) === undefined;

  it('accepts prefix:value with the documented prefix pattern and value rules', () => {
    expect(accepted('file:src/a.ts')).toBe(true);
    expect(accepted('hash:ab:cd')).toBe(true);
    expect(accepted(`x:${'v'.repeat(512)}`)).toBe(true);
    expect(accepted('a_b-9:v')).toBe(true);
  });

  it('rejects malformed tags', () => {
    for (const bad of [
      'novalue:',
      ':noprefix',
      'noseparator',
      '9start:x',
      'UP:x',
      `${'p'.repeat(33)}:x`,
      `x:${'v'.repeat(513)}`,
      'x:line\nbreak',
      'x:nul\u0000',
      42,
    ]) {
      expect(accepted(bad), String(bad)).toBe(false);
    }
  });

  it('caps the count at 64 distinct tags', () => {
    const many = Array.from({ length: 65 }, (_, i) => `t:${i}`);
    expect(codeOf(() => validateTags(many))).toBe('ENGRAM_STORE_INVALID_INPUT');
    expect(validateTags([...many.slice(0, 64), 't:0'])).toHaveLength(64);
  });
});

describe('vectors', () => {
  it('checks length, finiteness and a non-zero norm', () => {
    expect(codeOf(() => validateVector(new Float32Array(3), 4))).toBe('ENGRAM_STORE_VECTOR_DIMENSIONS');
    expect(codeOf(() => validateVector(new Float32Array([1, Number.NaN]), 2))).toBe(
      'ENGRAM_STORE_VECTOR_INVALID',
    );
    expect(codeOf(() => validateVector(new Float32Array([1, Number.POSITIVE_INFINITY]), 2))).toBe(
      'ENGRAM_STORE_VECTOR_INVALID',
    );
    expect(codeOf(() => validateVector(new Float32Array([0, 0]), 2))).toBe('ENGRAM_STORE_VECTOR_INVALID');
    expect(codeOf(() => validateVector([1, 0] as never, 2))).toBe('ENGRAM_STORE_VECTOR_INVALID');
    expect(validateVector(new Float32Array([0, 1]), 2)).toBeInstanceOf(Float32Array);
  });
});

describe('patches, events, skills, limits', () => {
  it('validates only the fields present in a patch', () => {
    expect(preparePatch({}, limits)).toEqual({});
    expect(preparePatch({ tags: ['b:1', 'a:1'] }, limits)).toEqual({ tags: ['a:1', 'b:1'] });
    expect(codeOf(() => preparePatch({ importance: 2 }, limits))).toBe('ENGRAM_STORE_INVALID_INPUT');
    expect(codeOf(() => preparePatch({ lifecycle: 'deleted' as never }, limits))).toBe(
      'ENGRAM_STORE_INVALID_INPUT',
    );
  });

  it('allows empty event content but checks seq, type, role and metadata', () => {
    const ok = prepareEvent({ seq: 1, type: 'tool_call', role: 'assistant', content: '' }, limits);
    expect(ok.metadataJson).toBe('{}');
    expect(codeOf(() => prepareEvent({ seq: 0, type: 'message', role: 'user', content: 'x' }, limits))).toBe(
      'ENGRAM_STORE_INVALID_INPUT',
    );
    expect(
      codeOf(() => prepareEvent({ seq: 1, type: 'chat' as never, role: 'user', content: 'x' }, limits)),
    ).toBe('ENGRAM_STORE_INVALID_INPUT');
    expect(codeOf(() => prepareEvent({ seq: 1, type: 'message', role: '', content: 'x' }, limits))).toBe(
      'ENGRAM_STORE_INVALID_INPUT',
    );
  });

  it('serialises metadata with sorted keys and rejects non-JSON values', () => {
    expect(stableMetadataJson({ b: 1, a: { d: [1, 'x'], c: null } }, limits)).toBe(
      '{"a":{"c":null,"d":[1,"x"]},"b":1}',
    );
    expect(codeOf(() => stableMetadataJson({ n: Number.NaN }, limits))).toBe('ENGRAM_STORE_INVALID_INPUT');
    expect(codeOf(() => stableMetadataJson({ d: new Date(0) }, limits))).toBe('ENGRAM_STORE_INVALID_INPUT');
    expect(codeOf(() => stableMetadataJson({ b: 1n }, limits))).toBe('ENGRAM_STORE_INVALID_INPUT');
    expect(codeOf(() => stableMetadataJson([1], limits))).toBe('ENGRAM_STORE_INVALID_INPUT');
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(codeOf(() => stableMetadataJson(cyclic, limits))).toBe('ENGRAM_STORE_INVALID_INPUT');
  });

  it('checks skill names', () => {
    expect(
      prepareSkill({ agentId: 'a', name: 'Deploy_app-2', description: '', content: 'steps' }, limits).name,
    ).toBe('Deploy_app-2');
    for (const name of ['', '-x', 'has space', 'x'.repeat(65), '../etc']) {
      expect(
        codeOf(() => prepareSkill({ agentId: 'a', name, description: '', content: 'steps' }, limits)),
      ).toBe('ENGRAM_STORE_INVALID_INPUT');
    }
  });

  it('clamps limits to the maximum and rejects non-positive ones', () => {
    expect(validateLimit(5000, 'limit', 1000)).toBe(1000);
    expect(validateLimit(undefined, 'limit', 1000, 50)).toBe(50);
    expect(codeOf(() => validateLimit(0, 'limit', 1000))).toBe('ENGRAM_STORE_INVALID_INPUT');
    expect(codeOf(() => validateLimit(1.5, 'limit', 1000))).toBe('ENGRAM_STORE_INVALID_INPUT');
  });

  it('never puts the offending value into the message', () => {
    try {
      prepareNewMemory({ agentId: 'a', kind: 'fact', content: `SECRET-CANARY ${'x'.repeat(200)}` }, limits);
      expect.unreachable();
    } catch (err) {
      expect((err as Error).message).not.toContain('SECRET-CANARY');
    }
  });
});

describe('every timestamp within the Date range, every vector finite in float32', () => {
  it('refuses a timestamp past 8.64e15 (a Date cannot hold it) and accepts the last one it can', () => {
    expect(validateTimestamp(8.64e15, 'createdAt')).toBe(8.64e15);
    expect(() => validateTimestamp(9e15, 'createdAt')).toThrow(/createdAt/);
    expect(() => validateTimestamp('yesterday', 'validFrom')).toThrow(/validFrom/);
  });

  it('refuses a vector whose norm overflows float32 although float64 holds it (components of 1e38)', () => {
    const huge = new Float32Array(8).fill(1e38);
    expect(() => validateVector(huge, 8)).toThrow(
      expect.objectContaining({ code: 'ENGRAM_STORE_VECTOR_INVALID' }),
    );
    expect(validateVector(new Float32Array(8).fill(1e18), 8)).toHaveLength(8);
  });
});
