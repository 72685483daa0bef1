// The lexical arm's revalidation folded into the BM25 statement (`LexicalQuery.briefs`) on the real PostgreSQL
// store: the answer is the one the separate re-read gives, for every kind of call (refills included), and no
// lexical candidate is read again after the lexical search.
import type { RevalidationCandidate } from '@engram/store';
import type { PostgresMemoryStore } from '@engram/store-postgres';
import { describe, expect, it } from 'vitest';
import { add, answer, embedder, foldCalls, ids, retriever } from './fold.fixture.js';
import { openPgStore } from './pg-store.fixture.js';
import type { RetrievalStore } from './ports.js';

/**
 * The real store seen through a thin wrapper: counts the brief re-reads and the lexical searches' hits and
 * budgets, optionally strips the lexical fold (the vector arm's fold is kept, as before this change).
 */
function through(
  store: PostgresMemoryStore,
  options: { fold: boolean; beforeLexical?: (vector: Promise<readonly string[]>) => Promise<void> },
) {
  const briefReads: string[][] = [];
  const lexicalHits = new Set<string>();
  const lexicalLimits: number[] = [];
  let vectorDone: (ids: readonly string[]) => void = () => {};
  const vector = new Promise<readonly string[]>((resolve) => {
    vectorDone = resolve;
  });
  const port: RetrievalStore = {
    embeddingProfile: store.embeddingProfile,
    searchLexical: async ({ briefs, ...query }) => {
      if (lexicalLimits.length === 0) await options.beforeLexical?.(vector);
      lexicalLimits.push(query.limit);
      const result = await store.searchLexical(
        options.fold && briefs !== undefined ? { ...query, briefs } : query,
      );
      for (const hit of result.hits) lexicalHits.add(hit.id);
      return result;
    },
    searchVector: async (query) => {
      const hits = await store.searchVector(query);
      vectorDone(hits.map((h) => h.id));
      return hits;
    },
    revalidate: (agentId, candidates, scope) => store.revalidate(agentId, candidates, scope),
    revalidateBrief: (agentId, candidates: readonly RevalidationCandidate[], scope) => {
      briefReads.push(candidates.map((c) => c.id));
      return store.revalidateBrief(agentId, candidates, scope);
    },
    sessionNeighbours: (agentId, windows, scope) => store.sessionNeighbours(agentId, windows, scope),
    listConflicts: (agentId, query) => store.listConflicts(agentId, query),
  };
  return { port, briefReads, lexicalHits, lexicalLimits };
}

/** A corpus with rows each arm alone finds, rows both find, and rows revalidation must drop. */
async function seed(store: PostgresMemoryStore) {
  const lexicalOnly = await add(store, 'Rotate the signing key with keytool-rotate every quarter', {
    vector: false,
  });
  const vectorOnly = await add(store, 'Checkout outage', { kind: 'fact', tags: ['area:billing'] });
  const both = await add(store, 'The checkout outage was caused by a keytool-rotate mistake', {
    session: ['s1', 2],
  });
  await add(store, 'Outage review notes for the checkout team', { session: ['s1', 3], kind: 'episodic' });
  await add(store, 'Checkout outage drill for the keytool-rotate runbook', { userId: 'u1' });
  await add(store, 'Lunch menu for the offsite');
  const archived = await add(store, 'Checkout outage postmortem draft keytool-rotate');
  await store.archiveMemory('a', archived.id);
  const archived2 = await add(store, 'Checkout outage keytool-rotate timeline, archived');
  await store.archiveMemory('a', archived2.id);
  const old = await add(store, 'Checkout downtime lasted an hour', { tags: ['area:billing'] });
  const { replacement } = await store.supersedeMemory('a', old.id, old.revision, {
    agentId: 'a',
    kind: 'semantic',
    content: 'Checkout downtime lasted two hours',
    tags: ['area:billing'],
    vector: (await embedder.embed(['Checkout downtime lasted two hours']))[0] as Float32Array,
  });
  return { lexicalOnly, vectorOnly, both, archived, old, replacement };
}

describe('revalidation folded into the lexical search', () => {
  it('answers exactly as the separate re-read does, for every kind of call', {
    timeout: 120_000,
  }, async () => {
    const store = await openPgStore({ embedding: embedder.profile });
    const rows = await seed(store);
    const folded = through(store, { fold: true });
    const separate = through(store, { fold: false });
    const calls = foldCalls(rows.replacement.validFrom);
    for (const extra of [
      { arms: { lexical: true, vector: true } },
      { arms: { lexical: true, vector: false } },
      { arms: { lexical: true, vector: true }, candidateBudget: 2, refillTarget: 2 },
    ]) {
      for (const query of ['keytool-rotate downtime', 'checkout outage', 'signing key']) {
        for (const options of calls) {
          const a = await retriever(folded.port, extra).search('a', query, options);
          const b = await retriever(separate.port, extra).search('a', query, options);
          expect(answer(a)).toEqual(answer(b));
        }
      }
    }
    const plain = await retriever(folded.port).search('a', 'keytool-rotate downtime');
    expect(ids(plain)).toEqual(expect.arrayContaining([rows.lexicalOnly.id, rows.both.id]));
    for (const gone of [rows.archived.id, rows.old.id]) expect(ids(plain)).not.toContain(gone);
    const archived = await retriever(folded.port).search('a', 'keytool-rotate', { includeArchived: true });
    expect(ids(archived)).toContain(rows.archived.id);
  });

  it('reads no lexical candidate again after the lexical search', { timeout: 60_000 }, async () => {
    const store = await openPgStore({ embedding: embedder.profile });
    const rows = await seed(store);
    const query = 'keytool-rotate downtime';
    for (const extra of [
      {},
      { arms: { lexical: true, vector: false } },
      { candidateBudget: 2, refillTarget: 2 },
    ]) {
      const folded = through(store, { fold: true });
      const separate = through(store, { fold: false });
      const a = await retriever(folded.port, extra).search('a', query);
      expect(ids(a)).toContain(rows.lexicalOnly.id);
      expect(folded.lexicalHits.size).toBeGreaterThan(0);
      for (const read of folded.briefReads)
        for (const id of folded.lexicalHits) expect(read).not.toContain(id);
      // Without the fold the lexical candidates are read after the lexical search.
      const b = await retriever(separate.port, extra).search('a', query);
      expect(answer(a)).toEqual(answer(b));
      expect(separate.briefReads.flat()).toEqual(expect.arrayContaining([...separate.lexicalHits]));
    }
    // The lexical arm alone: no re-read of its candidates at all.
    const lexicalArm = through(store, { fold: true });
    await retriever(lexicalArm.port, { arms: { lexical: true, vector: false } }).search('a', query);
    expect(lexicalArm.briefReads).toEqual([]);
    // A metadata filter reads full rows, so nothing is folded: the candidates are read after the search.
    const filtered = through(store, { fold: true });
    const response = await retriever(filtered.port).search('a', query, { filter: { sessionId: 's1' } });
    expect(ids(response)).toContain(rows.both.id);
  });
});
