/**
 * The PostgreSQL scenario of the benchmark: the same rows and queries on Engram's PostgreSQL store, on the raw
 * SQL statements of the same server (a bare table with a `tsvector` GIN index and a pgvector HNSW index, one
 * multi-row insert per batch, a `ts_rank` full-text query and a filtered k-NN), and on Engram's SQLite store in
 * the same run. Ratios are Engram-on-PostgreSQL's figure divided by the other's (ingest: higher is better;
 * latency: lower is better). The database must be a scratch one: the scenario drops its tables first.
 */
import { createDeterministicEmbedder } from '@engram/embedder-deterministic';
import { createRetriever } from '@engram/retrieval';
import type { MemoryStore, NewMemory } from '@engram/store';
import { createPostgresMemoryStore } from '@engram/store-postgres';
import { createSqliteMemoryStore } from '@engram/store-sqlite';
import pg from 'pg';
import { type BenchQuery, benchQueries, percentile, rowText } from './workload.js';

/** How the PostgreSQL scenario is run. */
export interface PostgresScenarioConfig {
  readonly url: string;
  readonly agents: number;
  readonly rowsPerAgent: number;
  readonly queries: number;
  readonly batchSize: number;
  /**
   * Bulk load: both HNSW indexes are built once after the rows are in (as PostgreSQL's docs advise for a bulk
   * load) instead of row by row; the ingest figures then include the index builds.
   */
  readonly bulk?: boolean;
  readonly log: (line: string) => void;
}

/** The PostgreSQL scenario's figures. */
export interface BenchPostgresReport {
  readonly agents: number;
  readonly rows: number;
  readonly ingest: {
    readonly rowsPerSec: number;
    readonly rawRowsPerSec: number;
    readonly sqliteRowsPerSec: number;
    readonly ratioToRaw: number;
    readonly ratioToSqlite: number;
    /** Whether the HNSW indexes were built after the load (`--postgres-bulk`), and how long each build took. */
    readonly bulk: boolean;
    readonly indexBuildMs?: number;
    readonly rawIndexBuildMs?: number;
  };
  readonly query: {
    readonly p50Ms: number;
    readonly p95Ms: number;
    readonly rawP50Ms: number;
    readonly sqliteP50Ms: number;
    readonly ratioToRaw: number;
    readonly ratioToSqlite: number;
    readonly recallAt5: number;
    readonly sqliteRecallAt5: number;
    readonly queries: number;
  };
}

const NOW = Date.UTC(2025, 5, 1);
const CANDIDATE_BUDGET = 128;
const WARMUP_QUERIES = 10;

const elapsedMs = (start: bigint): number => Number(process.hrtime.bigint() - start) / 1e6;
const agentId = (a: number): string => `agent-${String(a).padStart(3, '0')}`;
const literal = (v: Float32Array): string => `[${Array.from(v).join(',')}]`;

/** Runs the PostgreSQL scenario (see the module comment). */
export async function runPostgresScenario(config: PostgresScenarioConfig): Promise<BenchPostgresReport> {
  const { log } = config;
  const embedder = createDeterministicEmbedder();
  const dims = embedder.profile.dimensions;
  const admin = new pg.Client({ connectionString: config.url });
  await admin.connect();
  await admin.query(
    'DROP SCHEMA IF EXISTS public CASCADE; CREATE SCHEMA public; CREATE EXTENSION IF NOT EXISTS vector;',
  );
  await admin.query(`CREATE TABLE raw_rows (agent text NOT NULL, id bigint PRIMARY KEY, content text NOT NULL,
    tsv tsvector NOT NULL, embedding vector(${dims}) NOT NULL)`);
  await admin.query('CREATE INDEX raw_rows_tsv ON raw_rows USING gin (tsv)');
  const rawIndex = 'CREATE INDEX raw_rows_hnsw ON raw_rows USING hnsw (embedding vector_cosine_ops)';
  const bulk = config.bulk === true;
  if (!bulk) await admin.query(rawIndex);
  const profile = { id: embedder.profile.id, dimensions: dims };
  const open = () =>
    createPostgresMemoryStore({ connectionString: config.url, embedding: profile, now: () => NOW });
  let store = await open();
  // The store creates its HNSW index when it opens (if it is missing): dropped now, it is built at the reopen.
  if (bulk) await admin.query('DROP INDEX IF EXISTS memory_vectors_hnsw');
  const sqlite = createSqliteMemoryStore({ path: ':memory:', embedding: profile, now: () => NOW });
  try {
    const total = config.agents * config.rowsPerAgent;
    let engramMs = 0;
    let rawMs = 0;
    let sqliteMs = 0;
    for (let a = 0; a < config.agents; a += 1) {
      for (let start = 0; start < config.rowsPerAgent; start += config.batchSize) {
        const end = Math.min(start + config.batchSize, config.rowsPerAgent);
        const rows: NewMemory[] = [];
        for (let j = start; j < end; j += 1) {
          const index = a * config.rowsPerAgent + j;
          const text = rowText(index);
          rows.push({
            id: `r${index}`,
            agentId: agentId(a),
            kind: 'event',
            content: text,
            vector: embedder.embedSync(text),
          });
        }
        let t = process.hrtime.bigint();
        await store.insertMemories(rows);
        engramMs += elapsedMs(t);
        t = process.hrtime.bigint();
        await admin.query(
          `INSERT INTO raw_rows SELECT a, i, c, to_tsvector('english', c), e::vector
           FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[]) AS u(a, i, c, e)`,
          [
            rows.map((r) => r.agentId),
            rows.map((r) => Number((r.id ?? 'r0').slice(1))),
            rows.map((r) => r.content),
            rows.map((r) => literal(r.vector as Float32Array)),
          ],
        );
        rawMs += elapsedMs(t);
        t = process.hrtime.bigint();
        await sqlite.insertMemories(rows);
        sqliteMs += elapsedMs(t);
      }
      log(`[postgres] ingest ${(a + 1) * config.rowsPerAgent}/${total} rows`);
    }
    let indexBuildMs: number | undefined;
    let rawIndexBuildMs: number | undefined;
    if (bulk) {
      let t = process.hrtime.bigint();
      await store.close();
      store = await open();
      indexBuildMs = elapsedMs(t);
      t = process.hrtime.bigint();
      await admin.query(rawIndex);
      rawIndexBuildMs = elapsedMs(t);
      engramMs += indexBuildMs;
      rawMs += rawIndexBuildMs;
      log(
        `[postgres] HNSW builds: Engram ${(indexBuildMs / 1000).toFixed(0)} s, raw ${(rawIndexBuildMs / 1000).toFixed(0)} s`,
      );
    }
    const queries: BenchQuery[] = [];
    const perAgent = Math.ceil(config.queries / config.agents);
    for (let a = 0; a < config.agents && queries.length < config.queries; a += 1) {
      const count = Math.min(perAgent, config.queries - queries.length);
      queries.push(...benchQueries(a * config.rowsPerAgent, config.rowsPerAgent, count, a + 1));
    }
    const agentOf = (q: BenchQuery): string => agentId(Math.floor(q.target / config.rowsPerAgent));
    const retrieverOf = (s: MemoryStore) =>
      createRetriever({
        store: s,
        embedder,
        now: () => NOW,
        candidateBudget: CANDIDATE_BUDGET,
        trackAccess: false,
      });
    const onPg = retrieverOf(store);
    const onSqlite = retrieverOf(sqlite);
    const timed = async (run: () => Promise<string[]>): Promise<{ ms: number; ranked: string[] }> => {
      const t = process.hrtime.bigint();
      const ranked = await run();
      return { ms: elapsedMs(t), ranked };
    };
    const engram = (r: typeof onPg, q: BenchQuery) =>
      timed(async () => (await r.search(agentOf(q), q.text, { limit: 10 })).results.map((x) => x.record.id));
    const raw = (q: BenchQuery) =>
      timed(async () => {
        const agent = agentOf(q);
        await admin.query(
          `SELECT id, ts_rank(tsv, query) AS score FROM raw_rows, plainto_tsquery('english', $1) query
           WHERE agent = $2 AND tsv @@ query ORDER BY score DESC LIMIT ${CANDIDATE_BUDGET}`,
          [q.text, agent],
        );
        await admin.query('BEGIN');
        await admin.query("SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true)");
        await admin.query(
          `SELECT id FROM raw_rows WHERE agent = $2 ORDER BY embedding <=> $1::vector LIMIT ${CANDIDATE_BUDGET}`,
          [literal(embedder.embedSync(q.text)), agent],
        );
        await admin.query('COMMIT');
        return [];
      });
    for (const q of queries.slice(0, WARMUP_QUERIES)) {
      await engram(onPg, q);
      await raw(q);
      await engram(onSqlite, q);
    }
    const pgMs: number[] = [];
    const rawMsList: number[] = [];
    const sqliteMsList: number[] = [];
    let pgHits = 0;
    let sqliteHits = 0;
    for (const [i, q] of queries.entries()) {
      const e = await engram(onPg, q);
      pgMs.push(e.ms);
      if (e.ranked.slice(0, 5).includes(`r${q.target}`)) pgHits += 1;
      rawMsList.push((await raw(q)).ms);
      const s = await engram(onSqlite, q);
      sqliteMsList.push(s.ms);
      if (s.ranked.slice(0, 5).includes(`r${q.target}`)) sqliteHits += 1;
      if ((i + 1) % 100 === 0 || i + 1 === queries.length)
        log(`[postgres] queries ${i + 1}/${queries.length}`);
    }
    const rowsPerSec = total / (engramMs / 1000);
    const rawRowsPerSec = total / (rawMs / 1000);
    const sqliteRowsPerSec = total / (sqliteMs / 1000);
    const p50 = percentile(pgMs, 0.5);
    const rawP50 = percentile(rawMsList, 0.5);
    const sqliteP50 = percentile(sqliteMsList, 0.5);
    return {
      agents: config.agents,
      rows: total,
      ingest: {
        rowsPerSec,
        rawRowsPerSec,
        sqliteRowsPerSec,
        ratioToRaw: rowsPerSec / rawRowsPerSec,
        ratioToSqlite: rowsPerSec / sqliteRowsPerSec,
        bulk,
        ...(indexBuildMs === undefined ? {} : { indexBuildMs }),
        ...(rawIndexBuildMs === undefined ? {} : { rawIndexBuildMs }),
      },
      query: {
        p50Ms: p50,
        p95Ms: percentile(pgMs, 0.95),
        rawP50Ms: rawP50,
        sqliteP50Ms: sqliteP50,
        ratioToRaw: p50 / rawP50,
        ratioToSqlite: p50 / sqliteP50,
        recallAt5: pgHits / Math.max(1, queries.length),
        sqliteRecallAt5: sqliteHits / Math.max(1, queries.length),
        queries: queries.length,
      },
    };
  } finally {
    await store.close();
    sqlite.close();
    await admin.end();
  }
}
