/**
 * `PostgresMemoryStore`: the PostgreSQL + pgvector adapter of the `MemoryStore` port, over a `pg` pool. A thin
 * facade (the port's `MemoryStoreFacade`): each slice is a module of functions over the connection context
 * (`context.ts`), named in the slice table below. It behaves as the SQLite store does (the shared conformance
 * suite runs against both); the differences are listed in the package README and tested.
 */

import { randomUUID } from 'node:crypto';
import { type EmbeddingProfile, EngramStoreError, type MemoryStore } from '@engram/store';
import {
  DEFAULT_BM25,
  DEFAULT_MAX_CONTENT_LENGTH,
  invalidInput,
  MemoryStoreFacade,
  type StoreSlices,
  timeOrderedId,
} from '@engram/store/port-kit';
import pg from 'pg';
import * as backlog from './backlog.js';
import { checkConfig, type PostgresMemoryStoreConfig } from './config.js';

export type { PostgresMemoryStoreConfig } from './config.js';

import { PgContext } from './context.js';
import * as embedding from './embedding.js';
import { classifyPgError } from './errors.js';
import * as events from './events.js';
import * as facts from './facts.js';
import * as healthSlice from './health.js';
import { history } from './history.js';
import { checkIntegrity } from './integrity.js';
import * as lease from './lease.js';
import * as lifecycle from './lifecycle.js';
import * as beats from './process-beats.js';
import * as read from './read.js';
import { migrate } from './schema.js';
import { searchLexical } from './search-lexical.js';
import { searchVector } from './search-vector.js';
import * as skills from './skills.js';
import { exportRecords } from './transfer-export.js';
import { importRecords } from './transfer-import.js';
import * as write from './write.js';

/** What a store is bound to, as recorded in its meta table. */
export interface PostgresMemoryStoreInfo {
  readonly schemaVersion: number;
  readonly fingerprint: string;
  /** The BM25 implementation the lexical arm runs. */
  readonly lexicalEngine: 'statistics-tables';
}

/** The functions serving the port's methods, each over the connection context. */
const PG_SLICES: StoreSlices<PgContext> = {
  ...read,
  ...write,
  ...lifecycle,
  ...facts,
  ...embedding,
  ...healthSlice,
  ...lease,
  ...beats,
  ...events,
  ...skills,
  listFailedEmbeddings: backlog.listFailedEmbeddings,
  listSessionSummaries: backlog.listSessionSummaries,
  searchLexical,
  searchVector,
  history,
  checkIntegrity,
  exportRecords,
  importRecords,
};

/**
 * The PostgreSQL memory store. Open it with `createPostgresMemoryStore`; close it with `close()`.
 * Contract: every method is async and rejects with `EngramStoreError` only, except `health`, which never rejects.
 * The port's methods are the facade's (`MemoryStoreFacade`), each served by `PG_SLICES`.
 */
export class PostgresMemoryStore extends MemoryStoreFacade<PgContext> implements MemoryStore {
  readonly #ctx: PgContext;

  /** Use `createPostgresMemoryStore` (it runs the migrations). */
  constructor(ctx: PgContext) {
    super(ctx, PG_SLICES);
    this.#ctx = ctx;
  }

  get info(): PostgresMemoryStoreInfo {
    return {
      schemaVersion: this.#ctx.schemaVersion,
      fingerprint: this.#ctx.fingerprint,
      lexicalEngine: this.#ctx.lexicalEngine,
    };
  }

  /** Ends the pool the store created (a pool given in the config stays open); idempotent. */
  async close(): Promise<void> {
    if (this.#ctx.closed) return;
    this.#ctx.closed = true;
    if (this.#ctx.ownsPool) await this.#ctx.pool.end();
  }
}

/**
 * Opens a PostgreSQL memory store: connects, migrates under the advisory lock and binds the embedder profile.
 * Rejects with `EngramStoreError` (unreachable server → `ENGRAM_STORE_IO`, schema too new, fingerprint mismatch …).
 */
export async function createPostgresMemoryStore(
  config: PostgresMemoryStoreConfig,
): Promise<PostgresMemoryStore> {
  checkConfig(config);
  const ownsPool = config.pool === undefined;
  const pool =
    config.pool ??
    new pg.Pool({
      connectionString: config.connectionString,
      max: config.poolSize ?? 10,
      ...(config.ssl === undefined ? {} : { ssl: config.ssl }),
    });
  // An idle client's error (the server went away) must not crash the process; the next query reports it.
  if (ownsPool) pool.on('error', () => {});
  const ctx = new PgContext({
    pool,
    ownsPool,
    observer: config.observer ?? {},
    now: config.now ?? Date.now,
    idFactory: config.idFactory ?? timeOrderedId,
    limits: { maxContentLength: config.maxContentLength ?? DEFAULT_MAX_CONTENT_LENGTH },
    bm25: { k1: config.lexical?.k1 ?? DEFAULT_BM25.k1, b: config.lexical?.b ?? DEFAULT_BM25.b },
    claimLeaseMs: config.claimLeaseMs ?? null,
    workerId: randomUUID(),
    vectorSearch: {
      efSearch: config.vectorSearch?.efSearch ?? 100,
      exact: config.vectorSearch?.exact ?? false,
    },
    analyzeAfterRows: config.analyzeAfterRows === undefined ? 1000 : config.analyzeAfterRows,
    forgetMode: config.forget ?? 'erase',
  });
  try {
    const result = await migrate(ctx, config.embedding);
    ctx.schemaVersion = result.schemaVersion;
    ctx.bindProfile(result.profile, result.fingerprint);
    return new PostgresMemoryStore(ctx);
  } catch (err) {
    if (ownsPool) await pool.end().catch(() => {});
    throw err instanceof EngramStoreError ? err : classifyPgError(err, 'open');
  }
}

/** True for a `postgres://` or `postgresql://` URL (what `--db` and `--store` accept besides a file path). */
export function isPostgresUrl(value: string): boolean {
  return /^postgres(ql)?:\/\//.test(value);
}

/**
 * What a database records without migrating it: `'new'` when it holds no Engram schema yet, else the embedder
 * profile it is bound to (null: none). A composition root reads it to pick the embedder, as it reads a SQLite
 * file's fingerprint. Rejects with `EngramStoreError` (an unreachable server is `ENGRAM_STORE_IO`).
 */
export async function readPostgresBinding(
  connectionString: string,
): Promise<EmbeddingProfile | null | 'new'> {
  if (typeof connectionString !== 'string' || !isPostgresUrl(connectionString)) {
    throw invalidInput('connection string');
  }
  const client = new pg.Client({ connectionString });
  client.on('error', () => {});
  try {
    await client.connect();
    const meta = await client.query<{ t: string | null }>("SELECT to_regclass('engram_meta')::text AS t");
    if (meta.rows[0]?.t === null || meta.rows[0]?.t === undefined) return 'new';
    const fp = await client.query<{ value: string }>(
      "SELECT value FROM engram_meta WHERE key = 'embedding_fingerprint'",
    );
    const value = fp.rows[0]?.value;
    if (value === undefined) return 'new';
    if (value === 'none') return null;
    const at = value.lastIndexOf(':');
    const dimensions = Number(value.slice(at + 1));
    if (at <= 0 || !Number.isSafeInteger(dimensions)) {
      throw new EngramStoreError('ENGRAM_STORE_CORRUPT', 'the recorded embedder fingerprint is malformed');
    }
    return { id: value.slice(0, at), dimensions };
  } catch (err) {
    throw err instanceof EngramStoreError ? err : classifyPgError(err, 'readBinding');
  } finally {
    await client.end().catch(() => {});
  }
}
