/**
 * The work of one search, counted (no clock): the statements a retrieval call runs on a real SQLite store, by
 * family. A search is a constant number of statements whatever the number of candidates: the lexical arm is
 * two (the agent's BM25 statistics with the terms' document frequencies, then the scoring query), the
 * revalidation of every candidate is one (the fields ranking reads) and the full rows of the returned results
 * one more; a store without the brief read reads every candidate in full, once. A statement per candidate, or a
 * third BM25 statement, shows here.
 */
import type { StatementKind } from '@engram/contracts';
import { createDeterministicEmbedder } from '@engram/embedder-deterministic';
import { createRetriever } from '@engram/retrieval';
import { createSqliteMemoryStore, type SqliteMemoryStore } from '@engram/store-sqlite';
import { afterEach, describe, expect, it } from 'vitest';

const embedder = createDeterministicEmbedder();
const WORDS = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel', 'india', 'juliet'];
const stores: SqliteMemoryStore[] = [];
afterEach(() => {
  for (const store of stores.splice(0)) store.close();
});

/** A store of `rows` memories of one agent, and the statement counts of its observer. */
async function seeded(rows: number) {
  const counts: Partial<Record<StatementKind, number>> = {};
  const store = createSqliteMemoryStore({
    path: ':memory:',
    embedding: embedder.profile,
    observer: {
      onStatement(kind) {
        counts[kind] = (counts[kind] ?? 0) + 1;
      },
    },
  });
  stores.push(store);
  const contents = Array.from(
    { length: rows },
    (_, i) => `note ${i}: ${WORDS[i % 10]} ${WORDS[(i * 3) % 10]} ${WORDS[(i * 7) % 10]} shared`,
  );
  const vectors = await embedder.embed(contents);
  await store.insertMemories(
    contents.map((content, i) => {
      const vector = vectors[i];
      return {
        agentId: 'a',
        kind: 'semantic' as const,
        content,
        ...(vector === undefined ? {} : { vector }),
      };
    }),
  );
  return { store, counts };
}

async function countSearch(rows: number, vector: boolean) {
  const { store, counts } = await seeded(rows);
  const retriever = createRetriever({
    store,
    embedder,
    trackAccess: false,
    arms: { lexical: true, vector },
  });
  for (const key of Object.keys(counts)) delete counts[key as StatementKind];
  const { results, execution } = await retriever.search('a', 'alpha delta shared', { limit: 5 });
  expect(execution.outcome).toBe('completed');
  expect(results).toHaveLength(5);
  return { counts: { ...counts }, candidates: execution.candidates.fts };
}

describe('statements of one search', () => {
  it('lexical only: two BM25 statements, one brief revalidation and one read of the results, for 40 or 400 candidates alike', async () => {
    const small = await countSearch(40, false);
    const large = await countSearch(400, false);
    expect(small.candidates).toBe(40);
    expect(large.candidates).toBeGreaterThan(100);
    expect(small.counts).toEqual({ fts: 2, read: 2 });
    expect(large.counts).toEqual(small.counts);
  });

  it('a store without the brief read: one full revalidation, and the same results', async () => {
    const { store, counts } = await seeded(400);
    // The port's single full read: a store without `revalidateBrief`.
    const plain = {
      searchLexical: store.searchLexical.bind(store),
      searchVector: store.searchVector.bind(store),
      revalidate: store.revalidate.bind(store),
    };
    const search = async (port: typeof plain) => {
      const retriever = createRetriever({ store: port, embedder, trackAccess: false, now: () => 1e12 });
      for (const key of Object.keys(counts)) delete counts[key as StatementKind];
      const { results, execution } = await retriever.search('a', 'alpha delta shared', { limit: 5 });
      expect(execution.outcome).toBe('completed');
      return { counts: { ...counts }, results: JSON.stringify(results) };
    };
    const withBrief = await search(store);
    const without = await search(plain);
    // One read fewer: the candidates' single full read replaces the brief one and the results' read.
    expect(without.counts).toEqual({ ...withBrief.counts, read: (withBrief.counts.read ?? 0) - 1 });
    expect(without.results).toBe(withBrief.results);
    expect(JSON.parse(without.results)).toHaveLength(5);
  });

  it('hybrid: still two BM25 statements, and no statement per candidate', async () => {
    const small = await countSearch(40, true);
    const large = await countSearch(400, true);
    expect(small.counts.fts).toBe(2);
    expect(large.counts).toEqual(small.counts);
  });
});
