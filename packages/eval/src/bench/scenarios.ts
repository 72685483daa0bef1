import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { RETRIEVAL_STAGES, type RetrievalExecution, type RetrievalStage } from '@engram/contracts';
import { createDiagnosticsCollector } from '@engram/diagnostics';
import { createDeterministicEmbedder } from '@engram/embedder-deterministic';
import { createRetriever, extractKeywords } from '@engram/retrieval';
import { createSqliteMemoryStore, DEFAULT_MMAP_SIZE } from '@engram/store-sqlite';
import { openDatabase, planLexicalQuery, quoteFts, type SqliteDatabase } from '@engram/store-sqlite/raw';
import {
  agentId,
  elapsedMs,
  memoryNow,
  BENCH_NOW as NOW,
  openRaw,
  openRawRow,
  rawAgentToken,
  runIngest,
} from './ingest.js';
import { runOramaPhase, type TimedSearch } from './orama.js';
import { measureQuantised, type QuantQuery } from './quant.js';
import type { BenchScenarioReport } from './report.js';
import { measureSmallAgents } from './small-agents.js';
import { type BenchQuery, percentile, scenarioQueries, widenVector } from './workload.js';

/** How one scenario is run. */
export interface ScenarioConfig {
  readonly name: string;
  readonly agents: number;
  readonly rowsPerAgent: number;
  /** Hybrid queries timed on Engram and on the raw statements. */
  readonly queries: number;
  /**
   * Queries run on Orama and timed again on Engram beside it (of the indexed agents' queries, spread evenly over
   * them; Orama is slow to index large corpora).
   */
  readonly oramaQueries: number;
  /** Orama indexes the rows of at most this many queried agents, spread evenly (one Orama database per agent). */
  readonly oramaMaxAgents: number;
  readonly batchSize: number;
  /** Vector dimensions: 128 (the deterministic embedder's own) or a multiple, widened by `widenVector`. */
  readonly dimensions: number;
  /** Directory for the scenario's two SQLite files. */
  readonly dir: string;
  readonly log: (line: string) => void;
}

const CANDIDATE_BUDGET = 128;
const SIMILARITY_THRESHOLD = 0.1;
const WARMUP_QUERIES = 20;
/** Queries of the quantised-search figures (the exact scan runs them twice). */
const QUANT_QUERIES = 100;

/**
 * The bytes of a file SQLite reads through its memory map: the store's default `mmap_size` as SQLite clamps it to
 * its compile-time maximum (`SQLITE_MAX_MMAP_SIZE`, 2 GiB in better-sqlite3's build). Pages past it are read with
 * a `read` call each, so a vector scan over them costs more CPU than one over mapped pages.
 */
function mappedLimit(db: SqliteDatabase): number {
  db.exec(`PRAGMA mmap_size = ${DEFAULT_MMAP_SIZE}`);
  const row = db.prepare('PRAGMA mmap_size').get() as { mmap_size: number };
  return row.mmap_size;
}

/** The logical size of a database in bytes (its pages, the WAL's committed pages included). */
function databaseBytes(db: SqliteDatabase): number {
  const row = db
    .prepare('SELECT p.page_count * s.page_size AS bytes FROM pragma_page_count() p, pragma_page_size() s')
    .get() as { bytes: number };
  return row.bytes;
}

function recallAt5(ranked: readonly string[], target: string): number {
  return ranked.slice(0, 5).includes(target) ? 1 : 0;
}

/** Runs one scenario: ingest (Engram and raw, batch by batch), timed queries (Engram, raw, Orama). */
export async function runScenario(config: ScenarioConfig): Promise<BenchScenarioReport> {
  const { log } = config;
  const base = createDeterministicEmbedder();
  const dimensions = config.dimensions;
  const vectorOf = (text: string): Float32Array => widenVector(base.embedSync(text), dimensions);
  const embedder = {
    profile: { id: dimensions === 128 ? base.profile.id : `${base.profile.id}-wide`, dimensions },
    embed: (texts: readonly string[]): Promise<Float32Array[]> => Promise.resolve(texts.map(vectorOf)),
  };
  const totalRows = config.agents * config.rowsPerAgent;
  const engramPath = join(config.dir, `${config.name}-engram.sqlite`);
  // The quantised builds of the wide scenarios (minutes at a million vectors) log their progress by tenths.
  let tenthLogged = -1;
  const store = createSqliteMemoryStore({
    path: engramPath,
    embedding: { id: embedder.profile.id, dimensions },
    now: () => NOW,
    onIndexProgress: ({ quantization, step, done, total }) => {
      const tenth = step === 0 ? -1 : Math.floor((done / Math.max(1, total)) * 10);
      if (step !== 0 && tenth <= tenthLogged) return;
      tenthLogged = tenth;
      log(`[${config.name}]  quantised index ${quantization}: ${done}/${total} vectors (step ${step})`);
    },
  });
  const rawPath = join(config.dir, `${config.name}-raw.sqlite`);
  const raw = openRaw(rawPath, dimensions);
  let rawOpen = true;
  const rawRowPath = join(config.dir, `${config.name}-rawrow.sqlite`);
  const rawRow = openRawRow(rawRowPath, dimensions);
  let rawRowOpen = true;
  try {
    // ---- Ingest: each batch is generated and embedded once, then inserted into all three, each timed alone.
    const ingest = await runIngest({ config, store, raw, rawRow, vectorOf });
    const { engramMs, rawMs, rawRowMs, engramIngestCpuMs, rawIngestCpuMs, rawRowIngestCpuMs } = ingest;
    // The raw + row floor is an ingest figure only: its file goes now, so the queries' page cache holds the two
    // files they read (at 1M rows of 1,536-d the three files are ≈20 GB, more than the cache of a 24 GiB machine).
    rawRow.close();
    rawRowOpen = false;
    for (const suffix of ['', '-wal', '-shm']) rmSync(`${rawRowPath}${suffix}`, { force: true });
    const afterIngest = memoryNow();
    const engramRowsPerSec = totalRows / (engramMs / 1000);
    const rawRowsPerSec = totalRows / (rawMs / 1000);
    const rawRowRowsPerSec = totalRows / (rawRowMs / 1000);
    log(
      `[${config.name}] ingest: engram ${engramRowsPerSec.toFixed(0)} rows/s, raw ${rawRowsPerSec.toFixed(0)} rows/s, raw + row ${rawRowRowsPerSec.toFixed(0)} rows/s`,
    );

    // ---- Queries: the same texts for every system, each query's agent is the target row's agent.
    const { timed: queries, warmUps } = scenarioQueries(config.agents, config.rowsPerAgent, config.queries);
    const agentOf = (q: BenchQuery): number => Math.floor(q.target / config.rowsPerAgent);

    const retriever = createRetriever({
      store,
      embedder,
      now: () => NOW,
      candidateBudget: CANDIDATE_BUDGET,
      similarityThreshold: SIMILARITY_THRESHOLD,
      // The raw baseline only reads; the deferred access write would land inside the next query's timing.
      trackAccess: false,
    });
    const stageSamples = new Map<RetrievalStage, number[]>(RETRIEVAL_STAGES.map((stage) => [stage, []]));
    const cpuMs = (since: NodeJS.CpuUsage): number => {
      const used = process.cpuUsage(since);
      return (used.user + used.system) / 1000;
    };
    const engramCpuMs: number[] = [];
    const rawCpuMs: number[] = [];
    const engramOnce = async (q: BenchQuery, record: boolean): Promise<TimedSearch> => {
      const cpu = process.cpuUsage();
      const t = process.hrtime.bigint();
      const response = await retriever.search(agentId(agentOf(q)), q.text, { limit: 10 });
      const ms = elapsedMs(t);
      if (record) engramCpuMs.push(cpuMs(cpu));
      if (response.execution.outcome !== 'completed') {
        throw new Error(`benchmark query ended ${response.execution.outcome}`);
      }
      if (record) {
        for (const [stage, value] of Object.entries(response.execution.latencies)) {
          if (value !== undefined) stageSamples.get(stage as RetrievalStage)?.push(value);
        }
      }
      return { ms, ranked: response.results.map((r) => r.record.id) };
    };

    const ftsSelect = raw.prepare(
      `SELECT rowid, bm25(raw_fts, 0.0, 1.0) AS score FROM raw_fts WHERE raw_fts MATCH ? ORDER BY score LIMIT ${CANDIDATE_BUDGET}`,
    );
    const vecSelect = raw.prepare(
      `SELECT rowid, distance FROM raw_vec WHERE embedding MATCH ? AND k = ${CANDIDATE_BUDGET} AND agent_id = ?`,
    );
    const rawFtsMs: number[] = [];
    const rawVectorMs: number[] = [];
    const rawOnce = (q: BenchQuery, record: boolean): number => {
      const cpu = process.cpuUsage();
      const t = process.hrtime.bigint();
      const a = agentOf(q);
      const plan = planLexicalQuery(extractKeywords(q.text).terms, 'any');
      if (plan.wordsExpr !== null) {
        ftsSelect.all(`agent : ${quoteFts(rawAgentToken(a))} AND content : (${plan.wordsExpr})`);
      }
      const afterFts = process.hrtime.bigint();
      vecSelect.all(vectorOf(q.text), agentId(a));
      const end = process.hrtime.bigint();
      if (record) {
        rawCpuMs.push(cpuMs(cpu));
        rawFtsMs.push(Number(afterFts - t) / 1e6);
        rawVectorMs.push(Number(end - afterFts) / 1e6);
      }
      return Number(end - t) / 1e6;
    };

    // ---- Warm-up, the same for every engine: first each queried agent's warm-up query (not a timed one), so no
    // timed query is an agent's first read of its data since ingest (from disk when the page cache dropped it);
    // their times are reported apart. Then WARMUP_QUERIES of the timed queries, for the JIT.
    const coldEngramMs: number[] = [];
    const coldRawMs: number[] = [];
    for (let i = 0; i < warmUps.length; i += 1) {
      const q = warmUps[i] as BenchQuery;
      if (i % 2 === 0) {
        coldEngramMs.push((await engramOnce(q, false)).ms);
        coldRawMs.push(rawOnce(q, false));
      } else {
        coldRawMs.push(rawOnce(q, false));
        coldEngramMs.push((await engramOnce(q, false)).ms);
      }
    }
    for (const q of queries.slice(0, WARMUP_QUERIES)) {
      await engramOnce(q, false);
      rawOnce(q, false);
    }
    const engramMsList: number[] = [];
    const rawMsList: number[] = [];
    const engramRanked: (readonly string[])[] = [];
    for (let i = 0; i < queries.length; i += 1) {
      const q = queries[i] as BenchQuery;
      // Alternate the order so neither side always runs on a warmer cache.
      if (i % 2 === 0) {
        const e = await engramOnce(q, true);
        engramMsList.push(e.ms);
        engramRanked.push(e.ranked);
        rawMsList.push(rawOnce(q, true));
      } else {
        rawMsList.push(rawOnce(q, true));
        const e = await engramOnce(q, true);
        engramMsList.push(e.ms);
        engramRanked.push(e.ranked);
      }
      if ((i + 1) % 100 === 0 || i + 1 === queries.length) {
        log(`[${config.name}] queries ${i + 1}/${queries.length} (engram and raw)`);
      }
    }
    const afterQueries = memoryNow();
    const engramRecall = queries.map((q, i) => recallAt5(engramRanked[i] ?? [], `r${q.target}`));
    const p50 = percentile(engramMsList, 0.5);
    const p95 = percentile(engramMsList, 0.95);
    const rawP50 = percentile(rawMsList, 0.5);
    const rawP95 = percentile(rawMsList, 0.95);
    // The raw baseline is done once its queries are: its size is taken and its file goes now, before Orama's
    // phase, so that phase's page cache holds Engram's file and Orama's heap only (at 1M rows of 1,536-d the raw
    // file is ≈6.4 GB, and with it Engram's timed queries in that phase read from disk what Orama holds in its heap).
    const rawBytesPerRow = databaseBytes(raw) / totalRows;
    raw.close();
    rawOpen = false;
    for (const suffix of ['', '-wal', '-shm']) rmSync(`${rawPath}${suffix}`, { force: true });

    // ---- Orama: the queried agents' rows (at most oramaMaxAgents of them), timed beside Engram on the same queries.
    const orama = await runOramaPhase({
      name: config.name,
      rowsPerAgent: config.rowsPerAgent,
      dimensions,
      batchSize: config.batchSize,
      oramaQueries: config.oramaQueries,
      oramaMaxAgents: config.oramaMaxAgents,
      similarityThreshold: SIMILARITY_THRESHOLD,
      jitWarmUps: WARMUP_QUERIES,
      queries,
      warmUps,
      agentOf,
      vectorOf,
      engram: (q) => engramOnce(q, false),
      log,
    });
    const mean = (xs: readonly number[]): number => xs.reduce((s, x) => s + x, 0) / Math.max(1, xs.length);
    const sizer = openDatabase(engramPath);
    let engramBytes: number;
    let mappedBytes: number;
    try {
      engramBytes = databaseBytes(sizer);
      mappedBytes = mappedLimit(sizer);
    } finally {
      sizer.close();
    }
    // ---- Wide vectors: the vector arm alone, exact and quantised (after the size is taken: the quantised tables
    // are built and dropped here).
    const quantQueries: QuantQuery[] = queries
      .slice(0, QUANT_QUERIES)
      .map((q) => ({ agentId: agentId(agentOf(q)), vector: vectorOf(q.text) }));
    const quantised =
      dimensions > 128
        ? await measureQuantised(store, quantQueries, (line) => log(`[${config.name}]${line}`))
        : undefined;
    // ---- Many small agents at these dimensions: database bytes per row (three small files, written and removed),
    // after the quantised figures so that its writes (up to 600 MB at 1,536-d) do not disturb their page cache.
    const smallAgents = await measureSmallAgents({
      dir: config.dir,
      name: config.name,
      dimensions,
      profileId: embedder.profile.id,
      vectorOf,
    });
    log(
      `[${config.name}] small agents (${smallAgents.agents} × ${smallAgents.rowsPerAgent}): ${smallAgents.bytesPerRow.toFixed(0)} bytes/row, raw ${smallAgents.rawBytesPerRow.toFixed(0)}, raw with vec0's default chunk size ${smallAgents.rawDefaultChunkBytesPerRow.toFixed(0)}`,
    );

    return {
      agents: config.agents,
      rows: totalRows,
      dimensions,
      memory: {
        rssAfterIngestMB: afterIngest.rssMB,
        heapAfterIngestMB: afterIngest.heapMB,
        rssAfterQueriesMB: afterQueries.rssMB,
        heapAfterQueriesMB: afterQueries.heapMB,
        bytesPerRow: engramBytes / totalRows,
        rawBytesPerRow,
        mappedShare: Math.min(1, mappedBytes / Math.max(1, engramBytes)),
        smallAgents,
      },
      ingest: {
        rowsPerSec: engramRowsPerSec,
        ratioToRaw: engramRowsPerSec / rawRowsPerSec,
        rawRowsPerSec,
        rawRowRowsPerSec,
        ratioToRawRow: engramRowsPerSec / rawRowRowsPerSec,
        cpu: {
          rowsPerSec: totalRows / (engramIngestCpuMs / 1000),
          rawRowsPerSec: totalRows / (rawIngestCpuMs / 1000),
          rawRowRowsPerSec: totalRows / (rawRowIngestCpuMs / 1000),
          ratioToRaw: rawIngestCpuMs / engramIngestCpuMs,
          ratioToRawRow: rawRowIngestCpuMs / engramIngestCpuMs,
        },
        batchSize: config.batchSize,
      },
      query: {
        p50Ms: p50,
        p95Ms: p95,
        ratioToRaw: p50 / rawP50,
        p95RatioToRaw: p95 / rawP95,
        rawP50Ms: rawP50,
        rawP95Ms: rawP95,
        recallAt5: mean(engramRecall),
        queries: queries.length,
        // Stages that never ran (the rerank stage: these searches have no reranker) are left out.
        stagesP50Ms: Object.fromEntries(
          [...stageSamples]
            .filter(([, samples]) => samples.length > 0)
            .map(([stage, samples]) => [stage, percentile(samples, 0.5)]),
        ) as Record<RetrievalStage, number>,
        cpuP50Ms: percentile(engramCpuMs, 0.5),
        cpuP95Ms: percentile(engramCpuMs, 0.95),
        rawCpuP50Ms: percentile(rawCpuMs, 0.5),
        rawCpuP95Ms: percentile(rawCpuMs, 0.95),
        rawFtsP50Ms: percentile(rawFtsMs, 0.5),
        rawVectorP50Ms: percentile(rawVectorMs, 0.5),
        coldFirst: {
          queries: warmUps.length,
          p50Ms: percentile(coldEngramMs, 0.5),
          p95Ms: percentile(coldEngramMs, 0.95),
          maxMs: coldEngramMs.length === 0 ? Number.NaN : Math.max(...coldEngramMs),
          rawP50Ms: percentile(coldRawMs, 0.5),
          rawP95Ms: percentile(coldRawMs, 0.95),
          rawMaxMs: coldRawMs.length === 0 ? Number.NaN : Math.max(...coldRawMs),
        },
      },
      orama,
      ...(quantised === undefined ? {} : { quantised }),
    };
  } finally {
    store.close();
    if (rawOpen) raw.close();
    if (rawRowOpen) rawRow.close();
  }
}

/**
 * Measures the diagnostics record path: nanoseconds per `onRetrieval` over `records` calls across 64 agents,
 * as CPU time of this process (`process.cpuUsage`; what the record path costs, even on a shared machine whose
 * other processes stretch the wall clock) and as wall time.
 *
 * The method, and why: after 100,000 warm-up records (every function optimised, every ring full), `rounds`
 * rounds of `records` calls each, and the median round is reported. One round of a fraction of a second is
 * moved by whatever else the machine runs meanwhile; the median of five is not, and every round still counts
 * every record it makes. Before the rounds a full collection settles what the earlier scenarios left (with
 * `node --expose-gc`): `process.cpuUsage` counts every thread of the process, so background collector work on
 * their heap would otherwise be billed to the record path. A collection the record path itself causes still
 * lands inside the rounds (it allocates nothing once an agent's purpose has its state, so there is none).
 */
export function measureDiagnostics(
  records: number,
  rounds = 5,
): {
  readonly nsPerRecord: number;
  readonly wallNsPerRecord: number;
  readonly records: number;
} {
  const collector = createDiagnosticsCollector({ now: () => NOW });
  const executions: RetrievalExecution[] = [];
  for (let a = 0; a < 64; a += 1) {
    executions.push({
      purpose: a % 2 === 0 ? 'search' : 'recall',
      agentId: agentId(a),
      startedAt: NOW,
      latencies: {
        keyword: 0.01,
        queryEmbedding: 0.05,
        vector: 0.4,
        authoritativeRevalidation: 0.2,
        assembly: 0.03,
        total: 0.8 + a / 100,
      },
      candidates: { fts: 40, vector: 128, selected: 10 },
      outcome: 'completed',
      degradations: [],
      arms: ['lexical', 'vector'],
    });
  }
  const observer = collector.retrievalObserver;
  (globalThis as { gc?: () => void }).gc?.();
  const warm = Math.min(records, 100_000);
  for (let i = 0; i < warm; i += 1) observer.onRetrieval(executions[i & 63] as RetrievalExecution);
  const cpuNs: number[] = [];
  const wallNs: number[] = [];
  for (let round = 0; round < rounds; round += 1) {
    const cpu = process.cpuUsage();
    const t = process.hrtime.bigint();
    for (let i = 0; i < records; i += 1) observer.onRetrieval(executions[i & 63] as RetrievalExecution);
    const ns = Number(process.hrtime.bigint() - t);
    const used = process.cpuUsage(cpu);
    cpuNs.push(((used.user + used.system) * 1000) / records);
    wallNs.push(ns / records);
  }
  // A snapshot proves the records landed (and keeps the loop from being optimised away).
  if (collector.listAgents().length === 0) throw new Error('the collector recorded nothing');
  return {
    nsPerRecord: percentile(cpuNs, 0.5),
    wallNsPerRecord: percentile(wallNs, 0.5),
    records,
  };
}
