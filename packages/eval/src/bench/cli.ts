#!/usr/bin/env node
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { getHeapStatistics } from 'node:v8';
import { createHttpReranker } from '@engram/provider-openai';
import { parseCliArgs, resolveUserPath, runCli, writeJsonFile } from '../cli/common.js';
import { runInfo } from '../docs/run-info.js';
import { createEvalReranker } from '../rerankers.js';
import {
  type BenchEmbeddingReport,
  EMBEDDING_SCENARIO,
  formatEmbeddingLines,
  runEmbeddingScenario,
} from './embedding.js';
import { benchPlans, ORAMA_MAX_AGENTS, oramaAgentsWithin } from './plan.js';
import { type BenchPostgresReport, runPostgresScenario } from './postgres.js';
import {
  BENCH_SCENARIOS,
  type BenchReport,
  type BenchScenarioName,
  type BenchScenarioReport,
  formatBenchTable,
} from './report.js';
import {
  type BenchReranker,
  type BenchRerankReport,
  RERANK_BENCH_CANDIDATES,
  RERANK_SCENARIO,
  runRerankScenario,
} from './rerank.js';
import { DETERMINISTIC_RERANK_SCORER, startDeterministicRerankServer } from './rerank-server.js';
import { measureDiagnostics, runScenario } from './scenarios.js';
import { type BenchUserScopeReport, runUserScopeScenario, USER_SCOPE_SCENARIO } from './user-scope.js';
import { type BenchWorkersReport, runWorkersScenario, WORKERS_SCENARIO } from './workers.js';

const USAGE = `usage: bench [--size <n>] [--queries <n>] [--orama-queries <n>] [--only <scenario,…>] [--out <report.json>]
             [--postgres <url> [--postgres-agents <n>] [--postgres-rows <n>] [--postgres-bulk]] [--rerank http]
             [--workers <n,…> [--worker-ops <n>]]

Side-by-side performance benchmark (not part of pnpm test):
  oneAgent10k         one agent, min(size, 10,000) rows
  oneAgent100k        one agent, size rows (only when size ≥ 100,000)
  hundredAgents       100 agents × min(size / 10, 10,000) rows each, in one file
  oneAgent384d        one agent, size rows, 384-d vectors
  oneAgent1536d       one agent, size rows, 1536-d vectors
  hundredAgents1536d  100 agents × min(size / 10, 10,000) rows each, 1536-d vectors
  userScope100k       one agent, 100,000 rows over 1,000 users (5 % its own), 384-d: the same queries unscoped
                      and for one user (filter forUser), hybrid and each arm, ratios scoped / unscoped (run when
                      size ≥ 100,000 or when named by --only)
  rerank              one agent, min(size, 10,000) rows: hybrid search without a reranker, then with each
                      reranker at ${RERANK_BENCH_CANDIDATES.join(', ')} candidates (the rerank stage's and the search's
                      latency). Always the HTTP reranker against a loopback server with a deterministic scorer
                      (word overlap, not a model: the stage's own cost); --rerank http adds the endpoint that the
                      ENGRAM_RERANK_* variables name
  workers             1, 2 and 4 worker processes (--workers) on one database — the PostgreSQL one of --postgres,
                      else one SQLite file — each opening it through @engram/memory's composition root and running
                      --worker-ops operations (per 10: 4 writes of 4 rows left pending, 4 hybrid searches, 1 drain,
                      1 maintenance pass attempt), then a last drain: operations/s and its ratio to 1 worker,
                      write and search p50/p95, conflicts retried; counted: rows embedded twice, acknowledged rows
                      lost, rows pending after the drains, maintenance leases of one agent held at once (run when
                      named by --only or when --workers is given; with --postgres and --only workers, the
                      PostgreSQL scenario is not run)
  embedding           the offline USE-lite embedder on the caller's thread and on 1, 2 and N worker threads, side
                      by side: embeddings/s and CPU seconds (worker threads included) for short and long texts, the
                      drain (ingest + flush), and add alone and 16 concurrent (run only when named by --only)
The 128-d scenarios use the deterministic embedder's vectors; the wider ones the same vectors widened by an
orthogonal transform (every similarity, so every ranking, unchanged; see widenVector).
Orama (in memory) indexes one database per agent, for at most ${ORAMA_MAX_AGENTS} queried agents spread evenly
over them, and only as many as fit in half the free heap (pnpm bench runs node with --max-old-space-size=12288
for the 1M-row 1536-d scenario; a smaller heap indexes fewer agents, and the report says how many).
Engram, raw and Orama get the same warm-up: one untimed query per queried agent (not a timed one; its time
is reported as the agent's cold first query), then the first 20 timed queries, untimed, for the JIT. Engram
and raw are timed query by query in one loop, Engram and Orama in another, each alternating which goes first
(Engram's queries there are its second run of those texts; the PostgreSQL scenario keeps its own order).
--size 100000 runs about half an hour on a quiet 2-core machine and needs about
21 GB of free temporary disk, the 1M-row 1536-d scenario's peak (each scenario's files are deleted when it ends,
the raw + row floor's as soon as its ingest is timed, the raw baseline's once its queries are), and pnpm bench's
12 GiB heap for that scenario's Orama phase; the default --size 10000 takes a few minutes and about 3 GB.
Each measures Engram's ingest against a raw FTS5 + vec0 loop, Engram's hybrid query latency against the raw
FTS5 MATCH + vec0 k-NN statements, and against Orama's hybrid search (quality: Recall@5 on known targets).
  --size <n>            default 10000
  --queries <n>         timed queries per scenario (default 400)
  --orama-queries <n>   of which also run on Orama (default: all; at most 200 on one agent over 50,000 rows)
  --only <names>        run only these scenarios (comma-separated names from the list above, or postgres:
                        only the PostgreSQL scenario, with --postgres)
  --workers <n,…>       the workers scenario's worker counts (default 1,2,4; the first is the ratios' base)
  --worker-ops <n>      operations per worker in the workers scenario (default 200)
  --out <file>          default <repository root>/test-results/bench/report.json
  --postgres <url>      also run the PostgreSQL scenario on that scratch database (its tables are dropped):
                        Engram's PostgreSQL store against the raw SQL statements on the same server and
                        against Engram's SQLite store, --postgres-agents (default 1) × --postgres-rows
                        (default min(size, 100,000)) rows
  --postgres-bulk       load the PostgreSQL scenario's rows first and build both HNSW indexes after (a bulk
                        load); the ingest figures include the builds
  --rerank http         the rerank scenario also times this reranker (ENGRAM_RERANK_BASE_URL, _MODEL, _API_KEY,
                        _FLAVOR)`;

function positiveInt(value: string | true | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (typeof value !== 'string' || !Number.isSafeInteger(n) || n < 1)
    throw new Error(`--${name} must be a positive integer`);
  return n;
}

/** The rerank scenario: the loopback deterministic scorer always, and the `--rerank http` endpoint when asked. */
async function rerankScenario(
  rows: number,
  queries: number,
  withHttp: boolean,
  log: (line: string) => void,
): Promise<BenchRerankReport> {
  const server = await startDeterministicRerankServer();
  try {
    const rerankers: BenchReranker[] = [
      {
        name: 'loopback',
        label: DETERMINISTIC_RERANK_SCORER,
        reranker: createHttpReranker({
          baseUrl: server.baseUrl,
          model: 'loopback-deterministic',
          maxRetries: 0,
        }),
      },
    ];
    if (withHttp) {
      const named = await createEvalReranker('http');
      rerankers.push({ name: named.id, label: 'the ENGRAM_RERANK_* endpoint', reranker: named.reranker });
    }
    return await runRerankScenario({ rows, queries, candidates: RERANK_BENCH_CANDIDATES, rerankers, log });
  } finally {
    await server.close();
  }
}

/** `--workers 1,2,4`: worker counts, each a positive integer. */
function workerCountsOf(value: string | true | undefined): number[] {
  if (value === undefined) return [1, 2, 4];
  const counts = typeof value === 'string' ? value.split(',').map((x) => Number(x.trim())) : [];
  if (counts.length === 0 || counts.some((n) => !Number.isSafeInteger(n) || n < 1 || n > 64))
    throw new Error('--workers takes worker counts from 1 to 64, comma-separated');
  return counts;
}

async function main(argv: readonly string[]): Promise<number> {
  const args = parseCliArgs(
    argv,
    {
      boolean: ['help', 'postgres-bulk'],
      valued: [
        'size',
        'queries',
        'orama-queries',
        'only',
        'out',
        'postgres',
        'postgres-agents',
        'postgres-rows',
        'rerank',
        'workers',
        'worker-ops',
      ],
    },
    USAGE,
  );
  if (!args.ok) return args.exitCode;
  if (args.positionals.length > 0) {
    process.stderr.write(`unexpected argument\n${USAGE}\n`);
    return 2;
  }
  const run = runInfo('bench', argv);
  let size: number;
  let queries: number;
  let oramaQueriesArg: number | undefined;
  try {
    size = positiveInt(args.flags.get('size'), 10_000, 'size');
    queries = positiveInt(args.flags.get('queries'), 400, 'queries');
    oramaQueriesArg = args.flags.has('orama-queries')
      ? positiveInt(args.flags.get('orama-queries'), 400, 'orama-queries')
      : undefined;
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n${USAGE}\n`);
    return 2;
  }
  const out = args.flags.get('out');
  const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../../..');
  const reportPath =
    typeof out === 'string' ? resolveUserPath(out) : join(root, 'test-results/bench/report.json');
  const log = (line: string): void => {
    process.stderr.write(`${line}\n`);
  };

  const plans = benchPlans(size);

  const only = args.flags.get('only');
  let userScopeWanted = size >= 100_000;
  let rerankWanted = true;
  const rerankFlag = args.flags.get('rerank');
  if (rerankFlag !== undefined && rerankFlag !== 'http') {
    process.stderr.write(`--rerank takes http\n${USAGE}\n`);
    return 2;
  }
  let embeddingWanted = false;
  let workersWanted = args.flags.has('workers');
  let postgresWanted = typeof args.flags.get('postgres') === 'string';
  let workerCounts: number[];
  let workerOps: number;
  try {
    workerCounts = workerCountsOf(args.flags.get('workers'));
    workerOps = positiveInt(args.flags.get('worker-ops'), 200, 'worker-ops');
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n${USAGE}\n`);
    return 2;
  }
  if (only !== undefined) {
    const wanted = typeof only === 'string' ? only.split(',').map((x) => x.trim()) : [];
    const names = [
      ...BENCH_SCENARIOS,
      USER_SCOPE_SCENARIO,
      RERANK_SCENARIO,
      WORKERS_SCENARIO,
      EMBEDDING_SCENARIO,
      'postgres',
    ];
    const known = new Set<string>(names);
    if (wanted.length === 0 || wanted.some((w) => !known.has(w))) {
      process.stderr.write(`--only takes scenario names from: ${names.join(', ')}\n${USAGE}\n`);
      return 2;
    }
    if (wanted.includes('postgres') && typeof args.flags.get('postgres') !== 'string') {
      process.stderr.write(`--only postgres needs --postgres <url>\n${USAGE}\n`);
      return 2;
    }
    userScopeWanted = wanted.includes(USER_SCOPE_SCENARIO);
    rerankWanted = wanted.includes(RERANK_SCENARIO);
    workersWanted ||= wanted.includes(WORKERS_SCENARIO);
    // `--only workers --postgres <url>` runs the workers on that database, not the PostgreSQL scenario.
    if (wanted.includes(WORKERS_SCENARIO) && !wanted.includes('postgres')) postgresWanted = false;
    embeddingWanted = wanted.includes(EMBEDDING_SCENARIO);
    for (let i = plans.length - 1; i >= 0; i -= 1) {
      if (!wanted.includes((plans[i] as (typeof plans)[number]).name)) plans.splice(i, 1);
    }
  }
  const dir = mkdtempSync(join(tmpdir(), 'engram-bench-'));
  const results: Partial<Record<BenchScenarioName, BenchScenarioReport>> = {};
  let userScope: BenchUserScopeReport | undefined;
  let rerank: BenchRerankReport | undefined;
  let embedding: BenchEmbeddingReport | undefined;
  try {
    for (const plan of plans) {
      const rows = plan.agents * plan.rowsPerAgent;
      const oramaQueries = Math.min(queries, oramaQueriesArg ?? (plan.rowsPerAgent > 50_000 ? 200 : queries));
      log(
        `[${plan.name}] ${plan.agents} agent(s) × ${plan.rowsPerAgent} rows = ${rows} rows, ${plan.dimensions}-d, ${queries} queries`,
      );
      results[plan.name] = await runScenario({
        name: plan.name,
        agents: plan.agents,
        rowsPerAgent: plan.rowsPerAgent,
        dimensions: plan.dimensions,
        queries,
        oramaQueries,
        oramaMaxAgents: oramaAgentsWithin(
          getHeapStatistics().heap_size_limit - process.memoryUsage().heapUsed,
          plan.rowsPerAgent,
          plan.dimensions,
        ),
        batchSize: 1000,
        dir,
        log,
      });
      // Each finished scenario is written at once, so a long run that is stopped keeps what it measured.
      const partial: BenchReport = {
        version: 1,
        size,
        run,
        machine: {
          cpus: cpus().length,
          node: process.version,
          platform: `${process.platform}-${process.arch}`,
        },
        ...results,
        diagnostics: { nsPerRecord: Number.NaN, records: 0 },
      };
      writeJsonFile(reportPath, partial);
      log(formatBenchTable(partial));
      // The scenario's files go now (the 1M-row 1536-d one needs about 21 GB at its peak), so the disk a run
      // needs is its largest scenario's, not the sum.
      for (const file of readdirSync(dir)) {
        if (file.startsWith(`${plan.name}-`)) rmSync(join(dir, file), { force: true });
      }
      // Release the scenario's memory (Orama's indexes) before the next one measures its own.
      (globalThis as { gc?: () => void }).gc?.();
    }
    if (userScopeWanted) {
      log(`[${USER_SCOPE_SCENARIO}] one agent × 100000 rows over 1000 users, 384-d, ${queries} queries`);
      userScope = await runUserScopeScenario({
        rows: 100_000,
        users: 1_000,
        queries,
        dimensions: 384,
        batchSize: 1000,
        dir,
        log,
      });
    }
    if (rerankWanted) {
      log(
        `[${RERANK_SCENARIO}] one agent × ${Math.min(size, 10_000)} rows, ${Math.min(queries, 200)} queries per cell`,
      );
      rerank = await rerankScenario(
        Math.min(size, 10_000),
        Math.min(queries, 200),
        rerankFlag !== undefined,
        log,
      );
    }
    if (embeddingWanted) {
      embedding = await runEmbeddingScenario({ dir, log });
      log(formatEmbeddingLines(embedding).join('\n'));
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  let postgres: BenchPostgresReport | undefined;
  const pgUrl = args.flags.get('postgres');
  if (typeof pgUrl === 'string' && postgresWanted) {
    const agents = positiveInt(args.flags.get('postgres-agents'), 1, 'postgres-agents');
    const rowsPerAgent = positiveInt(
      args.flags.get('postgres-rows'),
      Math.min(size, 100_000),
      'postgres-rows',
    );
    log(`[postgres] ${agents} agent(s) × ${rowsPerAgent} rows, ${queries} queries`);
    postgres = await runPostgresScenario({
      url: pgUrl,
      agents,
      rowsPerAgent,
      queries,
      batchSize: 1000,
      bulk: args.flags.get('postgres-bulk') === true,
      log,
    });
  }
  let workers: BenchWorkersReport | undefined;
  if (workersWanted) {
    workers = await runWorkersScenario({
      target: typeof pgUrl === 'string' ? { kind: 'postgres', url: pgUrl } : { kind: 'sqlite' },
      workerCounts,
      opsPerWorker: workerOps,
      agents: 4,
      seedRows: 500,
      rowsPerWrite: 4,
      log,
    });
  }
  log('[diagnostics] timing the record path');
  const report: BenchReport = {
    version: 1,
    size,
    machine: { cpus: cpus().length, node: process.version, platform: `${process.platform}-${process.arch}` },
    run,
    ...results,
    ...(userScope === undefined ? {} : { userScope100k: userScope }),
    ...(rerank === undefined ? {} : { rerank }),
    ...(postgres === undefined ? {} : { postgres }),
    ...(workers === undefined ? {} : { workers }),
    ...(embedding === undefined ? {} : { embedding }),
    diagnostics: measureDiagnostics(1_000_000),
  };
  writeJsonFile(reportPath, report);
  process.stdout.write(`${formatBenchTable(report)}\n`);
  log(`report written to ${reportPath}`);
  return 0;
}

// The benchmark handles no user content: an error's message is safe to show and says what went wrong.
runCli('bench', main, { showErrorMessages: true });
