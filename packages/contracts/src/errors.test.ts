import { describe, expect, it } from 'vitest';
import {
  ENGRAM_ERROR_CODE_PATTERN,
  EngramError,
  engramErrorCode,
  hasEngramErrorShape,
  isEngramError,
} from './errors.js';

describe('EngramError', () => {
  it('carries the name, the code, a retryable hint (false unless given) and the cause', () => {
    const cause = new Error('inner');
    const error = new EngramError('EngramExampleError', 'ENGRAM_EXAMPLE_BUSY', 'The example is busy.', {
      cause,
      retryable: true,
    });
    expect(error).toBeInstanceOf(Error);
    expect(error).toMatchObject({
      name: 'EngramExampleError',
      code: 'ENGRAM_EXAMPLE_BUSY',
      message: 'The example is busy.',
      retryable: true,
      cause,
    });
    const plain = new EngramError('EngramExampleError', 'ENGRAM_EXAMPLE_INVALID', 'Invalid.');
    expect(plain.retryable).toBe(false);
    expect(Object.hasOwn(plain, 'cause')).toBe(false);
  });

  it('is recognised by name and code, not instanceof, so a copy of the package counts too', () => {
    const codes = ['ENGRAM_EXAMPLE_BUSY', 'ENGRAM_EXAMPLE_INVALID'] as const;
    const copy = { name: 'EngramExampleError', code: 'ENGRAM_EXAMPLE_BUSY' };
    expect(hasEngramErrorShape(copy, ['EngramExampleError'], codes)).toBe(true);
    expect(hasEngramErrorShape(copy, ['EngramExampleError'], new Set<string>(codes))).toBe(true);
    expect(hasEngramErrorShape({ ...copy, code: 'ENGRAM_OTHER_BUSY' }, ['EngramExampleError'], codes)).toBe(
      false,
    );
    expect(hasEngramErrorShape({ ...copy, name: 'Error' }, ['EngramExampleError'], codes)).toBe(false);
    expect(
      hasEngramErrorShape({ ...copy, name: 'AbortError' }, ['EngramExampleError', 'AbortError'], codes),
    ).toBe(true);
    expect(hasEngramErrorShape(null, ['EngramExampleError'], codes)).toBe(false);
    expect(hasEngramErrorShape('ENGRAM_EXAMPLE_BUSY', ['EngramExampleError'], codes)).toBe(false);
  });
});

describe('engramErrorCode', () => {
  it('reads the ENGRAM_* code of any package and nothing else, never the message', () => {
    expect(engramErrorCode(new EngramError('EngramExampleError', 'ENGRAM_EXAMPLE_BUSY', 'x'))).toBe(
      'ENGRAM_EXAMPLE_BUSY',
    );
    expect(engramErrorCode({ code: 'ENGRAM_STORE_CLOSED' })).toBe('ENGRAM_STORE_CLOSED');
    expect(
      engramErrorCode(Object.assign(new Error('ENGRAM_STORE_BUSY'), { code: 'ENOENT' })),
    ).toBeUndefined();
    expect(engramErrorCode(new Error('ENGRAM_STORE_BUSY'))).toBeUndefined();
    expect(engramErrorCode({ code: 'engram_store_busy' })).toBeUndefined();
    expect(engramErrorCode(undefined)).toBeUndefined();
    expect(ENGRAM_ERROR_CODE_PATTERN.test('ENGRAM_MEMORY_INVALID_INPUT')).toBe(true);
  });

  it('isEngramError accepts an error of any Engram package and refuses other errors', () => {
    expect(isEngramError(new EngramError('EngramExampleError', 'ENGRAM_EXAMPLE_BUSY', 'x'))).toBe(true);
    expect(isEngramError({ name: 'EngramStoreError', code: 'ENGRAM_STORE_CLOSED' })).toBe(true);
    expect(isEngramError(Object.assign(new Error('x'), { code: 'ECONNRESET' }))).toBe(false);
    expect(isEngramError({ code: 'ENGRAM_STORE_CLOSED' })).toBe(false);
  });
});
