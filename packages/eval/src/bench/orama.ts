// Orama's side of a scenario: its in-memory indexes of some queried agents, and Engram and Orama timed on the
// same queries in one phase, alternating which goes first, after one warm-up query per agent on both.
import { create, insertMultiple, search } from '@orama/orama';
import { elapsedMs, MB, memoryNow } from './ingest.js';
import { spreadEvenly } from './plan.js';
import type { BenchOrama } from './report.js';
import { type BenchQuery, percentile, rowText } from './workload.js';

/** One search's time and the ids it ranked, best first. */
export interface TimedSearch {
  readonly ms: number;
  readonly ranked: readonly string[];
}

/** What the Orama phase needs from its scenario. */
export interface OramaPhaseInput {
  readonly name: string;
  readonly rowsPerAgent: number;
  readonly dimensions: number;
  readonly batchSize: number;
  /** Timed queries at most (of the indexed agents' queries, spread evenly over them). */
  readonly oramaQueries: number;
  /** Agents Orama indexes at most (one in-memory database per agent). */
  readonly oramaMaxAgents: number;
  readonly similarityThreshold: number;
  /** Untimed queries before the timed ones, for the JIT (after the per-agent warm-up). */
  readonly jitWarmUps: number;
  /** The scenario's timed queries and its warm-up query per queried agent (`scenarioQueries`). */
  readonly queries: readonly BenchQuery[];
  readonly warmUps: readonly BenchQuery[];
  readonly agentOf: (q: BenchQuery) => number;
  readonly vectorOf: (text: string) => Float32Array;
  /** Engram's hybrid search of `q`, timed. */
  readonly engram: (q: BenchQuery) => Promise<TimedSearch>;
  readonly log: (line: string) => void;
}

function recallAt5(ranked: readonly string[], target: string): number {
  return ranked.slice(0, 5).includes(target) ? 1 : 0;
}

function createOramaDb(dimensions: number) {
  return create({
    schema: { id: 'string', content: 'string', embedding: `vector[${dimensions}]` } as const,
  });
}

/**
 * Indexes the rows of the queried agents (at most `oramaMaxAgents`, spread evenly over them: see
 * `spreadEvenly`) in Orama, runs each indexed agent's warm-up query on Engram and on Orama (Orama's indexing
 * may have pushed Engram's pages out of the page cache), then the JIT warm-up, then times both on the same
 * queries, alternating the order per query as the Engram/raw loop does.
 */
export async function runOramaPhase(input: OramaPhaseInput): Promise<BenchOrama> {
  const { log, agentOf, vectorOf } = input;
  const queried = [...new Set(input.queries.map(agentOf))];
  const agents = spreadEvenly(queried, input.oramaMaxAgents);
  const indexed = new Set(agents);
  const timed = spreadEvenly(
    input.queries.filter((q) => indexed.has(agentOf(q))),
    input.oramaQueries,
  );
  const beforeOrama = memoryNow();
  log(
    `[${input.name}] orama: indexing ${agents.length} agent(s) × ${input.rowsPerAgent} rows (at most ${input.oramaMaxAgents} within the heap, spread over the ${queried.length} queried), ${timed.length} queries`,
  );
  const dbs = new Map<number, Awaited<ReturnType<typeof createOramaDb>>>();
  let indexMs = 0;
  let rows = 0;
  for (const a of agents) {
    const db = await createOramaDb(input.dimensions);
    for (let start = 0; start < input.rowsPerAgent; start += input.batchSize) {
      const docs: { id: string; content: string; embedding: number[] }[] = [];
      for (let j = start; j < Math.min(start + input.batchSize, input.rowsPerAgent); j += 1) {
        const index = a * input.rowsPerAgent + j;
        const text = rowText(index);
        docs.push({ id: `r${index}`, content: text, embedding: Array.from(vectorOf(text)) });
      }
      const t = process.hrtime.bigint();
      await insertMultiple(db, docs, docs.length);
      indexMs += elapsedMs(t);
      rows += docs.length;
    }
    dbs.set(a, db);
    if (dbs.size % 5 === 0 || dbs.size === agents.length) {
      log(`[${input.name}] orama indexed ${rows} rows (${dbs.size} of ${agents.length} agents)`);
    }
  }
  const oramaOnce = async (q: BenchQuery): Promise<TimedSearch> => {
    const db = dbs.get(agentOf(q));
    if (db === undefined) throw new Error('no Orama database for the query agent');
    const t = process.hrtime.bigint();
    const result = await search(db, {
      mode: 'hybrid',
      term: q.text,
      vector: { value: Array.from(vectorOf(q.text)), property: 'embedding' },
      similarity: input.similarityThreshold,
      limit: 10,
    });
    const ms = elapsedMs(t);
    return { ms, ranked: result.hits.map((h) => h.id) };
  };
  const afterIndex = memoryNow();
  // The same warm-up policy as the Engram/raw loop: each agent's warm-up query on both, alternating the order.
  const warmUps = input.warmUps.filter((q) => indexed.has(agentOf(q)));
  for (let i = 0; i < warmUps.length; i += 1) {
    const q = warmUps[i] as BenchQuery;
    if (i % 2 === 0) {
      await input.engram(q);
      await oramaOnce(q);
    } else {
      await oramaOnce(q);
      await input.engram(q);
    }
  }
  for (const q of timed.slice(0, input.jitWarmUps)) {
    await oramaOnce(q);
    await input.engram(q);
  }
  const oramaMs: number[] = [];
  const oramaRecall: number[] = [];
  const engramMs: number[] = [];
  const engramRecall: number[] = [];
  for (let i = 0; i < timed.length; i += 1) {
    const q = timed[i] as BenchQuery;
    const target = `r${q.target}`;
    // Alternate the order so neither side always runs on a warmer cache.
    let e: TimedSearch;
    let o: TimedSearch;
    if (i % 2 === 0) {
      e = await input.engram(q);
      o = await oramaOnce(q);
    } else {
      o = await oramaOnce(q);
      e = await input.engram(q);
    }
    engramMs.push(e.ms);
    engramRecall.push(recallAt5(e.ranked, target));
    oramaMs.push(o.ms);
    oramaRecall.push(recallAt5(o.ranked, target));
    if ((i + 1) % 100 === 0 || i + 1 === timed.length) {
      log(`[${input.name}] orama queries ${i + 1}/${timed.length} (engram and orama)`);
    }
  }
  const afterQueries = memoryNow();
  const mean = (xs: readonly number[]): number => xs.reduce((s, x) => s + x, 0) / Math.max(1, xs.length);
  const engramP50 = percentile(engramMs, 0.5);
  const engramP95 = percentile(engramMs, 0.95);
  const p50 = percentile(oramaMs, 0.5);
  const p95 = percentile(oramaMs, 0.95);
  return {
    p50Ms: p50,
    p95Ms: p95,
    ratio: engramP50 / p50,
    p95Ratio: engramP95 / p95,
    recallAt5: mean(oramaRecall),
    engramRecallAt5: mean(engramRecall),
    engramP50Ms: engramP50,
    engramP95Ms: engramP95,
    queries: oramaMs.length,
    agents: agents.length,
    rowsIndexed: rows,
    rowsPerSec: rows / (indexMs / 1000),
    memory: {
      rssAfterIndexMB: afterIndex.rssMB - beforeOrama.rssMB,
      heapAfterIndexMB: afterIndex.heapMB - beforeOrama.heapMB,
      rssAfterQueriesMB: afterQueries.rssMB - beforeOrama.rssMB,
      heapAfterQueriesMB: afterQueries.heapMB - beforeOrama.heapMB,
      heapBytesPerRow: ((afterIndex.heapMB - beforeOrama.heapMB) * MB) / Math.max(1, rows),
    },
    ...(agents.length < queried.length
      ? {
          note: `Orama indexed ${agents.length} of the ${queried.length} queried agent(s), spread evenly over them (at most ${input.oramaMaxAgents}: the bench's cap, or what fits in half the free heap), one in-memory database per agent; Engram searched all agents in one file.`,
        }
      : {}),
  };
}
