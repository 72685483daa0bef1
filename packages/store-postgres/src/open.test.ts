import { beforeAll, describe, expect, it } from 'vitest';
import { postgresFor, redactPostgresUrl } from './open.js';

/**
 * Loading the PostgreSQL store graph (pg and every slice, through vitest's transform) may take longer than a
 * test's default 10 s on a busy machine.
 */
const LOAD_GRAPH_TIMEOUT_MS = 120_000;

describe('postgresFor', () => {
  // `postgresFor` imports the store package for any string starting with "postgres": it is loaded once, here,
  // under its own timeout, so each test below only checks what the function decides.
  beforeAll(async () => {
    await import('./index.js');
  }, LOAD_GRAPH_TIMEOUT_MS);

  it('a file path, even one named postgres…, is no PostgreSQL database', async () => {
    expect(await postgresFor('/tmp/memory.db')).toBeNull();
    expect(await postgresFor('postgres-notes.db')).toBeNull();
  });

  it('a postgres:// or postgresql:// URL gives the store package', async () => {
    expect(typeof (await postgresFor('postgres://u@h/db'))?.createPostgresMemoryStore).toBe('function');
    expect(typeof (await postgresFor('postgresql://u@h/db'))?.readPostgresBinding).toBe('function');
  });
});

describe('redactPostgresUrl', () => {
  it('masks the password and keeps the rest of the URL', () => {
    expect(redactPostgresUrl('postgres://ops:s3cret@db.internal:5432/engram?sslmode=require')).toBe(
      'postgres://ops:***@db.internal:5432/engram?sslmode=require',
    );
    expect(redactPostgresUrl('postgresql://ops@db/engram')).toBe('postgresql://ops@db/engram');
  });

  it('a file path is returned as is; an unparsable URL shows only its scheme', () => {
    expect(redactPostgresUrl('/var/lib/engram/memory.db')).toBe('/var/lib/engram/memory.db');
    expect(redactPostgresUrl('postgres://ops:s3cret@[bad/db')).toBe('postgres://***');
  });
});
