import { describe, expect, it } from 'vitest';
import {
  generatedMemoryId,
  prepareMemoryInsert,
  supersededEntry,
  validateArchiveArgs,
  validateLifecycleMoveArgs,
  validateMergeArgs,
  validateSupersedeArgs,
} from './lifecycle-rules.js';
import { codeOf } from './store-code.test.util.js';
import type { Lifecycle, MergeSource } from './types.js';

const rules = { limits: { maxContentLength: 100 }, profile: { id: 'p', dimensions: 2 } };
const memory = { agentId: 'a', kind: 'fact', content: 'the sky is blue' } as const;

describe('an insert', () => {
  it('takes a vector of the bound profile and refuses one without a profile or of another length', () => {
    expect(
      prepareMemoryInsert(rules, { ...memory, vector: new Float32Array([0.1, 0.2]) }, 'memory').vector,
    ).toHaveLength(2);
    expect(
      codeOf(() =>
        prepareMemoryInsert(
          { ...rules, profile: null },
          { ...memory, vector: new Float32Array([1, 0]) },
          'm',
        ),
      ),
    ).toBe('ENGRAM_STORE_VECTOR_UNAVAILABLE');
    expect(
      codeOf(() => prepareMemoryInsert(rules, { ...memory, vector: new Float32Array([1, 0, 0]) }, 'm')),
    ).toBe('ENGRAM_STORE_VECTOR_DIMENSIONS');
  });

  it('refuses a generated id that is not a valid id', () => {
    expect(generatedMemoryId(() => 'id-1')).toBe('id-1');
    expect(codeOf(() => generatedMemoryId(() => ''))).toBe('ENGRAM_STORE_INVALID_INPUT');
  });
});

describe('lifecycle moves', () => {
  it('archive takes a revision only when given, and it must be a positive integer', () => {
    expect(codeOf(() => validateArchiveArgs('a', 'm'))).toBeUndefined();
    expect(codeOf(() => validateArchiveArgs('a', 'm', 0))).toBe('ENGRAM_STORE_INVALID_INPUT');
    expect(codeOf(() => validateArchiveArgs('', 'm', 1))).toBe('ENGRAM_STORE_INVALID_INPUT');
  });

  it('archive and move give the checked user of their scope (null: the whole agent)', () => {
    expect(validateArchiveArgs('a', 'm')).toBeNull();
    expect(validateArchiveArgs('a', 'm', 1, { forUser: 'bob' })).toBe('bob');
    expect(validateLifecycleMoveArgs('a', 'm', 1, 'archived', { forUser: 'bob' })).toBe('bob');
    expect(codeOf(() => validateArchiveArgs('a', 'm', 1, { forUser: '' }))).toBe(
      'ENGRAM_STORE_INVALID_INPUT',
    );
  });

  it('a move names a known lifecycle', () => {
    expect(codeOf(() => validateLifecycleMoveArgs('a', 'm', 1, 'archived'))).toBeUndefined();
    expect(codeOf(() => validateLifecycleMoveArgs('a', 'm', 1, 'gone' as Lifecycle))).toBe(
      'ENGRAM_STORE_INVALID_INPUT',
    );
  });

  it('a replacement belongs to the same agent', () => {
    expect(validateSupersedeArgs(rules, 'a', 'old', 1, memory).content).toBe('the sky is blue');
    expect(codeOf(() => validateSupersedeArgs(rules, 'b', 'old', 1, memory))).toBe(
      'ENGRAM_STORE_INVALID_INPUT',
    );
  });

  it('a merge takes 2 to 64 distinct sources of the same agent', () => {
    const two: MergeSource[] = [
      { id: 'x', expectedRevision: 1 },
      { id: 'y', expectedRevision: 3 },
    ];
    expect(validateMergeArgs(rules, 'a', two, memory).agentId).toBe('a');
    for (const bad of [
      [two[0]],
      [...two, { id: 'x', expectedRevision: 2 }],
      Array.from({ length: 65 }, (_, i) => ({ id: `s${i}`, expectedRevision: 1 })),
      [two[0], { id: 'z', expectedRevision: 0 }],
    ]) {
      expect(codeOf(() => validateMergeArgs(rules, 'a', bad as MergeSource[], memory))).toBe(
        'ENGRAM_STORE_INVALID_INPUT',
      );
    }
    expect(codeOf(() => validateMergeArgs(rules, 'b', two, memory))).toBe('ENGRAM_STORE_INVALID_INPUT');
  });
});

describe('the superseded entry', () => {
  it('records the successor and the new revision, and who retired the row when named', () => {
    expect(supersededEntry('a', { id: 'old', revision: 2, userId: 'alice' }, 'new', 9)).toEqual({
      agentId: 'a',
      memoryId: 'old',
      action: 'superseded',
      at: 9,
      revision: 2,
      relatedId: 'new',
      userId: 'alice',
    });
    expect(
      supersededEntry('a', { id: 'old', revision: 2, userId: null }, 'new', 9, {
        actor: 'user',
        reason: null,
      }),
    ).toMatchObject({ actor: 'user', reason: null, userId: null });
  });
});
