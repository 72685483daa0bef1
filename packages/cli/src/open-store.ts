/**
 * Opening the SQLite store behind a CLI database (created with its directory for a write), and the
 * embedder-mismatch error the CLI reports for a file or a PostgreSQL database.
 */
import { mkdirSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import type { DiagnosticsCollector } from '@engram/diagnostics';
import type { VectorIndexProgress } from '@engram/store';
import { createSqliteMemoryStore, type SqliteMemoryStore } from '@engram/store-sqlite';
import type { EmbedderProfile } from './embedder-choice.js';
import { EngramDemoError, engramErrorCode } from './errors.js';

/** True when a file exists at the path and is not empty (an empty file is a new database to SQLite). */
export function hasDatabase(path: string): boolean {
  try {
    return statSync(path).size > 0;
  } catch {
    return false;
  }
}

/**
 * Opens a SQLite store (a new file is bound to `embedding`; an existing one keeps its own). A writable open
 * finishes a quantised vector index build an interrupted process left, reporting to `onIndexProgress`.
 */
export function openStore(
  path: string,
  embedding: EmbedderProfile | undefined,
  collector: DiagnosticsCollector,
  key: string | Uint8Array | undefined,
  access: 'read' | 'write',
  onIndexProgress?: (progress: VectorIndexProgress) => void,
): SqliteMemoryStore {
  if (access === 'write') {
    try {
      mkdirSync(dirname(path), { recursive: true });
    } catch (error) {
      throw new EngramDemoError('ENGRAM_DEMO_STORE_FAILED', 'cannot create the database directory', {
        cause: error,
      });
    }
  }
  try {
    return createSqliteMemoryStore({
      path,
      access,
      // Omitted for an existing file: the store adopts the profile the file records.
      ...(embedding === undefined
        ? {}
        : { embedding: { id: embedding.id, dimensions: embedding.dimensions } }),
      observer: collector.storeObserver,
      ...(key === undefined ? {} : { encryption: { key } }),
      ...(onIndexProgress === undefined ? {} : { onIndexProgress }),
    });
  } catch (error) {
    // Another process created the file with another embedder between the check and the open.
    throw embedderMismatch(error, embedding);
  }
}

/**
 * The CLI's error for a database bound to another embedder (another process bound it between the check and the
 * open); any other error as is. A vector index mismatch is another code (`ENGRAM_STORE_VECTOR_INDEX_MISMATCH`) and
 * passes as the store reports it: the CLI opens without a quantization setting, so it adopts the file's (also
 * after another process's `resetVectorIndex`) and never meets one itself.
 */
export function embedderMismatch(error: unknown, embedding: EmbedderProfile | undefined): unknown {
  if (engramErrorCode(error) !== 'ENGRAM_STORE_FINGERPRINT_MISMATCH') return error;
  return new EngramDemoError(
    'ENGRAM_DEMO_EMBEDDER_MISMATCH',
    `the database was indexed with another embedder than ${embedding?.id ?? 'the one it records'}; use another --db or re-index it`,
    { cause: error },
  );
}
