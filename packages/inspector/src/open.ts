/**
 * `openInspectorSource`: what the inspector reads, over one memory file or PostgreSQL database — the facade
 * (`createMemory`) and, from the composition root, the agent's open conflict links and the store's facts.
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

/**
 * Opens `db` for the inspector: the facade for every read and correction, and a second handle from the
 * composition root for what the facade does not list (open conflict links, schema, vector index). Refuses a
 * SQLite path that does not exist (`ENGRAM_INSPECTOR_NOT_FOUND`): the inspector never creates a file.
 */
export async function openInspectorSource(options: OpenInspectorOptions): Promise<OpenedInspectorSource> {
  const probe = await probeStore(options.db);
  if (probe.kind === 'sqlite' && (!existsSync(options.db) || probe.fresh)) {
    throw new EngramInspectorError('ENGRAM_INSPECTOR_NOT_FOUND', 'no memory file at the given path');
  }
  const key = options.encryptionKey === undefined ? {} : { encryptionKey: options.encryptionKey };
  const memory = await createMemory({ path: options.db, ...key });
  let engine: Awaited<ReturnType<typeof openEngine>>;
  try {
    engine = await openEngine({ path: options.db, ...key });
  } catch (error) {
    await memory.close();
    throw error;
  }
  const store = engine.store;
  const about = (): InspectorAbout => {
    const sqlite = probe.kind === 'sqlite' && 'vectorIndex' in store;
    return {
      kind: probe.kind,
      sizeBytes: probe.kind === 'sqlite' ? sizeOf(options.db) : null,
      schemaVersion: store.info.schemaVersion,
      embedder: engine.embedderLabel,
      vectorIndex: sqlite ? store.vectorIndex.quantization : 'pgvector',
    };
  };
  const source: InspectorSource = {
    memory,
    openConflicts: async (agentId) =>
      (await store.listConflicts(agentId, { state: 'open', limit: 500 })).map((link) => ({
        olderId: link.olderId,
        newerId: link.newerId,
        reason: link.reason,
        createdAt: link.createdAt,
      })),
    about,
  };
  return {
    source,
    async close() {
      await memory.close();
      await engine.close();
    },
  };
}
