/**
 * The rerank scenario (`rerank`): what the rerank stage adds to a hybrid search, by number of candidates and by
 * reranker. One agent's rows in an in-memory SQLite store (the deterministic embedder's vectors); the same queries
 * without a reranker (the baseline) and then with each reranker at each number of candidates, after an untimed
 * warm-up. The figures are the retriever's own: the execution's `rerank` and `total` latencies.
 *
 * The reranker `pnpm bench` always runs is `createHttpReranker` against a loopback server with a deterministic
 * scorer (`rerank-server.ts`): its figures are the stage's cost without a model — the HTTP round trip, the
 * request and answer, the reorder — never a cross-encoder's inference. `--rerank http` adds a real endpoint.
 */
import { createDeterministicEmbedder } from '@engram/embedder-deterministic';
import { createRetriever, type Reranker, type RetrievalResponse } from '@engram/retrieval';
import type { NewMemory } from '@engram/store';
import { createSqliteMemoryStore } from '@engram/store-sqlite';
import { BENCH_NOW as NOW } from './ingest.js';
import { benchQueries, percentile, rowText } from './workload.js';

/** The scenario's name (`--only rerank`). */
export const RERANK_SCENARIO = 'rerank';
/** The candidate counts `pnpm bench` times. */
export const RERANK_BENCH_CANDIDATES: readonly number[] = [5, 20, 50, 100];

/** One reranker of the scenario: its name in the report and what it is. */
export interface BenchReranker {
  readonly name: string;
  /** What the figures measure, e.g. the deterministic scorer's label. */
  readonly label: string;
  readonly reranker: Reranker;
}

/** How the rerank scenario is run. */
export interface RerankScenarioConfig {
  readonly rows: number;
  /** Timed queries per cell. */
  readonly queries: number;
  readonly candidates: readonly number[];
  readonly rerankers: readonly BenchReranker[];
  /** Budget of one rerank call (default 10,000 ms: the bench measures, it does not cut). */
  readonly timeoutMs?: number;
  readonly log: (line: string) => void;
}

/** Latency percentiles of one cell, in ms. */
export interface BenchLatency {
  readonly p50Ms: number;
  readonly p95Ms: number;
}

/** One reranker at one number of candidates. */
export interface BenchRerankCell {
  readonly reranker: string;
  readonly candidates: number;
  /** The `rerank` stage's latency. */
  readonly rerank: BenchLatency;
  /** The whole search's latency (`total`). */
  readonly total: BenchLatency;
  /** Queries whose rerank timed out or failed (their order is the fused one). */
  readonly degraded: number;
}

/** The rerank scenario's figures. */
export interface BenchRerankReport {
  readonly rows: number;
  readonly queries: number;
  /** The rerankers timed and what each measures. */
  readonly rerankers: readonly { readonly name: string; readonly label: string }[];
  /** The same queries without a reranker. */
  readonly baseline: { readonly total: BenchLatency };
  readonly cells: readonly BenchRerankCell[];
}

const AGENT = 'agent-rerank';
const WARMUP_QUERIES = 20;

function latency(samples: readonly number[]): BenchLatency {
  return { p50Ms: percentile(samples, 0.5), p95Ms: percentile(samples, 0.95) };
}

/** Runs the scenario: ingest, then the baseline and every reranker × candidates cell over the same queries. */
export async function runRerankScenario(config: RerankScenarioConfig): Promise<BenchRerankReport> {
  const embedder = createDeterministicEmbedder();
  const store = createSqliteMemoryStore({ path: ':memory:', embedding: embedder.profile, now: () => NOW });
  try {
    for (let start = 0; start < config.rows; start += 500) {
      const batch: NewMemory[] = [];
      for (let i = start; i < Math.min(config.rows, start + 500); i += 1) {
        const content = rowText(i);
        batch.push({
          id: `r${i}`,
          agentId: AGENT,
          kind: 'event',
          content,
          vector: embedder.embedSync(content),
        });
      }
      await store.insertMemories(batch);
    }
    const queries = benchQueries(0, config.rows, config.queries + WARMUP_QUERIES, 0x7e7a);

    const run = async (rerank?: {
      readonly model: Reranker;
      readonly candidates: number;
    }): Promise<{ rerank: number[]; total: number[]; degraded: number }> => {
      const retriever = createRetriever({
        store,
        embedder,
        now: () => NOW,
        trackAccess: false,
        ...(rerank === undefined ? {} : { rerank: { ...rerank, timeoutMs: config.timeoutMs ?? 10_000 } }),
      });
      const out = { rerank: [] as number[], total: [] as number[], degraded: 0 };
      for (let i = 0; i < queries.length; i += 1) {
        const response: RetrievalResponse = await retriever.search(
          AGENT,
          (queries[i] as { text: string }).text,
        );
        if (i < WARMUP_QUERIES) continue;
        const { latencies, degradations } = response.execution;
        if (latencies.rerank !== undefined) out.rerank.push(latencies.rerank);
        if (latencies.total !== undefined) out.total.push(latencies.total);
        if (degradations.includes('rerankTimeout') || degradations.includes('rerankError')) out.degraded += 1;
      }
      return out;
    };

    const baseline = await run();
    const cells: BenchRerankCell[] = [];
    for (const r of config.rerankers) {
      for (const candidates of config.candidates) {
        const timed = await run({ model: r.reranker, candidates });
        const cell = {
          reranker: r.name,
          candidates,
          rerank: latency(timed.rerank),
          total: latency(timed.total),
          degraded: timed.degraded,
        };
        config.log(
          `  ${r.name} × ${candidates}: rerank p50 ${cell.rerank.p50Ms.toFixed(2)} ms, total p50 ${cell.total.p50Ms.toFixed(2)} ms`,
        );
        cells.push(cell);
      }
    }
    return {
      rows: config.rows,
      queries: config.queries,
      rerankers: config.rerankers.map((r) => ({ name: r.name, label: r.label })),
      baseline: { total: latency(baseline.total) },
      cells,
    };
  } finally {
    await store.close();
  }
}

function n(value: number, digits: number): string {
  return Number.isFinite(value) ? value.toFixed(digits) : '—';
}

/** The scenario's lines of the bench table (none without the scenario). */
export function formatRerankLines(report: BenchRerankReport | undefined): string[] {
  if (report === undefined) return [];
  return [
    '',
    `${RERANK_SCENARIO}: one agent, ${report.rows} rows, ${report.queries} hybrid searches per cell; without a reranker total p50 ${n(report.baseline.total.p50Ms, 2)} / p95 ${n(report.baseline.total.p95Ms, 2)} ms`,
    ...report.rerankers.map((r) => `  ${r.name}: ${r.label}`),
    ...report.cells.map(
      (c) =>
        `  ${c.reranker} × ${String(c.candidates).padStart(3)} candidates: rerank p50 ${n(c.rerank.p50Ms, 2)} / p95 ${n(c.rerank.p95Ms, 2)} ms, total p50 ${n(c.total.p50Ms, 2)} / p95 ${n(c.total.p95Ms, 2)} ms${c.degraded > 0 ? `, ${c.degraded} degraded` : ''}`,
    ),
  ];
}
