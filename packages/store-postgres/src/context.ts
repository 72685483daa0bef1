/**
 * The connection context every slice of the PostgreSQL store works over: the pool, the observer, the clock
 * and id factory, the validation limits, the BM25 settings, the embedder binding and the claim lease. One
 * context per open store; the slices are functions of it. Every statement goes through `q`, which counts it
 * for the observer; every write runs in `tx` (one transaction on one pooled connection).
 */
import type { StatementKind } from '@engram/contracts';
import type { ForgetMode } from '@engram/store';
import { EngramStoreError } from '@engram/store';
import { AdapterContext, type AdapterContextInit, type Bm25Settings } from '@engram/store/port-kit';
import type pg from 'pg';
import { classifyPgError } from './errors.js';

/** Something that runs a query: the pool, or the client of a transaction. */
export type Queryable = Pick<pg.PoolClient, 'query'>;

/** What a context is built from. */
export interface PgContextInit extends AdapterContextInit {
  readonly pool: pg.Pool;
  readonly ownsPool: boolean;
  readonly bm25: Bm25Settings;
  readonly claimLeaseMs: number | null;
  readonly workerId: string;
  readonly vectorSearch: { readonly efSearch: number; readonly exact: boolean };
  readonly analyzeAfterRows: number | null;
  readonly forgetMode: ForgetMode;
}

/** Operations that write nothing: allowed after a failed integrity check. */
const READ_OPERATIONS: ReadonlySet<string> = new Set([
  'checkIntegrity',
  'countEmbeddingBacklog',
  'findByContentHash',
  'getCursor',
  'getMemory',
  'getSkill',
  'history',
  'listAgents',
  'listConflicts',
  'listEventsAfter',
  'listFailedEmbeddings',
  'listMemories',
  'listSessionSummaries',
  'listSessions',
  'listSkills',
  'readEvents',
  'revalidate',
  'searchLexical',
  'searchVector',
]);

/** The tables whose planner statistics the store refreshes after bulk writes. */
const ANALYZED_TABLES = 'memories, memory_chunks, lexical_docs, lexical_postings';

/** The growth (a fraction of the rows counted at the last refresh) after which statistics are due again. */
const ANALYZE_GROWTH = 0.5;

/** The shared state of one open store. */
export class PgContext extends AdapterContext {
  readonly pool: pg.Pool;
  readonly ownsPool: boolean;
  readonly bm25: Bm25Settings;
  /** Lease length of claimed pending embeddings, or null: listing claims nothing (one drain at a time). */
  readonly claimLeaseMs: number | null;
  /** This store's claim owner (a random id per open store). */
  readonly workerId: string;
  readonly vectorSearch: { readonly efSearch: number; readonly exact: boolean };
  /** Refresh planner statistics after this many rows written by this store (null: leave it to autovacuum). */
  readonly analyzeAfterRows: number | null;
  /** What forgetting does: `erase` (rows removed, tombstones kept) or `keep` (rows archived, marked forgotten). */
  readonly forgetMode: ForgetMode;
  #writtenSinceAnalyze = 0;
  /** The rows of `memories` the last refresh counted. */
  #rowsAtAnalyze = 0;
  /** Which BM25 implementation the lexical arm runs (`statistics-tables`: the store's own postings). */
  lexicalEngine: 'statistics-tables' = 'statistics-tables';

  constructor(init: PgContextInit) {
    super(init);
    this.pool = init.pool;
    this.ownsPool = init.ownsPool;
    this.bm25 = init.bm25;
    this.claimLeaseMs = init.claimLeaseMs;
    this.workerId = init.workerId;
    this.vectorSearch = init.vectorSearch;
    this.analyzeAfterRows = init.analyzeAfterRows;
    this.forgetMode = init.forgetMode;
  }

  /**
   * Counts rows this store inserted and refreshes the planner statistics of the store's tables (`ANALYZE`,
   * which blocks no reader or writer) when they are due: past `analyzeAfterRows`, and past half the rows the
   * last refresh counted, so statistics follow the tables as they grow while a bulk load refreshes them a
   * logarithmic number of times, not every `analyzeAfterRows` rows. Without fresh statistics PostgreSQL plans
   * the BM25 joins for an empty table: a bulk load followed at once by searches (an import, an evaluation, a
   * server without autovacuum such as PGlite) would run them 10–30 times slower. A failure here never fails
   * the write.
   */
  async noteInserted(rows: number): Promise<void> {
    if (this.analyzeAfterRows === null) return;
    this.#writtenSinceAnalyze += rows;
    if (this.#writtenSinceAnalyze < Math.max(this.analyzeAfterRows, this.#rowsAtAnalyze * ANALYZE_GROWTH)) {
      return;
    }
    this.#writtenSinceAnalyze = 0;
    const tables = this.profile === null ? ANALYZED_TABLES : `${ANALYZED_TABLES}, memory_vectors`;
    try {
      await this.run(this.pool, 'meta', `ANALYZE ${tables}`);
      const counted = await this.q<{ n: number }>(
        this.pool,
        'meta',
        "SELECT reltuples AS n FROM pg_class WHERE oid = 'memories'::regclass",
      );
      this.#rowsAtAnalyze = Math.max(0, Number(counted[0]?.n ?? 0));
    } catch {
      // Statistics are an optimisation: the write has committed.
    }
  }

  /** Runs one counted statement and returns its rows. */
  async q<T>(db: Queryable, kind: StatementKind, sql: string, params: readonly unknown[] = []): Promise<T[]> {
    this.count(kind);
    const result = await db.query(sql, params as unknown[]);
    return result.rows as T[];
  }

  /** Runs one counted statement and returns how many rows it changed. */
  async run(
    db: Queryable,
    kind: StatementKind,
    sql: string,
    params: readonly unknown[] = [],
  ): Promise<number> {
    this.count(kind);
    const result = await db.query(sql, params as unknown[]);
    return result.rowCount ?? 0;
  }

  /** Runs `fn` in one transaction on one pooled connection; rolls back when it throws. */
  async tx<T>(fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    let broken = false;
    try {
      await this.run(client, 'meta', 'BEGIN');
      try {
        const result = await fn(client);
        await this.run(client, 'meta', 'COMMIT');
        return result;
      } catch (err) {
        try {
          await this.run(client, 'meta', 'ROLLBACK');
        } catch {
          broken = true;
        }
        throw err;
      }
    } finally {
      client.release(broken);
    }
  }

  /**
   * Runs a public operation: closed check; after a failed integrity check every write is refused
   * (`ENGRAM_STORE_CORRUPT`), as in the SQLite store; then every non-store error is classified.
   */
  async op<T>(operation: string, fn: () => Promise<T>): Promise<T> {
    if (this.closed) {
      throw new EngramStoreError('ENGRAM_STORE_CLOSED', `store ${operation} failed: the store is closed`);
    }
    // Rows no reader can use (`badRows`) fail the check too, but leave writes allowed: they can be forgotten.
    if (
      this.integrity.state === 'failed' &&
      this.integrity.badRows === undefined &&
      !READ_OPERATIONS.has(operation)
    ) {
      throw new EngramStoreError(
        'ENGRAM_STORE_CORRUPT',
        `store ${operation} refused: the database failed its integrity check, and writing could damage it further; export what can be read, restore into a fresh database, then checkIntegrity again`,
      );
    }
    try {
      return await fn();
    } catch (err) {
      throw classifyPgError(err, operation);
    }
  }
}
