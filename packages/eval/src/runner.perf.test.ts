import { createDeterministicEmbedder } from '@engram/embedder-deterministic';
import { createRetriever, type RetrievalExecution } from '@engram/retrieval';
import type { StatementKind } from '@engram/store';
import { createSqliteMemoryStore } from '@engram/store-sqlite';
import { describe, expect, it } from 'vitest';
import { benchQueries, rowText } from './bench/workload.js';
import type { RetrievalFixture } from './fixture.js';
import { loadFixture, type RunProgress, VARIANT_ARMS } from './runner.js';

// Counts only — statements, candidates, batches — never time.

const CANDIDATE_BUDGET = 128;

function corpusFixture(rows: number): RetrievalFixture {
  return {
    version: 1,
    name: `bench-${rows}`,
    vectorProfile: { id: 'deterministic-lexicon-v1', dimensions: 128, normalized: true },
    corpus: Array.from({ length: rows }, (_, i) => ({
      id: `r${i}`,
      agentId: 'agent',
      kind: 'event' as const,
      content: rowText(i),
      importance: 0.5,
    })),
    queries: [],
  };
}

interface Counted {
  readonly counts: Record<StatementKind, number>;
  readonly store: ReturnType<typeof createSqliteMemoryStore>;
}

function countingStore(): Counted {
  const counts: Record<StatementKind, number> = { read: 0, write: 0, fts: 0, vector: 0, like: 0, meta: 0 };
  const embedder = createDeterministicEmbedder();
  const store = createSqliteMemoryStore({
    path: ':memory:',
    embedding: embedder.profile,
    now: () => 0,
    observer: {
      onStatement(kind) {
        counts[kind] += 1;
      },
    },
  });
  return { counts, store };
}

/** Statements of a multi-row insert of `n` rows: `chunk` rows each, the remainder in power-of-two chunks. */
function multiRowStatements(n: number, chunk: number): number {
  let statements = Math.floor(n / chunk);
  for (let rest = n % chunk; rest > 0; rest &= rest - 1) statements += 1;
  return statements;
}

function delta(
  after: Record<StatementKind, number>,
  before: Record<StatementKind, number>,
): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(after)) {
    const d = v - (before[k as StatementKind] ?? 0);
    if (d !== 0) out[k] = d;
  }
  return out;
}

describe('loading a fixture', () => {
  it('inserts in ceil(N / batch) transactions with a constant number of index writes per row', async () => {
    const rows = 1234;
    const perBatch: number[] = [];
    for (const batchSize of [100, 500]) {
      const { counts, store } = countingStore();
      const before = { ...counts };
      const progress: RunProgress[] = [];
      const result = await loadFixture(store, corpusFixture(rows), {
        batchSize,
        createdAt: 0,
        onProgress: (p) => progress.push(p),
      });
      const batches = Math.ceil(rows / batchSize);
      expect(result).toEqual({ rows, batches, withoutVector: 0 });
      expect(progress).toHaveLength(batches);
      expect(progress.at(-1)).toEqual({ phase: 'load', done: rows, total: rows });
      const d = delta(counts, before);
      // The memory rows go in with multi-row inserts: 64 rows per statement, the rest of a batch in
      // power-of-two chunks — a handful of statements per batch, not one per row.
      let rowStatements = 0;
      for (let left = rows; left > 0; left -= batchSize)
        rowStatements += multiRowStatements(Math.min(left, batchSize), 64);
      expect(d.write).toBe(rowStatements);
      expect(d.write).toBeLessThan(rows / 10);
      // Per row: the FTS5 word entry. Per batch: the BM25 index's postings (multi-row inserts of up to 1,024
      // postings, the rest in power-of-two chunks), unit lengths and agent statistics.
      const perBatchFts = (d.fts ?? 0) - rows;
      expect(perBatchFts).toBeGreaterThanOrEqual(3 * batches);
      expect(perBatchFts).toBeLessThan(rows / 10);
      expect(d.vector).toBe(rows);
      // Whatever else a batch costs (its transaction), it is per batch, not per row.
      perBatch.push((d.meta ?? 0) / batches);
      store.close();
    }
    expect(perBatch[0]).toBe(perBatch[1]);
  });
});

describe('statements and candidates per query', () => {
  // The same 20 queries (their targets are among the first 300 rows) on a small and a ten times larger corpus.
  const queries = benchQueries(0, 300, 20, 7);

  async function measure(
    rows: number,
  ): Promise<Record<string, { statements: string[]; executions: RetrievalExecution[] }>> {
    const { counts, store } = countingStore();
    await loadFixture(store, corpusFixture(rows), { createdAt: 0 });
    const embedder = createDeterministicEmbedder();
    const out: Record<string, { statements: string[]; executions: RetrievalExecution[] }> = {};
    for (const [variant, arms] of Object.entries(VARIANT_ARMS)) {
      // Access bookkeeping (a deferred write after each call) is off: only the query's own statements count.
      const retriever = createRetriever({
        store,
        embedder,
        arms,
        trackAccess: false,
        now: () => 0,
        candidateBudget: CANDIDATE_BUDGET,
      });
      const statements: string[] = [];
      const executions: RetrievalExecution[] = [];
      for (const q of queries) {
        const before = { ...counts };
        const response = await retriever.search('agent', q.text, { limit: 10 });
        statements.push(JSON.stringify(delta(counts, before)));
        executions.push(response.execution);
      }
      out[variant] = { statements, executions };
    }
    store.close();
    return out;
  }

  it('issues a constant number of statements per query, independent of the corpus size', async () => {
    const small = await measure(300);
    const large = await measure(3000);
    for (const variant of Object.keys(VARIANT_ARMS)) {
      expect(large[variant]?.statements, variant).toEqual(small[variant]?.statements);
    }
    // Per arm that runs: the vector arm is two (whether the agent has chunked memories, the k-NN); the BM25 arm
    // is two (the agent's statistics with the query terms' document frequencies, the scoring); plus the
    // authoritative revalidation: one brief read of the candidates, one full read of the returned results.
    // None per candidate.
    expect(new Set(large.fts?.statements)).toEqual(new Set([JSON.stringify({ read: 2, fts: 2 })]));
    expect(new Set(large.vector?.statements)).toEqual(new Set([JSON.stringify({ read: 3, vector: 1 })]));
    expect(new Set(large.hybrid?.statements)).toEqual(
      new Set([JSON.stringify({ read: 3, fts: 2, vector: 1 })]),
    );
  });

  it('fetches at most the candidate budget per arm, the same candidates in hybrid as in each single arm', async () => {
    const large = await measure(3000);
    const fts = large.fts?.executions ?? [];
    const vector = large.vector?.executions ?? [];
    const hybrid = large.hybrid?.executions ?? [];
    expect(hybrid).toHaveLength(queries.length);
    hybrid.forEach((h, i) => {
      expect(h.candidates.fts).toBeLessThanOrEqual(CANDIDATE_BUDGET);
      expect(h.candidates.vector).toBeLessThanOrEqual(CANDIDATE_BUDGET);
      expect(h.candidates.selected).toBeLessThanOrEqual(10);
      expect(h.candidates.fts).toBe(fts[i]?.candidates.fts);
      expect(h.candidates.vector).toBe(vector[i]?.candidates.vector);
    });
    // On 3,000 rows the vector arm fills its budget for some query: the bound is really exercised.
    expect(Math.max(...hybrid.map((h) => h.candidates.vector))).toBe(CANDIDATE_BUDGET);
  });
});
