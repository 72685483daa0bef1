/** The facade's pure rules: which resent messages are new, what input is refused, which embedder a file gets. */
import { DETERMINISTIC_PROFILE } from '@engram/embedder-deterministic';
import { USE_LITE_PROFILE } from '@engram/embedder-use';
import { describe, expect, it } from 'vitest';
import { isEngramMemoryError } from './errors.js';
import { agentOf, checkMessages, checkSession, cutMessages, overlapWithTail } from './items.js';
import { chooseEngineEmbedder } from './open-store.js';
import type { ChatMessage } from './types.js';

const m = (role: ChatMessage['role'], content: string): ChatMessage => ({ role, content });

describe('overlapWithTail', () => {
  const log = [m('user', 'a'), m('assistant', 'b'), m('user', 'c')];

  it('skips the part of a resent history that the log already ends with', () => {
    expect(
      overlapWithTail(log, [m('user', 'a'), m('assistant', 'b'), m('user', 'c'), m('assistant', 'd')]),
    ).toBe(3);
    expect(overlapWithTail(log, [m('user', 'c'), m('assistant', 'd')])).toBe(1);
  });

  it('keeps messages that only look alike (another role, another order) and everything after an empty log', () => {
    expect(overlapWithTail(log, [m('assistant', 'c')])).toBe(0);
    expect(overlapWithTail(log, [m('user', 'a'), m('user', 'c')])).toBe(0);
    expect(overlapWithTail([], [m('user', 'a')])).toBe(0);
  });

  it('matches a tool call by its type and id (its arguments may be spelt differently), never a message by a call', () => {
    const logged = [
      m('user', 'a'),
      { role: 'assistant', content: '{"q": 1}', type: 'tool_call', toolName: 't', id: 'c1' },
    ];
    const call: ChatMessage = {
      role: 'assistant',
      content: '{"q":1}',
      type: 'tool_call',
      toolName: 't',
      id: 'c1',
    };
    expect(overlapWithTail(logged, [m('user', 'a'), call, m('assistant', 'done')])).toBe(2);
    expect(overlapWithTail(logged, [m('user', 'a'), { ...call, id: 'c2' }])).toBe(0);
    expect(overlapWithTail([m('assistant', '{"q":1}')], [call])).toBe(0);
  });
});

describe('cutMessages', () => {
  it('cuts long content at a code point boundary and repairs lone surrogates, leaving the rest as given', () => {
    const long = m('tool', `${'a'.repeat(9)}😀tail`);
    const [cut, same, repaired] = cutMessages([long, m('user', 'short'), m('user', 'x\uD800y')], 10);
    expect(cut?.content).toBe('a'.repeat(9));
    expect(same?.content).toBe('short');
    expect(repaired?.content).toBe('x\uFFFDy');
    expect(cutMessages([long], undefined)[0]).toBe(long);
    expect(() => cutMessages([long], 0)).toThrow(/maxContentChars/);
  });
});

describe('input checks', () => {
  it('refuses malformed messages, sessions and agents with a typed error naming the field, not the content', () => {
    const cases: [() => unknown, string][] = [
      [() => checkMessages([]), 'messages is empty'],
      [() => checkMessages([{ role: 'user' }]), 'messages[0].content must be a string'],
      [() => checkMessages([m('user', 'ok'), { role: 'bot', content: 'secret text' }]), 'messages[1].role'],
      [() => checkSession(''), 'sessionId'],
      [() => checkSession('a\u0000b'), 'sessionId'],
      [() => agentOf({ agentId: '' }, 'default'), 'agentId is invalid'],
      [() => checkMessages([{ ...m('user', 'secret text'), type: 'note' }]), 'messages[0].type'],
      [
        () => checkMessages([{ role: 'user', content: 'secret text', type: 'tool_call', toolName: 't' }]),
        'messages[0].role must be assistant',
      ],
      [
        () => checkMessages([{ role: 'assistant', content: 'secret text', type: 'tool_call' }]),
        'messages[0].toolName is missing',
      ],
      [() => checkMessages([{ ...m('user', 'secret text'), toolName: 't' }]), 'messages[0].toolName'],
      [() => checkMessages([{ ...m('user', 'x'), id: `secret text${'x'.repeat(300)}` }]), 'messages[0].id'],
    ];
    for (const [call, message] of cases) {
      let error: unknown;
      try {
        call();
      } catch (e) {
        error = e;
      }
      expect(isEngramMemoryError(error)).toBe(true);
      expect((error as Error).message).toContain(message);
      expect((error as Error).message).not.toContain('secret text');
    }
    expect(checkSession(undefined)).toBe('default');
    expect(agentOf({}, 'fallback')).toBe('fallback');
  });
});

describe('chooseEngineEmbedder', () => {
  it('gives a new file the one asked for, USE-lite by default', () => {
    expect(chooseEngineEmbedder('new', undefined)).toBe('use');
    expect(chooseEngineEmbedder('new', 'deterministic')).toBe('deterministic');
  });

  it('keeps the embedder a file records, and refuses another one or an unknown one', () => {
    expect(chooseEngineEmbedder(DETERMINISTIC_PROFILE, undefined)).toBe('deterministic');
    expect(chooseEngineEmbedder(USE_LITE_PROFILE, 'use')).toBe('use');
    const codeOf = (call: () => unknown): unknown => {
      try {
        call();
        return null;
      } catch (e) {
        return (e as { code?: unknown }).code;
      }
    };
    expect(codeOf(() => chooseEngineEmbedder(DETERMINISTIC_PROFILE, 'use'))).toBe(
      'ENGRAM_MEMORY_EMBEDDER_MISMATCH',
    );
    expect(codeOf(() => chooseEngineEmbedder({ id: 'remote-x', dimensions: 64 }, undefined))).toBe(
      'ENGRAM_MEMORY_EMBEDDER_UNAVAILABLE',
    );
    expect(codeOf(() => chooseEngineEmbedder(null, undefined))).toBe('ENGRAM_MEMORY_EMBEDDER_UNAVAILABLE');
    const custom = { profile: { id: 'remote-x', dimensions: 64 }, embed: async () => [] };
    expect(chooseEngineEmbedder({ id: 'remote-x', dimensions: 64 }, custom)).toBe(custom);
  });
});
