/**
 * `openInspectorSource`: what the inspector reads, over one memory file or PostgreSQL database — the facade
 * (`createMemory`, opened for looking) and, from the composition root, the store's facts.
 */
import { existsSync, statSync } from 'node:fs';
import { createMemory } from '@engram/memory';
import { openEngine, probeStore } from '@engram/memory/compose';
import { EngramInspectorError } from './errors.js';
import type { InspectorAbout, InspectorSource } from './source.js';

/** Options of {@link openInspectorSource}. */
export interface OpenInspectorOptions {
  /** A SQLite file (it must exist) or a `postgres://` URL. */
  readonly db: string;
  /** The SQLCipher key of an encrypted file. */
  readonly encryptionKey?: string | Uint8Array;
}

/** An opened source and how to close it. */
export interface OpenedInspectorSource {
  readonly source: InspectorSource;
  close(): Promise<void>;
}

function sizeOf(path: string): number | null {
  let total = 0;
  for (const file of [path, `${path}-wal`]) {
    try {
      total += statSync(file).size;
    } catch {
      // The WAL may not exist; a missing main file was refused at open.
    }
  }
  return total === 0 ? null : total;
}

/** The store's facts that do not change while it is open, read once through a read-only handle. */
async function storeFacts(
  db: string,
  key: { readonly encryptionKey?: string | Uint8Array },
): Promise<Pick<InspectorAbout, 'schemaVersion' | 'embedder' | 'vectorIndex'>> {
  let engine: Awaited<ReturnType<typeof openEngine>>;
  try {
    engine = await openEngine({ path: db, access: 'read', ...key });
  } catch {
    // The page says "unknown" rather than refusing to open over a store it can read through the facade.
    return { schemaVersion: null, embedder: null, vectorIndex: null };
  }
  try {
    const store = engine.store;
    return {
      schemaVersion: store.info.schemaVersion,
      embedder: engine.embedderLabel,
      vectorIndex: 'vectorIndex' in store ? store.vectorIndex.quantization : 'pgvector',
    };
  } finally {
    await engine.close();
  }
}

/**
 * Opens `db` for the inspector: the facade for every read and correction, opened for looking
 * (`backgroundDrain: false`: nothing is embedded or changed until the user confirms a correction), and the
 * store's schema, embedder and vector index, read once through a read-only handle that is closed at once.
 * Refuses a SQLite path that does not exist (`ENGRAM_INSPECTOR_NOT_FOUND`): the inspector never creates a file.
 */
export async function openInspectorSource(options: OpenInspectorOptions): Promise<OpenedInspectorSource> {
  const probe = await probeStore(options.db);
  if (probe.kind === 'sqlite' && (!existsSync(options.db) || probe.fresh)) {
    throw new EngramInspectorError('ENGRAM_INSPECTOR_NOT_FOUND', 'no memory file at the given path');
  }
  const key = options.encryptionKey === undefined ? {} : { encryptionKey: options.encryptionKey };
  const memory = await createMemory({ path: options.db, backgroundDrain: false, ...key });
  let facts: Awaited<ReturnType<typeof storeFacts>>;
  try {
    facts = await storeFacts(options.db, key);
  } catch (error) {
    await memory.close();
    throw error;
  }
  const about = (): InspectorAbout => ({
    kind: probe.kind,
    sizeBytes: probe.kind === 'sqlite' ? sizeOf(options.db) : null,
    ...facts,
  });
  return {
    source: { memory, about },
    async close() {
      await memory.close();
    },
  };
}
