import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDeterministicEmbedder, DETERMINISTIC_PROFILE } from '@engram/embedder-deterministic';
import type { StoreObserver } from '@engram/store';
import { createSqliteMemoryStore, type SqliteMemoryStore } from '@engram/store-sqlite';

/** A real SQLite store on a temporary file, bound to the deterministic embedder's profile. */
export interface TempStore {
  readonly store: SqliteMemoryStore;
  /** The database file (for a second, raw connection in integrity tests). */
  readonly path: string;
  readonly embedder: ReturnType<typeof createDeterministicEmbedder>;
  close(): void;
}

/** Opens a real store in a fresh temporary directory (native tiers only). */
export function openTempStore(
  options: {
    readonly observer?: StoreObserver;
    readonly now?: () => number;
    readonly withProfile?: boolean;
  } = {},
): TempStore {
  const dir = mkdtempSync(join(tmpdir(), 'engram-maint-'));
  const path = join(dir, 'memory.db');
  const store = createSqliteMemoryStore({
    path,
    embedding: options.withProfile === false ? null : DETERMINISTIC_PROFILE,
    ...(options.observer === undefined ? {} : { observer: options.observer }),
    ...(options.now === undefined ? {} : { now: options.now }),
  });
  return {
    store,
    path,
    embedder: createDeterministicEmbedder(),
    close(): void {
      store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
