/** The configuration of a `PostgresMemoryStore` and its validation (bad input changes nothing). */
import type { StoreObserver } from '@engram/contracts';
import type { EmbeddingProfile, ForgetMode } from '@engram/store';
import { invalidInput, MAX_CONTENT_LENGTH_CAP } from '@engram/store/port-kit';
import type pg from 'pg';

/** Configuration of a `PostgresMemoryStore`. */
export interface PostgresMemoryStoreConfig {
  /** `postgres://user:password@host:port/db?sslmode=…`; or give `pool`. */
  readonly connectionString?: string;
  /** An existing `pg` pool (the store never ends it); or give `connectionString`. */
  readonly pool?: pg.Pool;
  /** Connections of the pool the store creates (default 10). */
  readonly poolSize?: number;
  /** TLS options for the pool the store creates (see the README: `sslmode` in the URL works too). */
  readonly ssl?: pg.PoolConfig['ssl'];
  /** The embedder profile (as in the SQLite store: omitted adopts the recorded one, another one is a mismatch). */
  readonly embedding?: EmbeddingProfile | null;
  /** Maximum content length in UTF-16 code units, default 65,536. */
  readonly maxContentLength?: number;
  /** The clock (epoch milliseconds), `Date.now` by default. Leases use the server clock. */
  readonly now?: () => number;
  /** Statement counts and the vector warm-up; no-op by default. */
  readonly observer?: StoreObserver;
  /** Ids of new memories without a caller id; a time-ordered UUID (version 7, `timeOrderedId`) by default. */
  readonly idFactory?: () => string;
  /** BM25 settings (k1 0..10, default 0.9; b 0..1, default 0.4), as in the SQLite store. */
  readonly lexical?: { readonly k1?: number; readonly b?: number };
  /**
   * Many workers: listing pending embeddings claims the rows for this long (ms, 100..3,600,000); other workers
   * skip them until the lease runs out. Omitted: no claims (one drain at a time).
   */
  readonly claimLeaseMs?: number;
  /** HNSW search: `efSearch` (default 100); `exact` scans without the index (for measuring recall). */
  readonly vectorSearch?: { readonly efSearch?: number; readonly exact?: boolean };
  /**
   * Refresh the planner statistics of the store's tables after this many inserted rows (default 1,000; `null`
   * leaves it to autovacuum). See the README.
   */
  readonly analyzeAfterRows?: number | null;
  /**
   * What forgetting a memory (`forgetMemory`, `deleteAll`) does, as in the SQLite store. `erase` (default): the
   * row, its derived rows and the text kept in its history are removed; a tombstone stays. `keep`: the row stays
   * archived, marked forgotten.
   */
  readonly forget?: ForgetMode;
}

export function checkConfig(config: PostgresMemoryStoreConfig): void {
  if (typeof config !== 'object' || config === null) throw invalidInput('store configuration');
  const hasUrl =
    typeof config.connectionString === 'string' && /^postgres(ql)?:\/\//.test(config.connectionString);
  if (hasUrl === (config.pool !== undefined))
    throw invalidInput('store configuration: give connectionString or pool');
  const intIn = (v: unknown, lo: number, hi: number): boolean =>
    v === undefined || (typeof v === 'number' && Number.isSafeInteger(v) && v >= lo && v <= hi);
  const numIn = (v: unknown, lo: number, hi: number): boolean =>
    v === undefined || (typeof v === 'number' && Number.isFinite(v) && v >= lo && v <= hi);
  if (!intIn(config.poolSize, 1, 1000)) throw invalidInput('store configuration: poolSize');
  if (!intIn(config.maxContentLength, 1, MAX_CONTENT_LENGTH_CAP))
    throw invalidInput('store configuration: maxContentLength');
  if (!intIn(config.claimLeaseMs, 100, 3_600_000)) throw invalidInput('store configuration: claimLeaseMs');
  if (!numIn(config.lexical?.k1, 0, 10) || !numIn(config.lexical?.b, 0, 1)) {
    throw invalidInput('store configuration: lexical');
  }
  if (config.analyzeAfterRows !== null && !intIn(config.analyzeAfterRows, 1, 100_000_000)) {
    throw invalidInput('store configuration: analyzeAfterRows');
  }
  if (config.forget !== undefined && config.forget !== 'erase' && config.forget !== 'keep') {
    throw invalidInput('store configuration: forget');
  }
  if (!intIn(config.vectorSearch?.efSearch, 1, 1000)) throw invalidInput('store configuration: vectorSearch');
  // The SQLite store's quantised vector index has no counterpart here (HNSW, halfvec above 2,000 dimensions):
  // the option is refused rather than ignored.
  if ((config as { readonly vectorIndex?: unknown }).vectorIndex !== undefined) {
    throw invalidInput(
      'store configuration: vectorIndex is a SQLite store option (not applicable to PostgreSQL)',
    );
  }
  const p = config.embedding;
  if (
    p !== undefined &&
    p !== null &&
    !(
      typeof p.id === 'string' &&
      p.id.length > 0 &&
      p.id.length <= 128 &&
      !/[\u0000-\u001f]/.test(p.id) &&
      Number.isSafeInteger(p.dimensions) &&
      p.dimensions >= 1 &&
      p.dimensions <= 8192
    )
  ) {
    throw invalidInput('embedding profile');
  }
}
