import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { RETRIEVAL_STAGES, type RetrievalExecution, type RetrievalStage } from '@engram/contracts';
import { createDiagnosticsCollector } from '@engram/diagnostics';
import { createDeterministicEmbedder } from '@engram/embedder-deterministic';
import { createRetriever, extractKeywords } from '@engram/retrieval';
import { createSqliteMemoryStore } from '@engram/store';
import { openDatabase, planLexicalQuery, quoteFts, type SqliteDatabase } from '@engram/store/raw';
import { create, insertMultiple, search } from '@orama/orama';
import {
  agentId,
  elapsedMs,
  BENCH_NOW as NOW,
  openRaw,
  openRawRow,
  rawAgentToken,
  runIngest,
} from './ingest.js';
import { measureQuantised, type QuantQuery } from './quant.js';
import type { BenchScenarioReport } from './report.js';
import { type BenchQuery, benchQueries, percentile, rowText, widenVector } from './workload.js';

/** How one scenario is run. */
export interface ScenarioConfig {
  readonly name: string;
  readonly agents: number;
  readonly rowsPerAgent: number;
  /** Hybrid queries timed on Engram and on the raw statements. */
  readonly queries: number;
  /** Queries run on Orama (a subset of the above; Orama is slow to index large corpora). */
  readonly oramaQueries: number;
  /** Orama indexes the rows of at most this many agents (one Orama database per agent). */
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

const MB = 1024 * 1024;

/** Heap and RSS now, in MiB, after a full collection when the process exposes one (`node --expose-gc`). */
function memoryNow(): { readonly rssMB: number; readonly heapMB: number } {
  (globalThis as { gc?: () => void }).gc?.();
  const m = process.memoryUsage();
  return { rssMB: m.rss / MB, heapMB: m.heapUsed / MB };
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
  const store = createSqliteMemoryStore({
    path: engramPath,
    embedding: { id: embedder.profile.id, dimensions },
    now: () => NOW,
  });
  const raw = openRaw(join(config.dir, `${config.name}-raw.sqlite`), dimensions);
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
    const queries: BenchQuery[] = [];
    const perAgent = Math.ceil(config.queries / config.agents);
    for (let a = 0; a < config.agents && queries.length < config.queries; a += 1) {
      const count = Math.min(perAgent, config.queries - queries.length);
      queries.push(...benchQueries(a * config.rowsPerAgent, config.rowsPerAgent, count, a + 1));
    }
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
    const engramOnce = async (q: BenchQuery, record: boolean): Promise<{ ms: number; ranked: string[] }> => {
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

    for (const q of queries.slice(0, WARMUP_QUERIES)) {
      await engramOnce(q, false);
      rawOnce(q, false);
    }
    const engramMsList: number[] = [];
    const rawMsList: number[] = [];
    const engramRanked: string[][] = [];
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

    // ---- Orama: the queried agents' rows (one database per agent, at most oramaMaxAgents), same vectors.
    const oramaAgents = [...new Set(queries.map(agentOf))].slice(0, config.oramaMaxAgents);
    const oramaQueryIdx = queries
      .map((q, i) => [q, i] as const)
      .filter(([q]) => oramaAgents.includes(agentOf(q)))
      .slice(0, config.oramaQueries);
    const beforeOrama = memoryNow();
    log(
      `[${config.name}] orama: indexing ${oramaAgents.length} agent(s) × ${config.rowsPerAgent} rows (at most ${config.oramaMaxAgents} within the heap), ${oramaQueryIdx.length} queries`,
    );
    const oramaDbs = new Map<number, Awaited<ReturnType<typeof createOramaDb>>>();
    let oramaIndexMs = 0;
    let oramaRows = 0;
    for (const a of oramaAgents) {
      const db = await createOramaDb(dimensions);
      for (let start = 0; start < config.rowsPerAgent; start += config.batchSize) {
        const docs: { id: string; content: string; embedding: number[] }[] = [];
        for (let j = start; j < Math.min(start + config.batchSize, config.rowsPerAgent); j += 1) {
          const index = a * config.rowsPerAgent + j;
          const text = rowText(index);
          docs.push({ id: `r${index}`, content: text, embedding: Array.from(vectorOf(text)) });
        }
        const t = process.hrtime.bigint();
        await insertMultiple(db, docs, docs.length);
        oramaIndexMs += elapsedMs(t);
        oramaRows += docs.length;
      }
      oramaDbs.set(a, db);
      if (oramaDbs.size % 5 === 0 || oramaDbs.size === oramaAgents.length) {
        log(
          `[${config.name}] orama indexed ${oramaRows} rows (${oramaDbs.size} of ${oramaAgents.length} agents)`,
        );
      }
    }
    const oramaOnce = async (q: BenchQuery): Promise<{ ms: number; ranked: string[] }> => {
      const db = oramaDbs.get(agentOf(q));
      if (db === undefined) throw new Error('no Orama database for the query agent');
      const t = process.hrtime.bigint();
      const result = await search(db, {
        mode: 'hybrid',
        term: q.text,
        vector: { value: Array.from(vectorOf(q.text)), property: 'embedding' },
        similarity: SIMILARITY_THRESHOLD,
        limit: 10,
      });
      const ms = elapsedMs(t);
      return { ms, ranked: result.hits.map((h) => h.id) };
    };
    const afterOramaIndex = memoryNow();
    for (const [q] of oramaQueryIdx.slice(0, WARMUP_QUERIES)) await oramaOnce(q);
    const oramaMsList: number[] = [];
    const oramaRecall: number[] = [];
    const engramOnSame: number[] = [];
    const engramRecallOnSame: number[] = [];
    for (const [q, i] of oramaQueryIdx) {
      const o = await oramaOnce(q);
      oramaMsList.push(o.ms);
      oramaRecall.push(recallAt5(o.ranked, `r${q.target}`));
      engramOnSame.push(engramMsList[i] as number);
      engramRecallOnSame.push(engramRecall[i] as number);
      if (oramaMsList.length % 100 === 0 || oramaMsList.length === oramaQueryIdx.length) {
        log(`[${config.name}] orama queries ${oramaMsList.length}/${oramaQueryIdx.length}`);
      }
    }
    const afterOramaQueries = memoryNow();
    const engramSameP50 = percentile(engramOnSame, 0.5);
    const engramSameP95 = percentile(engramOnSame, 0.95);
    const oramaP50 = percentile(oramaMsList, 0.5);
    const oramaP95 = percentile(oramaMsList, 0.95);
    const mean = (xs: readonly number[]): number => xs.reduce((s, x) => s + x, 0) / Math.max(1, xs.length);
    const sizer = openDatabase(engramPath);
    let engramBytes: number;
    try {
      engramBytes = databaseBytes(sizer);
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
        rawBytesPerRow: databaseBytes(raw) / totalRows,
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
        stagesP50Ms: Object.fromEntries(
          [...stageSamples].map(([stage, samples]) => [stage, percentile(samples, 0.5)]),
        ) as Record<RetrievalStage, number>,
        cpuP50Ms: percentile(engramCpuMs, 0.5),
        cpuP95Ms: percentile(engramCpuMs, 0.95),
        rawCpuP50Ms: percentile(rawCpuMs, 0.5),
        rawCpuP95Ms: percentile(rawCpuMs, 0.95),
        rawFtsP50Ms: percentile(rawFtsMs, 0.5),
        rawVectorP50Ms: percentile(rawVectorMs, 0.5),
      },
      orama: {
        p50Ms: oramaP50,
        p95Ms: oramaP95,
        ratio: engramSameP50 / oramaP50,
        p95Ratio: engramSameP95 / oramaP95,
        recallAt5: mean(oramaRecall),
        engramRecallAt5: mean(engramRecallOnSame),
        engramP50Ms: engramSameP50,
        engramP95Ms: engramSameP95,
        queries: oramaMsList.length,
        rowsIndexed: oramaRows,
        rowsPerSec: oramaRows / (oramaIndexMs / 1000),
        memory: {
          rssAfterIndexMB: afterOramaIndex.rssMB - beforeOrama.rssMB,
          heapAfterIndexMB: afterOramaIndex.heapMB - beforeOrama.heapMB,
          rssAfterQueriesMB: afterOramaQueries.rssMB - beforeOrama.rssMB,
          heapAfterQueriesMB: afterOramaQueries.heapMB - beforeOrama.heapMB,
          heapBytesPerRow: ((afterOramaIndex.heapMB - beforeOrama.heapMB) * MB) / Math.max(1, oramaRows),
        },
        ...(oramaAgents.length < config.agents
          ? {
              note: `Orama indexed ${oramaAgents.length} queried agent(s) of ${config.agents} (at most ${config.oramaMaxAgents}: the bench's cap, or what fits in half the free heap), one in-memory database per agent; Engram searched all agents in one file.`,
            }
          : {}),
      },
      ...(quantised === undefined ? {} : { quantised }),
    };
  } finally {
    store.close();
    raw.close();
    if (rawRowOpen) rawRow.close();
  }
}

async function createOramaDb(dimensions: number) {
  return create({
    schema: { id: 'string', content: 'string', embedding: `vector[${dimensions}]` } as const,
  });
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
 * The previous method (one round, no settling collection) measured the same within the noise when it was
 * changed; see the diagnostics README for figures.
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
