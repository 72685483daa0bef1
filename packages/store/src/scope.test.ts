import { describe, expect, it } from 'vitest';
import { checkUserScope, checkWriteScope, visibleToUser } from './scope.js';

describe('the user scope rule both stores share', () => {
  it('a user sees the agent’s own rows and their own, never another user’s; no scope sees all', () => {
    expect(visibleToUser(null, 'bob')).toBe(true);
    expect(visibleToUser('bob', 'bob')).toBe(true);
    expect(visibleToUser('alice', 'bob')).toBe(false);
    expect(visibleToUser('alice', null)).toBe(true);
  });

  it('checks the scope like an agent id and refuses anything else as invalid input', () => {
    expect(checkUserScope(undefined)).toBeNull();
    expect(checkUserScope({})).toBeNull();
    expect(checkUserScope({ forUser: 'bob' })).toBe('bob');
    for (const bad of [null, 'bob', { forUser: '' }, { forUser: 7 }, { forUser: 'a\u0000b' }]) {
      expect(() => checkUserScope(bad)).toThrow(
        expect.objectContaining({ code: 'ENGRAM_STORE_INVALID_INPUT' }),
      );
    }
  });

  it('a scoped write may create the agent’s own row or the user’s, never another user’s', () => {
    expect(checkWriteScope({ forUser: 'bob' }, null, 'replacement')).toBe('bob');
    expect(checkWriteScope({ forUser: 'bob' }, 'bob', 'replacement')).toBe('bob');
    expect(checkWriteScope(undefined, 'alice', 'replacement')).toBeNull();
    expect(() => checkWriteScope({ forUser: 'bob' }, 'alice', 'replacement')).toThrow(
      expect.objectContaining({ code: 'ENGRAM_STORE_INVALID_INPUT' }),
    );
  });
});
