#!/usr/bin/env node
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { getHeapStatistics } from 'node:v8';
import { parseCliArgs, resolveUserPath, runCli, writeJsonFile } from '../cli/common.js';
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
import { measureDiagnostics, runScenario } from './scenarios.js';
import { type BenchUserScopeReport, runUserScopeScenario, USER_SCOPE_SCENARIO } from './user-scope.js';

const USAGE = `usage: bench [--size <n>] [--queries <n>] [--orama-queries <n>] [--only <scenario,…>] [--out <report.json>]
             [--postgres <url> [--postgres-agents <n>] [--postgres-rows <n>]]

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
--size 100000 runs about half an hour on a quiet 2-core machine (28 min in the last full run) and needs about
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
  --out <file>          default <repository root>/test-results/bench/report.json
  --postgres <url>      also run the PostgreSQL scenario on that scratch database (its tables are dropped):
                        Engram's PostgreSQL store against the raw SQL statements on the same server and
                        against Engram's SQLite store, --postgres-agents (default 1) × --postgres-rows
                        (default min(size, 100,000)) rows`;

function positiveInt(value: string | true | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (typeof value !== 'string' || !Number.isSafeInteger(n) || n < 1)
    throw new Error(`--${name} must be a positive integer`);
  return n;
}

async function main(argv: readonly string[]): Promise<number> {
  const args = parseCliArgs(
    argv,
    {
      boolean: ['help'],
      valued: [
        'size',
        'queries',
        'orama-queries',
        'only',
        'out',
        'postgres',
        'postgres-agents',
        'postgres-rows',
      ],
    },
    USAGE,
  );
  if (!args.ok) return args.exitCode;
  if (args.positionals.length > 0) {
    process.stderr.write(`unexpected argument\n${USAGE}\n`);
    return 2;
  }
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
  let embeddingWanted = false;
  if (only !== undefined) {
    const wanted = typeof only === 'string' ? only.split(',').map((x) => x.trim()) : [];
    const known = new Set<string>([...BENCH_SCENARIOS, USER_SCOPE_SCENARIO, EMBEDDING_SCENARIO, 'postgres']);
    if (wanted.length === 0 || wanted.some((w) => !known.has(w))) {
      process.stderr.write(
        `--only takes scenario names from: ${[...BENCH_SCENARIOS, USER_SCOPE_SCENARIO, EMBEDDING_SCENARIO, 'postgres'].join(', ')}\n${USAGE}\n`,
      );
      return 2;
    }
    if (wanted.includes('postgres') && typeof args.flags.get('postgres') !== 'string') {
      process.stderr.write(`--only postgres needs --postgres <url>\n${USAGE}\n`);
      return 2;
    }
    userScopeWanted = wanted.includes(USER_SCOPE_SCENARIO);
    embeddingWanted = wanted.includes(EMBEDDING_SCENARIO);
    for (let i = plans.length - 1; i >= 0; i -= 1) {
      if (!wanted.includes((plans[i] as (typeof plans)[number]).name)) plans.splice(i, 1);
    }
  }
  const dir = mkdtempSync(join(tmpdir(), 'engram-bench-'));
  const results: Partial<Record<BenchScenarioName, BenchScenarioReport>> = {};
  let userScope: BenchUserScopeReport | undefined;
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
    if (embeddingWanted) {
      embedding = await runEmbeddingScenario({ dir, log });
      log(formatEmbeddingLines(embedding).join('\n'));
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  let postgres: BenchPostgresReport | undefined;
  const pgUrl = args.flags.get('postgres');
  if (typeof pgUrl === 'string') {
    const agents = positiveInt(args.flags.get('postgres-agents'), 1, 'postgres-agents');
    const rowsPerAgent = positiveInt(
      args.flags.get('postgres-rows'),
      Math.min(size, 100_000),
      'postgres-rows',
    );
    log(`[postgres] ${agents} agent(s) × ${rowsPerAgent} rows, ${queries} queries`);
    postgres = await runPostgresScenario({ url: pgUrl, agents, rowsPerAgent, queries, batchSize: 1000, log });
  }
  log('[diagnostics] timing the record path');
  const report: BenchReport = {
    version: 1,
    size,
    machine: { cpus: cpus().length, node: process.version, platform: `${process.platform}-${process.arch}` },
    ...results,
    ...(userScope === undefined ? {} : { userScope100k: userScope }),
    ...(postgres === undefined ? {} : { postgres }),
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
