import { describe, expect, it } from 'vitest';
import { ARCHIVE_POINTER_PATTERN, formatArchivePointer, parseArchivePointer } from './pointer.js';

describe('archive pointers', () => {
  it('parses a range and a single event', () => {
    expect(parseArchivePointer('session/s-1#3-9')).toEqual({ sessionId: 's-1', from: 3, to: 9 });
    expect(parseArchivePointer('session/s-1#4')).toEqual({ sessionId: 's-1', from: 4, to: 4 });
  });

  it('round-trips what it formats', () => {
    const pointer = { sessionId: 'chat:2024/05', from: 1, to: 200 };
    expect(parseArchivePointer(formatArchivePointer(pointer))).toEqual(pointer);
  });

  it('refuses empty or reversed ranges, seq 0 and malformed text', () => {
    expect(parseArchivePointer('session/s#0-3')).toBeNull();
    expect(parseArchivePointer('session/s#5-3')).toBeNull();
    expect(parseArchivePointer('session/s#')).toBeNull();
    expect(parseArchivePointer('session/a b#1')).toBeNull();
    expect(parseArchivePointer('session/a#b#1')).toBeNull();
    expect(parseArchivePointer('memory/s#1')).toBeNull();
    expect(parseArchivePointer(`session/${'s'.repeat(201)}#1`)).toBeNull();
    expect(parseArchivePointer(`session/s#${'1'.repeat(10)}`)).toBeNull();
  });

  it('exposes the grammar for schema validation', () => {
    expect(ARCHIVE_POINTER_PATTERN.test(`session/${'s'.repeat(200)}#1-2`)).toBe(true);
  });
});
