import type { Memory } from '@engram/memory';

/**
 * The facade calls the inspector makes: reads (`list`, `get`, `history`, `search`, `messages`, `sessions`,
 * `context`, `conflicts`, `embeddingFailures`, `health`) and the corrections a user confirms on the page
 * (`update`, `delete`, recorded with actor `inspector` and the reason given). A `Memory` from `createMemory`
 * is one.
 */
export type InspectorMemory = Pick<
  Memory,
  | 'list'
  | 'get'
  | 'history'
  | 'search'
  | 'update'
  | 'delete'
  | 'messages'
  | 'sessions'
  | 'context'
  | 'conflicts'
  | 'embeddingFailures'
  | 'health'
>;

/** What the backlog page says about the store beside its counts. Null where the store does not tell. */
export interface InspectorAbout {
  readonly kind: 'sqlite' | 'postgres';
  /** Bytes of the file and its WAL (SQLite), else null. */
  readonly sizeBytes: number | null;
  readonly schemaVersion: number | null;
  /** The embedder's profile, e.g. `deterministic-256-v1 (256 d)`. */
  readonly embedder: string | null;
  /** The vector index's quantisation (`none`, `int8`, `bit`) or `pgvector`. */
  readonly vectorIndex: string | null;
}

/**
 * Where the inspector reads: the facade, and facts about the store the facade does not give.
 * `openInspectorSource` builds both over one memory file.
 */
export interface InspectorSource {
  readonly memory: InspectorMemory;
  /** Facts about the store for the backlog page. */
  readonly about?: () => Promise<InspectorAbout> | InspectorAbout;
}
