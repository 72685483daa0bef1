import { describe, expect, it } from 'vitest';
import { checkTag, isValidTag, MAX_TAG_VALUE_LENGTH } from './tag.js';

describe('tag rule', () => {
  it('accepts prefix:value tags, the value keeping later colons', () => {
    expect(checkTag('file:src/a.ts')).toBeNull();
    expect(checkTag('topic:db:migrations')).toBeNull();
    expect(checkTag(`a${'b'.repeat(31)}:x`)).toBeNull();
    expect(isValidTag('hash:0f')).toBe(true);
  });

  it('names what is wrong with a refused tag', () => {
    expect(checkTag(7)).toBe('notString');
    expect(checkTag('noprefix')).toBe('missingPrefix');
    expect(checkTag(':value')).toBe('missingPrefix');
    expect(checkTag('File:x')).toBe('malformedPrefix');
    expect(checkTag('1abc:x')).toBe('malformedPrefix');
    expect(checkTag(`a${'b'.repeat(32)}:x`)).toBe('malformedPrefix');
    expect(checkTag('file:')).toBe('emptyValue');
    expect(checkTag('file:a\u0000b')).toBe('controlCharacter');
    expect(checkTag('file:a\u001b')).toBe('controlCharacter');
    expect(checkTag('file:\uD800')).toBe('loneSurrogate');
  });

  it('caps the value at 512 code units', () => {
    expect(MAX_TAG_VALUE_LENGTH).toBe(512);
    expect(checkTag(`file:${'x'.repeat(512)}`)).toBeNull();
    expect(checkTag(`file:${'x'.repeat(513)}`)).toBe('valueTooLong');
  });
});
