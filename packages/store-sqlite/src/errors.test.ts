import {
  ENGRAM_STORE_ERROR_CODES,
  EngramStoreError,
  isEngramStoreError,
  storeErrorCode,
} from '@engram/store/port-kit';
import { describe, expect, it } from 'vitest';
import { classifySqliteError } from './sqlite/classify.js';

function driverError(code: string, message = 'secret user text in driver message'): Error {
  return Object.assign(new Error(message), { name: 'SqliteError', code });
}

describe('EngramStoreError', () => {
  it('carries code, name, cause and a retryable flag defaulting by code', () => {
    const cause = new Error('x');
    const err = new EngramStoreError('ENGRAM_STORE_NOT_FOUND', 'missing', { cause });
    expect(err.name).toBe('EngramStoreError');
    expect(err.code).toBe('ENGRAM_STORE_NOT_FOUND');
    expect(err.cause).toBe(cause);
    expect(err.retryable).toBe(false);
    expect(new EngramStoreError('ENGRAM_STORE_BUSY', 'busy').retryable).toBe(true);
    expect(err).toBeInstanceOf(Error);
  });

  it('the guard checks name and a known code, not instanceof', () => {
    expect(isEngramStoreError(new EngramStoreError('ENGRAM_STORE_IO', 'io'))).toBe(true);
    expect(isEngramStoreError({ name: 'EngramStoreError', code: 'ENGRAM_STORE_IO' })).toBe(true);
    expect(isEngramStoreError({ name: 'EngramStoreError', code: 'SQLITE_BUSY' })).toBe(false);
    expect(isEngramStoreError(new Error('x'))).toBe(false);
    expect(isEngramStoreError(null)).toBe(false);
    expect(storeErrorCode(new EngramStoreError('ENGRAM_STORE_CLOSED', 'c'))).toBe('ENGRAM_STORE_CLOSED');
    expect(storeErrorCode('nope')).toBeUndefined();
  });

  it('codes are unique SCREAMING_SNAKE with the package prefix', () => {
    expect(new Set(ENGRAM_STORE_ERROR_CODES).size).toBe(ENGRAM_STORE_ERROR_CODES.length);
    for (const code of ENGRAM_STORE_ERROR_CODES) expect(code).toMatch(/^ENGRAM_STORE_[A-Z_]+$/);
  });
});

describe('classifySqliteError', () => {
  const cases: [string, string, boolean][] = [
    ['SQLITE_BUSY', 'ENGRAM_STORE_BUSY', true],
    ['SQLITE_BUSY_SNAPSHOT', 'ENGRAM_STORE_BUSY', true],
    ['SQLITE_LOCKED', 'ENGRAM_STORE_BUSY', true],
    ['SQLITE_CONSTRAINT_UNIQUE', 'ENGRAM_STORE_CONFLICT', false],
    ['SQLITE_CONSTRAINT_PRIMARYKEY', 'ENGRAM_STORE_CONFLICT', false],
    ['SQLITE_CONSTRAINT_CHECK', 'ENGRAM_STORE_CONFLICT', false],
    ['SQLITE_CORRUPT', 'ENGRAM_STORE_CORRUPT', false],
    ['SQLITE_NOTADB', 'ENGRAM_STORE_CORRUPT', false],
    ['SQLITE_IOERR_SHORT_READ', 'ENGRAM_STORE_IO', false],
    ['SQLITE_FULL', 'ENGRAM_STORE_IO', false],
    ['SQLITE_CANTOPEN', 'ENGRAM_STORE_IO', false],
    ['SQLITE_READONLY', 'ENGRAM_STORE_IO', false],
    ['SQLITE_ERROR', 'ENGRAM_STORE_UNKNOWN', false],
    ['SQLITE_CORRUPT_VTAB', 'ENGRAM_STORE_FTS_UNAVAILABLE', false],
  ];
  for (const [driver, code, retryable] of cases) {
    it(`${driver} → ${code}`, () => {
      const cause = driverError(driver);
      const err = classifySqliteError(cause, 'insertMemory');
      expect(err.code).toBe(code);
      expect(err.retryable).toBe(retryable);
      expect(err.cause).toBe(cause);
      // Upper layers never see the raw code or the driver's message text.
      expect(err.message).not.toContain('SQLITE');
      expect(err.message).not.toContain('secret');
      expect(err.message).toContain('insertMemory');
    });
  }

  it('a missing full-text table or FTS5 module is FTS_UNAVAILABLE; any other missing table is not', () => {
    const missing = (message: string): string =>
      classifySqliteError(Object.assign(new Error(message), { code: 'SQLITE_ERROR' }), 'searchLexical').code;
    expect(missing('no such table: lexical_postings')).toBe('ENGRAM_STORE_FTS_UNAVAILABLE');
    expect(missing('no such table: main.memories_fts_words')).toBe('ENGRAM_STORE_FTS_UNAVAILABLE');
    expect(missing('no such module: fts5')).toBe('ENGRAM_STORE_FTS_UNAVAILABLE');
    expect(missing('no such table: memories')).toBe('ENGRAM_STORE_UNKNOWN');
  });

  it('says what an I/O failure is: a full disk, a read-only file or directory, WAL files it cannot create', () => {
    const message = (code: string): string => classifySqliteError(driverError(code), 'open').message;
    expect(message('SQLITE_FULL')).toContain('the disk is full');
    expect(message('SQLITE_IOERR_WRITE')).toContain('I/O error');
    expect(message('SQLITE_READONLY')).toContain('read-only');
    expect(message('SQLITE_READONLY_DIRECTORY')).toContain('-wal and -shm files');
    for (const code of ['SQLITE_CANTOPEN', 'SQLITE_READONLY_CANTINIT', 'SQLITE_READONLY_DIRECTORY']) {
      expect(message(code)).toContain('WAL mode');
      expect(message(code)).toContain('read-only directory');
    }
    // A damaged file's error says how to recover it.
    expect(message('SQLITE_CORRUPT')).toContain('.recover');
    expect(message('SQLITE_CORRUPT')).toContain('backup');
  });

  it('passes store errors through and maps unknown values to UNKNOWN', () => {
    const own = new EngramStoreError('ENGRAM_STORE_NOT_FOUND', 'x');
    expect(classifySqliteError(own)).toBe(own);
    expect(classifySqliteError('boom').code).toBe('ENGRAM_STORE_UNKNOWN');
    expect(classifySqliteError(new TypeError('The database connection is not open')).code).toBe(
      'ENGRAM_STORE_CLOSED',
    );
  });
});
