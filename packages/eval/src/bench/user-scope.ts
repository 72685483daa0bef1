/**
 * The user-scope scenario (`userScope100k`): one agent serving many end users, its rows spread over them, and the
 * same queries timed side by side in one run, unscoped and scoped to one user (`filter: { forUser }`: the agent's
 * own rows and that user's, never another user's). It reports what the scope costs as ratios scoped / unscoped of
 * the hybrid search (the retriever over the SQLite store, as the other scenarios time it) and of each store arm
 * alone (the vector k-NN and the BM25 lexical search), so a regression shows in the arm that causes it.
 *
 * The split: 5 % of the rows are the agent's own (every 20th row), the rest belong to the users in turn (row by
 * row, as memories of many conversations arrive interleaved), so at 100,000 rows 5,000 are the agent's and each
 * of 1,000 users has 95. A query targets a row and is made for that row's user (for a row of the agent's own, for
 * a user chosen by the query's number), so the scoped search can find its target.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { createDeterministicEmbedder } from '@engram/embedder-deterministic';
import { createRetriever, extractKeywords } from '@engram/retrieval';
import type { MemoryFilter, NewMemory } from '@engram/store';
import { createSqliteMemoryStore } from '@engram/store-sqlite';
import { BENCH_NOW as NOW } from './ingest.js';
import { type BenchQuery, benchQueries, percentile, rowText, widenVector } from './workload.js';

/** The scenario's name (`--only userScope100k`). */
export const USER_SCOPE_SCENARIO = 'userScope100k';

/** How the user-scope scenario is run. */
export interface UserScopeConfig {
  /** Rows of the one agent (100,000 in `pnpm bench`). */
  readonly rows: number;
  /** End users the rows are spread over (1,000 in `pnpm bench`). */
  readonly users: number;
  /** Timed queries; each runs unscoped and scoped. */
  readonly queries: number;
  /** Vector dimensions: 128 or a multiple (widened, see `widenVector`). */
  readonly dimensions: number;
  readonly batchSize: number;
  /** Directory for the scenario's SQLite file (`:memory:` when absent). */
  readonly dir?: string;
  readonly log: (line: string) => void;
}

/** One operation timed unscoped and scoped: latencies in ms, and the ratios scoped / unscoped. */
export interface ScopePair {
  readonly p50Ms: number;
  readonly p95Ms: number;
  readonly scopedP50Ms: number;
  readonly scopedP95Ms: number;
  /** scoped p50 / unscoped p50: what the scope costs (1.05 = 5 % more). */
  readonly ratioP50: number;
  readonly ratioP95: number;
}

/** The user-scope scenario's figures. */
export interface BenchUserScopeReport {
  readonly rows: number;
  readonly users: number;
  readonly agentRows: number;
  readonly dimensions: number;
  readonly queries: number;
  /** The retriever's hybrid search (limit 10), unscoped vs `forUser`. */
  readonly hybrid: ScopePair;
  /** The store's vector arm alone (k = 128, the retriever's candidate budget). */
  readonly vector: ScopePair;
  /** The store's lexical arm alone (BM25, limit 128). */
  readonly lexical: ScopePair;
  /** Recall@5 of the targets, unscoped and scoped. */
  readonly recallAt5: number;
  readonly scopedRecallAt5: number;
  /** Scoped results (of every arm) that belong to another user than the one asked for: must be 0. */
  readonly leaks: number;
}

const CANDIDATE_BUDGET = 128;
const WARMUP_QUERIES = 20;
/** Every n-th row is the agent's own (5 %). */
const AGENT_ROW_EVERY = 20;

/** The user of row `i` (null: the agent's own row). */
export function rowUser(i: number, users: number): string | null {
  if (i % AGENT_ROW_EVERY === 0) return null;
  const j = i - Math.floor(i / AGENT_ROW_EVERY) - 1;
  return userName(j % users);
}

function userName(u: number): string {
  return `user-${String(u).padStart(5, '0')}`;
}

const AGENT = 'agent-scope';

/** The user a query is made for: its target's, or (for an agent's own target) one by the query's number. */
function queryUser(q: BenchQuery, index: number, users: number): string {
  return rowUser(q.target, users) ?? userName(index % users);
}

function pair(unscoped: readonly number[], scoped: readonly number[]): ScopePair {
  const p50Ms = percentile(unscoped, 0.5);
  const p95Ms = percentile(unscoped, 0.95);
  const scopedP50Ms = percentile(scoped, 0.5);
  const scopedP95Ms = percentile(scoped, 0.95);
  return {
    p50Ms,
    p95Ms,
    scopedP50Ms,
    scopedP95Ms,
    ratioP50: scopedP50Ms / p50Ms,
    ratioP95: scopedP95Ms / p95Ms,
  };
}

/** Runs the scenario: ingest, warm-up, then each query unscoped and scoped, alternating which goes first. */
export async function runUserScopeScenario(config: UserScopeConfig): Promise<BenchUserScopeReport> {
  const { log, rows, users, dimensions } = config;
  const base = createDeterministicEmbedder();
  const vectorOf = (text: string): Float32Array => widenVector(base.embedSync(text), dimensions);
  const profile = { id: dimensions === 128 ? base.profile.id : `${base.profile.id}-wide`, dimensions };
  const path =
    config.dir === undefined ? ':memory:' : join(config.dir, `${USER_SCOPE_SCENARIO}-engram.sqlite`);
  const store = createSqliteMemoryStore({ path, embedding: profile, now: () => NOW });
  try {
    const userOf = new Map<string, string | null>();
    for (let start = 0; start < rows; start += config.batchSize) {
      const batch: NewMemory[] = [];
      for (let i = start; i < Math.min(rows, start + config.batchSize); i += 1) {
        const text = rowText(i);
        const user = rowUser(i, users);
        userOf.set(`r${i}`, user);
        batch.push({
          id: `r${i}`,
          agentId: AGENT,
          kind: 'event',
          content: text,
          importance: 0.5,
          vector: vectorOf(text),
          ...(user === null ? {} : { userId: user }),
        });
      }
      await store.insertMemories(batch);
      if ((start / config.batchSize) % 20 === 19)
        log(`[${USER_SCOPE_SCENARIO}] ingest ${start + batch.length}/${rows}`);
    }
    const retriever = createRetriever({
      store,
      embedder: { profile, embed: (texts) => Promise.resolve(texts.map(vectorOf)) },
      now: () => NOW,
      candidateBudget: CANDIDATE_BUDGET,
      similarityThreshold: 0.1,
      trackAccess: false,
    });
    const queries = benchQueries(0, rows, config.queries + WARMUP_QUERIES, 0x5c09e);
    let leaks = 0;
    const leaked = (ids: readonly string[], user: string): void => {
      for (const id of ids) {
        const owner = userOf.get(id);
        if (owner !== null && owner !== user) leaks += 1;
      }
    };
    const timed = async <T>(run: () => Promise<T>): Promise<{ ms: number; value: T }> => {
      const t = process.hrtime.bigint();
      const value = await run();
      return { ms: Number(process.hrtime.bigint() - t) / 1e6, value };
    };
    type Op = (q: BenchQuery, filter: MemoryFilter | undefined) => Promise<readonly string[]>;
    const ops: Record<'hybrid' | 'vector' | 'lexical', Op> = {
      hybrid: async (q, filter) => {
        const r = await retriever.search(AGENT, q.text, {
          limit: 10,
          ...(filter === undefined ? {} : { filter }),
        });
        if (r.execution.outcome !== 'completed')
          throw new Error(`benchmark query ended ${r.execution.outcome}`);
        return r.results.map((x) => x.record.id);
      },
      vector: async (q, filter) =>
        (
          await store.searchVector({
            agentId: AGENT,
            vector: vectorOf(q.text),
            k: CANDIDATE_BUDGET,
            ...(filter === undefined ? {} : { filter }),
          })
        ).map((h) => h.id),
      lexical: async (q, filter) =>
        (
          await store.searchLexical({
            agentId: AGENT,
            terms: extractKeywords(q.text).terms,
            mode: 'any',
            limit: CANDIDATE_BUDGET,
            ...(filter === undefined ? {} : { filter }),
          })
        ).hits.map((h) => h.id),
    };
    const samples = {
      hybrid: { unscoped: [] as number[], scoped: [] as number[] },
      vector: { unscoped: [] as number[], scoped: [] as number[] },
      lexical: { unscoped: [] as number[], scoped: [] as number[] },
    };
    let recall = 0;
    let scopedRecall = 0;
    for (let i = 0; i < queries.length; i += 1) {
      const q = queries[i] as BenchQuery;
      const user = queryUser(q, i, users);
      const filter: MemoryFilter = { forUser: user };
      const record = i >= WARMUP_QUERIES;
      for (const name of ['hybrid', 'vector', 'lexical'] as const) {
        const op = ops[name];
        // Alternate the order so neither side always runs on a warmer cache.
        const first = i % 2 === 0;
        const a = first ? await timed(() => op(q, undefined)) : undefined;
        const s = await timed(() => op(q, filter));
        const u = a ?? (await timed(() => op(q, undefined)));
        leaked(s.value, user);
        if (!record) continue;
        samples[name].unscoped.push(u.ms);
        samples[name].scoped.push(s.ms);
        if (name === 'hybrid') {
          if (u.value.slice(0, 5).includes(`r${q.target}`)) recall += 1;
          if (s.value.slice(0, 5).includes(`r${q.target}`)) scopedRecall += 1;
        }
      }
      if ((i + 1) % 100 === 0) log(`[${USER_SCOPE_SCENARIO}] queries ${i + 1}/${queries.length}`);
    }
    const timedCount = queries.length - WARMUP_QUERIES;
    return {
      rows,
      users,
      agentRows: Math.ceil(rows / AGENT_ROW_EVERY),
      dimensions,
      queries: timedCount,
      hybrid: pair(samples.hybrid.unscoped, samples.hybrid.scoped),
      vector: pair(samples.vector.unscoped, samples.vector.scoped),
      lexical: pair(samples.lexical.unscoped, samples.lexical.scoped),
      recallAt5: recall / Math.max(1, timedCount),
      scopedRecallAt5: scopedRecall / Math.max(1, timedCount),
      leaks,
    };
  } finally {
    store.close();
    if (config.dir !== undefined) {
      for (const suffix of ['', '-wal', '-shm']) rmSync(`${path}${suffix}`, { force: true });
    }
  }
}

function n(value: number, digits: number): string {
  return Number.isFinite(value) ? value.toFixed(digits) : '—';
}

/** The scenario's lines of the bench table (none without the scenario). */
export function formatUserScopeLines(report: BenchUserScopeReport | undefined): string[] {
  if (report === undefined) return [];
  const line = (name: string, p: ScopePair): string =>
    `  ${name.padEnd(8)} p50 ${n(p.p50Ms, 2)} → ${n(p.scopedP50Ms, 2)} ms (×${n(p.ratioP50, 3)}), p95 ${n(p.p95Ms, 2)} → ${n(p.scopedP95Ms, 2)} ms (×${n(p.ratioP95, 3)})`;
  return [
    '',
    `${USER_SCOPE_SCENARIO}: one agent, ${report.rows} rows (${report.agentRows} its own, the rest over ${report.users} users), ${report.dimensions}-d, ${report.queries} queries; unscoped → forUser (ratio scoped / unscoped)`,
    line('hybrid', report.hybrid),
    line('vector', report.vector),
    line('lexical', report.lexical),
    `  Recall@5 ${n(report.recallAt5, 3)} unscoped, ${n(report.scopedRecallAt5, 3)} scoped; results of another user in scoped answers: ${report.leaks}`,
  ];
}
