/** The benchmark report (`test-results/bench/report.json`) and its table. */
import type { RunInfo } from '../docs/run-info.js';
import type { BenchEmbeddingReport } from './embedding.js';
import type { BenchPostgresReport } from './postgres.js';
import { type BenchQuantised, formatQuantLines } from './quant.js';
import { type BenchRerankReport, formatRerankLines } from './rerank.js';
import type { BenchSmallAgents } from './small-agents.js';
import { type BenchUserScopeReport, formatUserScopeLines } from './user-scope.js';
import { type BenchWorkersReport, formatWorkersLines } from './workers.js';

/** Scenario names, in run order. */
export const BENCH_SCENARIOS: readonly [
  'oneAgent10k',
  'oneAgent100k',
  'hundredAgents',
  'oneAgent384d',
  'oneAgent1536d',
  'hundredAgents1536d',
] = [
  'oneAgent10k',
  'oneAgent100k',
  'hundredAgents',
  'oneAgent384d',
  'oneAgent1536d',
  'hundredAgents1536d',
] as const;
/** One scenario name. */
export type BenchScenarioName = (typeof BENCH_SCENARIOS)[number];

/** Ingest throughput of Engram (`insertMemories` with vectors, one transaction per batch) against a raw loop. */
export interface BenchIngest {
  readonly rowsPerSec: number;
  /** Engram ÷ raw (higher is better; 1 = as fast as bare FTS5 + vec0 inserts). */
  readonly ratioToRaw: number;
  readonly rawRowsPerSec: number;
  /**
   * The "raw + row" floor: the raw loop plus the memory row itself in a plain table (id, agent, content, its
   * SHA-256, creation time; one unique index on (agent, hash)), the least a store that keeps what it was given
   * and refuses exact duplicates must write (absent in older reports).
   */
  readonly rawRowRowsPerSec?: number;
  /** Engram ÷ raw + row (higher is better; 1 = as fast as the floor). */
  readonly ratioToRawRow?: number;
  /**
   * The same three loops in CPU time of this process (`process.cpuUsage`): rows per CPU second and Engram's
   * ratios, steady on a shared machine where the wall clock includes waiting for a core (absent in older reports).
   */
  readonly cpu?: {
    readonly rowsPerSec: number;
    readonly rawRowsPerSec: number;
    readonly rawRowRowsPerSec: number;
    readonly ratioToRaw: number;
    readonly ratioToRawRow: number;
  };
  readonly batchSize: number;
}

/** Hybrid query latency of Engram's retriever against issuing the same FTS5 MATCH and vec0 k-NN directly. */
export interface BenchQuery {
  readonly p50Ms: number;
  readonly p95Ms: number;
  /** Engram p50 ÷ raw p50 (lower is better). */
  readonly ratioToRaw: number;
  readonly p95RatioToRaw: number;
  readonly rawP50Ms: number;
  readonly rawP95Ms: number;
  /** Recall@5 of Engram's hybrid search against each query's known target. */
  readonly recallAt5: number;
  readonly queries: number;
  /**
   * p50 of each pipeline stage as the retriever reports it (`keyword` includes the FTS arm; `vector` is the
   * k-NN's own time, which runs while the FTS arm runs, so it overlaps `keyword`).
   */
  readonly stagesP50Ms: Readonly<Record<string, number>>;
  /**
   * CPU time per query (this process, `process.cpuUsage`), Engram and raw: what a query costs whatever else
   * the machine runs (absent in older reports).
   */
  readonly cpuP50Ms?: number;
  readonly cpuP95Ms?: number;
  readonly rawCpuP50Ms?: number;
  readonly rawCpuP95Ms?: number;
  /** p50 of the raw FTS5 MATCH (with keyword extraction) and of the raw vec0 k-NN (with the query embedding). */
  readonly rawFtsP50Ms: number;
  readonly rawVectorP50Ms: number;
  /** Each queried agent's first query since ingest (the untimed warm-up; see `BenchColdFirst`; absent in older reports). */
  readonly coldFirst?: BenchColdFirst;
}

/**
 * The warm-up queries: before any timed query, one query per queried agent (not one of the timed queries) on
 * Engram and on the raw statements, alternating which goes first. They are each agent's first read of its data
 * since ingest, from disk when the page cache dropped it, so the timed figures never include that first touch;
 * these figures say what it cost (the scenario's first query of all is among them: statement preparation and
 * JIT compilation are in their max).
 */
export interface BenchColdFirst {
  readonly queries: number;
  readonly p50Ms: number;
  readonly p95Ms: number;
  readonly maxMs: number;
  readonly rawP50Ms: number;
  readonly rawP95Ms: number;
  readonly rawMaxMs: number;
}

/** Orama's hybrid search over the same rows and vectors. */
export interface BenchOrama {
  readonly p50Ms: number;
  readonly p95Ms: number;
  /**
   * Engram p50 ÷ Orama p50 on the same queries, timed in the same phase, alternating which goes first, after one
   * warm-up query per agent on both (lower is better; older reports reused Engram's main-loop times).
   */
  readonly ratio: number;
  readonly p95Ratio: number;
  /** Recall@5 of Orama against each query's known target. */
  readonly recallAt5: number;
  /** Engram's Recall@5 on the same queries. */
  readonly engramRecallAt5: number;
  /** Engram's latency on the same queries (the ratios' numerators). */
  readonly engramP50Ms: number;
  readonly engramP95Ms: number;
  readonly queries: number;
  /** Agents Orama indexed: all the queried agents, or that many spread evenly over them (absent in older reports). */
  readonly agents?: number;
  /** Rows Orama indexed (all the scenario's rows, or the queried agents' rows; see `note`). */
  readonly rowsIndexed: number;
  readonly rowsPerSec: number;
  /** Orama's memory: what the process gained from indexing and after the queries (MiB, deltas). */
  readonly memory?: {
    readonly rssAfterIndexMB: number;
    readonly heapAfterIndexMB: number;
    readonly rssAfterQueriesMB: number;
    readonly heapAfterQueriesMB: number;
    /** Heap bytes per indexed row. */
    readonly heapBytesPerRow: number;
  };
  readonly note?: string;
}

/** Engram's memory (process RSS and JS heap, MiB) and database size (bytes per row, raw baseline beside). */
export interface BenchMemory {
  readonly rssAfterIngestMB: number;
  readonly heapAfterIngestMB: number;
  readonly rssAfterQueriesMB: number;
  readonly heapAfterQueriesMB: number;
  readonly bytesPerRow: number;
  readonly rawBytesPerRow: number;
  /**
   * Share of Engram's file within SQLite's memory map (the store's default `mmap_size`, clamped by SQLite to its
   * compile-time maximum: 2 GiB in better-sqlite3's build); pages past it are read with a system call each
   * (absent in older reports).
   */
  readonly mappedShare?: number;
  /**
   * What a small agent costs: database bytes per row with many agents of a few rows each at the scenario's
   * dimensions, Engram, the raw baseline (the store's vec0 chunk size) and the raw baseline with vec0's default
   * chunk size (absent in older reports; see `small-agents.ts`).
   */
  readonly smallAgents?: BenchSmallAgents;
}

/** One scenario's figures. */
export interface BenchScenarioReport {
  readonly agents: number;
  readonly rows: number;
  /** Vector dimensions (absent in older reports: 128). */
  readonly dimensions?: number;
  readonly memory?: BenchMemory;
  readonly ingest: BenchIngest;
  readonly query: BenchQuery;
  readonly orama: BenchOrama;
  /** Wide-vector scenarios: the vector arm alone, exact and quantised (`int8`, `bit`). */
  readonly quantised?: BenchQuantised;
}

/** The whole benchmark report: scenario keys at the top level, with `diagnostics` beside them. */
export interface BenchReport {
  readonly version: number;
  readonly size: number;
  readonly machine: { readonly cpus: number; readonly node: string; readonly platform: string };
  /** The command, commit, date and machine of the run (absent in reports written before it was kept). */
  readonly run?: RunInfo;
  readonly oneAgent10k?: BenchScenarioReport;
  readonly oneAgent100k?: BenchScenarioReport;
  readonly hundredAgents?: BenchScenarioReport;
  readonly oneAgent384d?: BenchScenarioReport;
  readonly oneAgent1536d?: BenchScenarioReport;
  readonly hundredAgents1536d?: BenchScenarioReport;
  /** The user-scope scenario: the same queries unscoped and for one user (`user-scope.ts`). */
  readonly userScope100k?: BenchUserScopeReport;
  /** The rerank scenario: the rerank stage's latency by reranker and candidates (`rerank.ts`). */
  readonly rerank?: BenchRerankReport;
  /** The PostgreSQL scenario (`--postgres <url>`). */
  readonly postgres?: BenchPostgresReport;
  /** The many-workers scenario: 1, 2, 4… worker processes on one database (`workers.ts`, `--only workers`). */
  readonly workers?: BenchWorkersReport;
  /** The embedding scenario (`--only embedding`): USE-lite on the caller's thread and on worker threads. */
  readonly embedding?: BenchEmbeddingReport;
  /** The record path: CPU ns per recorded retrieval (`nsPerRecord`) and wall ns (absent in older reports). */
  readonly diagnostics: {
    readonly nsPerRecord: number;
    readonly wallNsPerRecord?: number;
    readonly records: number;
  };
}

const STAGE_COLUMNS: readonly (readonly [string, string])[] = [
  ['keyword', 'keyword+fts'],
  ['queryEmbedding', 'embedding'],
  ['vector', 'vector'],
  ['authoritativeRevalidation', 'revalidation'],
  ['assembly', 'assembly'],
  ['total', 'total'],
];

function table(header: readonly string[], rows: readonly (readonly string[])[]): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]): string =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join('  ');
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)];
}

function n(value: number, digits: number): string {
  return Number.isFinite(value) ? value.toFixed(digits) : '—';
}

/** One row per scenario present in the report, in `BENCH_SCENARIOS` order; `row` returns null to leave one out. */
function scenarioRows(
  report: BenchReport,
  row: (name: BenchScenarioName, s: BenchScenarioReport) => string[] | null,
): string[][] {
  const rows: string[][] = [];
  for (const name of BENCH_SCENARIOS) {
    const s = report[name];
    const cells = s === undefined ? null : row(name, s);
    if (cells !== null) rows.push(cells);
  }
  return rows;
}

/** A titled table after a blank line, or nothing when it has no rows. */
function section(title: string, header: readonly string[], rows: readonly (readonly string[])[]): string[] {
  return rows.length === 0 ? [] : ['', title, ...table(header, rows)];
}

/** Renders the report as a plain-text table, one row per scenario, then the diagnostics figure. */
export function formatBenchTable(report: BenchReport): string {
  const header = [
    'scenario',
    'rows',
    'ingest rows/s',
    'raw rows/s',
    'ingest ratio',
    'p50 ms',
    'p95 ms',
    'raw p50',
    'raw p95',
    'ratio p50/p95',
    'R@5',
    'orama p50',
    'orama p95',
    'ratio p50/p95',
    'orama R@5',
    'raw+row rows/s',
    'ratio',
    'cpu ratio raw / raw+row',
  ];
  const rows = scenarioRows(report, (name, s) => [
    name,
    String(s.rows),
    n(s.ingest.rowsPerSec, 0),
    n(s.ingest.rawRowsPerSec, 0),
    n(s.ingest.ratioToRaw, 2),
    n(s.query.p50Ms, 2),
    n(s.query.p95Ms, 2),
    n(s.query.rawP50Ms, 2),
    n(s.query.rawP95Ms, 2),
    `${n(s.query.ratioToRaw, 2)}/${n(s.query.p95RatioToRaw, 2)}`,
    n(s.query.recallAt5, 3),
    n(s.orama.p50Ms, 2),
    n(s.orama.p95Ms, 2),
    `${n(s.orama.ratio, 2)}/${n(s.orama.p95Ratio, 2)}`,
    n(s.orama.recallAt5, 3),
    n(s.ingest.rawRowRowsPerSec ?? Number.NaN, 0),
    n(s.ingest.ratioToRawRow ?? Number.NaN, 2),
    `${n(s.ingest.cpu?.ratioToRaw ?? Number.NaN, 2)}/${n(s.ingest.cpu?.ratioToRawRow ?? Number.NaN, 2)}`,
  ]);
  const stageHeader = [
    'scenario',
    ...STAGE_COLUMNS.map(([, label]) => label),
    'raw fts',
    'raw vector',
    'cpu p50/p95',
    'raw cpu p50/p95',
  ];
  const stageRows = scenarioRows(report, (name, s) => [
    name,
    ...STAGE_COLUMNS.map(([stage]) => n(s.query.stagesP50Ms[stage] ?? Number.NaN, 2)),
    n(s.query.rawFtsP50Ms, 2),
    n(s.query.rawVectorP50Ms, 2),
    `${n(s.query.cpuP50Ms ?? Number.NaN, 2)}/${n(s.query.cpuP95Ms ?? Number.NaN, 2)}`,
    `${n(s.query.rawCpuP50Ms ?? Number.NaN, 2)}/${n(s.query.rawCpuP95Ms ?? Number.NaN, 2)}`,
  ]);
  const memoryHeader = [
    'scenario',
    'dims',
    'rss ingest',
    'heap ingest',
    'rss queries',
    'heap queries',
    'bytes/row',
    'raw bytes/row',
    'mapped',
    'orama +rss',
    'orama +heap',
    'orama B/row',
    'small agents B/row',
    'raw',
    'raw vec0 default',
  ];
  const memoryRows = scenarioRows(report, (name, s) => {
    const m = s.memory;
    if (m === undefined) return null;
    const o = s.orama.memory;
    return [
      name,
      String(s.dimensions ?? 128),
      n(m.rssAfterIngestMB, 0),
      n(m.heapAfterIngestMB, 0),
      n(m.rssAfterQueriesMB, 0),
      n(m.heapAfterQueriesMB, 0),
      n(m.bytesPerRow, 0),
      n(m.rawBytesPerRow, 0),
      m.mappedShare === undefined ? '—' : `${n(m.mappedShare * 100, 0)} %`,
      n(o?.rssAfterQueriesMB ?? Number.NaN, 0),
      n(o?.heapAfterQueriesMB ?? Number.NaN, 0),
      n(o?.heapBytesPerRow ?? Number.NaN, 0),
      n(m.smallAgents?.bytesPerRow ?? Number.NaN, 0),
      n(m.smallAgents?.rawBytesPerRow ?? Number.NaN, 0),
      n(m.smallAgents?.rawDefaultChunkBytesPerRow ?? Number.NaN, 0),
    ];
  });
  const oramaHeader = [
    'scenario',
    'agents',
    'queries',
    'engram p50',
    'p95',
    'orama p50',
    'p95',
    'ratio p50',
    'p95',
    'engram R@5',
    'orama R@5',
    'orama rows/s',
    '+rss index',
    '+heap index',
    '+rss queries',
    '+heap queries',
  ];
  const oramaRows = scenarioRows(report, (name, s) => {
    const o = s.orama;
    return [
      name,
      o.agents === undefined ? '—' : String(o.agents),
      String(o.queries),
      n(o.engramP50Ms, 2),
      n(o.engramP95Ms, 2),
      n(o.p50Ms, 2),
      n(o.p95Ms, 2),
      n(o.ratio, 2),
      n(o.p95Ratio, 2),
      n(o.engramRecallAt5, 3),
      n(o.recallAt5, 3),
      n(o.rowsPerSec, 0),
      n(o.memory?.rssAfterIndexMB ?? Number.NaN, 0),
      n(o.memory?.heapAfterIndexMB ?? Number.NaN, 0),
      n(o.memory?.rssAfterQueriesMB ?? Number.NaN, 0),
      n(o.memory?.heapAfterQueriesMB ?? Number.NaN, 0),
    ];
  });
  const coldHeader = ['scenario', 'agents', 'engram p50', 'p95', 'max', 'raw p50', 'p95', 'max'];
  const coldRows = scenarioRows(report, (name, s) => {
    const c = s.query.coldFirst;
    if (c === undefined) return null;
    return [
      name,
      String(c.queries),
      n(c.p50Ms, 2),
      n(c.p95Ms, 2),
      n(c.maxMs, 2),
      n(c.rawP50Ms, 2),
      n(c.rawP95Ms, 2),
      n(c.rawMaxMs, 2),
    ];
  });
  const pg = report.postgres;
  const pgLines =
    pg === undefined
      ? []
      : [
          '',
          `postgres (${pg.agents} agent(s), ${pg.rows} rows): ingest ${n(pg.ingest.rowsPerSec, 0)} rows/s (raw SQL ${n(pg.ingest.rawRowsPerSec, 0)}, ×${n(pg.ingest.ratioToRaw, 2)}; SQLite store ${n(pg.ingest.sqliteRowsPerSec, 0)}, ×${n(pg.ingest.ratioToSqlite, 2)})`,
          `postgres query p50 ${n(pg.query.p50Ms, 2)} ms, p95 ${n(pg.query.p95Ms, 2)} ms (raw SQL ${n(pg.query.rawP50Ms, 2)}, ×${n(pg.query.ratioToRaw, 2)}; SQLite store ${n(pg.query.sqliteP50Ms, 2)}, ×${n(pg.query.ratioToSqlite, 2)}); Recall@5 ${n(pg.query.recallAt5, 3)} (SQLite ${n(pg.query.sqliteRecallAt5, 3)})`,
        ];
  return [
    // A run of the PostgreSQL or the workers scenario alone has no SQLite scenario rows: no empty tables then.
    ...(rows.length === 0 ? [] : table(header, rows)),
    ...section(
      "p50 per stage (ms): Engram pipeline stages vs the raw statements (`vector` is the k-NN's own time and overlaps `keyword+fts`: the stages do not add up to `total`)",
      stageHeader,
      stageRows,
    ),
    ...section(
      "Orama's phase (Engram and Orama on the same queries of the agents Orama indexed, alternated; ms; Orama's memory: MiB its index added, after indexing and after its queries)",
      oramaHeader,
      oramaRows,
    ),
    ...section(
      'memory (MiB, process RSS and JS heap; Orama: what its index added) and database bytes per row (small agents: 100 agents × 10 rows at the same dimensions; raw vec0 default: the raw table with 1,024-vector chunks)',
      memoryHeader,
      memoryRows,
    ),
    ...section(
      "first query of each agent (ms; the untimed warm-up before the timed queries, the first read of the agent's data since ingest)",
      coldHeader,
      coldRows,
    ),
    ...formatQuantLines(BENCH_SCENARIOS.map((name) => [name, report[name]?.quantised] as const)),
    ...formatUserScopeLines(report.userScope100k),
    ...formatRerankLines(report.rerank),
    ...pgLines,
    ...formatWorkersLines(report.workers),
    '',
    `diagnostics record path: ${n(report.diagnostics.nsPerRecord, 0)} ns CPU per recorded retrieval${report.diagnostics.wallNsPerRecord === undefined ? '' : ` (${n(report.diagnostics.wallNsPerRecord, 0)} ns wall)`} (${report.diagnostics.records} records)`,
  ].join('\n');
}
