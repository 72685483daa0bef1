import { describe, expect, it } from 'vitest';
import {
  type ConflictRow,
  conflictLink,
  conflictLinkedEntries,
  conflictResolvedEntries,
  deleteAllUser,
  forgetScope,
  forgetUser,
  forgottenEntry,
  settleConflict,
  validateForgetArgs,
  validateLinkArgs,
  validateListConflictsArgs,
  validateResolveArgs,
} from './facts-rules.js';
import type { ConflictResolution } from './facts-types.js';
import { codeOf } from './store-code.test.util.js';

const open: ConflictRow = {
  older_id: 'o',
  newer_id: 'n',
  state: 'open',
  reason: 'number',
  created_at: '5',
  resolved_at: null,
};

describe('forgetting', () => {
  it('defaults who forgets to the caller and reaches the id and its predecessors only', () => {
    expect(validateForgetArgs('a', 'm')).toEqual({ actor: 'caller', reason: null });
    expect(codeOf(() => validateForgetArgs('a', ''))).toBe('ENGRAM_STORE_INVALID_INPUT');
    expect(forgetScope(['v1', 'v2', 'v3'], 'v2')).toEqual(['v1', 'v2']);
  });

  it("writes a tombstone with who and why at the row revision, naming the row's user", () => {
    expect(
      forgottenEntry(
        { agentId: 'a', id: 'm', revision: 3, userId: 'bob' },
        { actor: 'user', reason: 'wrong' },
        9,
      ),
    ).toEqual({
      agentId: 'a',
      memoryId: 'm',
      action: 'forgotten',
      at: 9,
      revision: 3,
      actor: 'user',
      reason: 'wrong',
      userId: 'bob',
    });
    expect(
      forgottenEntry({ agentId: 'a', id: 'm', revision: 1, userId: null }, { actor: 'user', reason: null }, 9)
        .userId,
    ).toBeNull();
  });
});

describe('the user of a forget and of a delete-all', () => {
  it('a forget acts for the whole agent unless it names a user, checked like an agent id', () => {
    expect(forgetUser()).toBeNull();
    expect(forgetUser({ actor: 'x' })).toBeNull();
    expect(forgetUser({ forUser: 'bob' })).toBe('bob');
    expect(codeOf(() => forgetUser({ forUser: '' }))).toBe('ENGRAM_STORE_INVALID_INPUT');
  });

  it('a delete-all reaches one user only when it names one, checked like an agent id', () => {
    expect(deleteAllUser()).toBeNull();
    expect(deleteAllUser({ reason: 'gdpr' })).toBeNull();
    expect(deleteAllUser({ userId: 'bob' })).toBe('bob');
    expect(codeOf(() => deleteAllUser({ userId: 'a\u0000b' }))).toBe('ENGRAM_STORE_INVALID_INPUT');
  });
});

describe('conflict links', () => {
  it('link two different memories for a known reason, recorded on both sides', () => {
    expect(codeOf(() => validateLinkArgs('a', 'o', 'n', 'entity'))).toBeUndefined();
    expect(codeOf(() => validateLinkArgs('a', 'o', 'o', 'entity'))).toBe('ENGRAM_STORE_INVALID_INPUT');
    expect(codeOf(() => validateLinkArgs('a', 'o', 'n', 'mood'))).toBe('ENGRAM_STORE_INVALID_INPUT');
    const users = { older: 'alice', newer: null };
    const linked = conflictLinkedEntries('a', 'o', 'n', 'entity', 4, users);
    expect(linked.map((e) => [e.memoryId, e.relatedId, e.userId])).toEqual([
      ['o', 'n', 'alice'],
      ['n', 'o', null],
    ]);
    // A side whose user is not known records none (the store keeps it as unknown).
    const unknown = conflictLinkedEntries('a', 'o', 'n', 'entity', 4, { older: undefined, newer: 'bob' });
    expect(unknown.map((e) => 'userId' in e)).toEqual([false, true]);
  });

  it('list with checked ids, state, limit (1000 by default) and user', () => {
    expect(validateListConflictsArgs('a', {})).toEqual({
      ids: null,
      state: null,
      limit: 1000,
      forUser: null,
    });
    expect(validateListConflictsArgs('a', { ids: ['x'], state: 'open', limit: 5, forUser: 'alice' })).toEqual(
      {
        ids: ['x'],
        state: 'open',
        limit: 5,
        forUser: 'alice',
      },
    );
    expect(codeOf(() => validateListConflictsArgs('a', { state: 'closed' as 'open' }))).toBe(
      'ENGRAM_STORE_INVALID_INPUT',
    );
    expect(codeOf(() => validateListConflictsArgs('a', { ids: Array(10_001).fill('x') }))).toBe(
      'ENGRAM_STORE_INVALID_INPUT',
    );
  });

  it('read a stored row whose times came back as strings', () => {
    expect(conflictLink(open)).toEqual({
      olderId: 'o',
      newerId: 'n',
      state: 'open',
      reason: 'number',
      createdAt: 5,
      resolvedAt: null,
    });
  });

  it('resolve by keeping the newer side by default, or one side named, or dismiss', () => {
    expect(validateResolveArgs('a', 'o', 'n', { outcome: 'supersede' }).keepId).toBe('n');
    expect(validateResolveArgs('a', 'o', 'n', { outcome: 'supersede', keepId: 'o' }).keepId).toBe('o');
    expect(validateResolveArgs('a', 'o', 'n', { outcome: 'dismiss', actor: 'user' })).toEqual({
      keepId: null,
      who: { actor: 'user', reason: null },
    });
    expect(codeOf(() => validateResolveArgs('a', 'o', 'n', { outcome: 'supersede', keepId: 'x' }))).toBe(
      'ENGRAM_STORE_INVALID_INPUT',
    );
    expect(
      codeOf(() => validateResolveArgs('a', 'o', 'n', { outcome: 'merge' } as unknown as ConflictResolution)),
    ).toBe('ENGRAM_STORE_INVALID_INPUT');
  });

  it('settle an open link only: the other side of the kept one is retired', () => {
    expect(settleConflict(open, 'n', 7)).toMatchObject({ state: 'resolved', retireId: 'o' });
    expect(settleConflict(open, null, 7)).toMatchObject({
      state: 'dismissed',
      retireId: null,
      settled: { state: 'dismissed', resolvedAt: 7 },
    });
    expect(codeOf(() => settleConflict(undefined, null, 7))).toBe('ENGRAM_STORE_NOT_FOUND');
    expect(codeOf(() => settleConflict({ ...open, state: 'resolved' }, null, 7))).toBe(
      'ENGRAM_STORE_REVISION_CONFLICT',
    );
  });

  it('record the settlement on both sides, the state as the reason when none was given', () => {
    const entries = conflictResolvedEntries(
      'a',
      'o',
      'n',
      { actor: 'caller', reason: null },
      'dismissed',
      7,
      { older: null, newer: 'bob' },
    );
    expect(entries.map((e) => [e.memoryId, e.relatedId, e.reason, e.userId])).toEqual([
      ['o', 'n', 'dismissed', null],
      ['n', 'o', 'dismissed', 'bob'],
    ]);
  });
});
