/**
 * Identifying a file before anything is written to it: the file's presence on disk, then — on the open
 * connection, with plain reads only — whether it is a new (empty) database, an Engram store (by its
 * application id, or for older files by the `schema_version` row of its meta table) and of which schema
 * version. Anything else is refused with a typed error, so a foreign, damaged or too-new file stays
 * byte-identical.
 */
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { EngramStoreError } from '@engram/store/port-kit';
import type { SqliteDatabase } from '../native.js';
import { ENGRAM_APPLICATION_ID, SCHEMA_VERSION } from '../schema.js';
import { RECOVERY_HINT } from './classify.js';

/** What is on disk at a path: nothing, an empty file, or a file with content. */
export type FileState = 'missing' | 'empty' | 'present';

/** The state of the file at `path` (a directory or an unreadable entry counts as present: the open reports it). */
export function fileState(path: string): FileState {
  try {
    return statSync(path).size === 0 ? 'empty' : 'present';
  } catch (err) {
    return (err as { code?: unknown }).code === 'ENOENT' ? 'missing' : 'present';
  }
}

/** What an opened database holds. */
export type Identity =
  | { readonly kind: 'new' }
  | { readonly kind: 'engram'; readonly version: number; readonly stamped: boolean };

/** `ENGRAM_STORE_NOT_ENGRAM` with a fixed reason. */
export function notEngram(reason: string): EngramStoreError {
  return new EngramStoreError(
    'ENGRAM_STORE_NOT_ENGRAM',
    `not an Engram store: ${reason}; nothing was changed`,
  );
}

function damaged(reason: string): EngramStoreError {
  return new EngramStoreError(
    'ENGRAM_STORE_CORRUPT',
    `the Engram store is damaged: ${reason}; ${RECOVERY_HINT}`,
  );
}

/**
 * Identifies the database of `db` with plain reads (no lock beyond a read, nothing written). A file with
 * another application's id, or with schema objects but no Engram meta table, is `ENGRAM_STORE_NOT_ENGRAM`; an
 * Engram file whose recorded schema version is missing, 0 or malformed is `ENGRAM_STORE_CORRUPT`; a newer one
 * is `ENGRAM_STORE_SCHEMA_TOO_NEW`. A file that is not a database at all fails in the driver
 * (`SQLITE_NOTADB`), which the caller classifies.
 */
export function identify(db: SqliteDatabase): Identity {
  const appId = (db.prepare('PRAGMA application_id').get() as { application_id: number }).application_id;
  const stamped = appId === ENGRAM_APPLICATION_ID;
  if (appId !== 0 && !stamped) return refuse(notEngram('the file belongs to another application'));
  const objects = (
    db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'").get() as {
      n: number;
    }
  ).n;
  if (objects === 0) return { kind: 'new' };
  const hasMeta =
    db.prepare("SELECT 1 AS x FROM sqlite_master WHERE type = 'table' AND name = 'meta'").get() !== undefined;
  if (!hasMeta) {
    return refuse(stamped ? damaged('its meta table is missing') : notEngram('it has no Engram meta table'));
  }
  let row: { value: unknown } | undefined;
  try {
    row = db.prepare("SELECT value FROM meta WHERE key = 'schema_version'").get() as
      | { value: unknown }
      | undefined;
  } catch (err) {
    // Another application's table named `meta`, with other columns.
    if (!stamped && (err as { code?: unknown }).code === 'SQLITE_ERROR') {
      return refuse(notEngram('its meta table is not an Engram one'));
    }
    throw err;
  }
  if (row === undefined) {
    return refuse(
      stamped ? damaged('its schema version is missing') : notEngram('it records no schema version'),
    );
  }
  const text = typeof row.value === 'string' ? row.value : String(row.value);
  const version = /^[0-9]{1,9}$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(version) || version < 1) {
    return refuse(
      damaged(
        version === 0
          ? 'its recorded schema version is 0, which no Engram writes'
          : 'its recorded schema version is malformed',
      ),
    );
  }
  if (version > SCHEMA_VERSION) {
    return refuse(
      new EngramStoreError(
        'ENGRAM_STORE_SCHEMA_TOO_NEW',
        `the database schema version ${version} is newer than this store supports (${SCHEMA_VERSION}); nothing was changed`,
      ),
    );
  }
  return { kind: 'engram', version, stamped };
}

function refuse(err: EngramStoreError): never {
  throw err;
}

const SQLITE_MAGIC = 'SQLite format 3\u0000';

/**
 * The application id in the header of a plain SQLite file, read with the file system (no SQLite connection, so
 * not even a `-wal` or `-shm` file appears); null when the file is not a plain SQLite file or cannot be read.
 */
export function headerApplicationId(path: string): number | null {
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    const header = Buffer.alloc(72);
    if (readSync(fd, header, 0, 72, 0) < 72) return null;
    if (header.subarray(0, 16).toString('latin1') !== SQLITE_MAGIC) return null;
    return header.readUInt32BE(68);
  } catch {
    return null;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** Refuses a plain SQLite file whose header names another application, before any connection is opened. */
export function refuseForeignHeader(path: string): void {
  const appId = headerApplicationId(path);
  if (appId !== null && appId !== 0 && appId !== ENGRAM_APPLICATION_ID) {
    throw notEngram('the file belongs to another application');
  }
}
