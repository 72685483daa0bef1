import { describe, expect, it } from 'vitest';
import {
  checkAgentId,
  checkMemoryId,
  isValidAgentId,
  MAX_AGENT_ID_LENGTH,
  MAX_MEMORY_ID_LENGTH,
} from './agent-id.js';

describe('agent id rule', () => {
  it('accepts an id of exactly the limit and refuses one code unit more', () => {
    expect(MAX_AGENT_ID_LENGTH).toBe(256);
    expect(checkAgentId('a'.repeat(256))).toBeNull();
    expect(checkAgentId('a'.repeat(257))).toBe('tooLong');
    expect(checkAgentId('a'.repeat(300))).toBe('tooLong');
  });

  it('refuses a NUL byte, other control characters and DEL', () => {
    expect(checkAgentId('agent\u0000one')).toBe('controlCharacter');
    expect(checkAgentId('agent\u001b[2J')).toBe('controlCharacter');
    expect(checkAgentId('agent\u007f')).toBe('controlCharacter');
  });

  it('refuses a lone surrogate but accepts a surrogate pair', () => {
    expect(checkAgentId('agent\uD800')).toBe('loneSurrogate');
    expect(checkAgentId('\uDC00agent')).toBe('loneSurrogate');
    expect(checkAgentId('agent-\u{1F600}')).toBeNull();
  });

  it('refuses blanks and non-strings, accepts ordinary ids', () => {
    expect(checkAgentId('')).toBe('blank');
    expect(checkAgentId('   ')).toBe('blank');
    expect(checkAgentId(42)).toBe('notString');
    expect(checkAgentId(undefined)).toBe('notString');
    expect(isValidAgentId('coder')).toBe(true);
    expect(isValidAgentId('team/coder:7 ünïcode 代理')).toBe(true);
    expect(isValidAgentId('a'.repeat(300))).toBe(false);
  });

  it('applies the same rule to memory ids with their own limit', () => {
    expect(MAX_MEMORY_ID_LENGTH).toBe(128);
    expect(checkMemoryId('m'.repeat(128))).toBeNull();
    expect(checkMemoryId('m'.repeat(129))).toBe('tooLong');
    expect(checkMemoryId('mem\u0000')).toBe('controlCharacter');
    expect(checkMemoryId('mem_01J.x:y')).toBeNull();
  });
});
