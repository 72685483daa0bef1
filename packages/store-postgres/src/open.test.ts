import { describe, expect, it } from 'vitest';
import { postgresFor, redactPostgresUrl } from './open.js';

describe('postgresFor', () => {
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
