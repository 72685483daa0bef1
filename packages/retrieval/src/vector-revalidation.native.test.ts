// The vector arm's revalidation folded into the k-NN (`VectorQuery.briefs`) on the real PostgreSQL store: the
// answer is the one the separate re-read gives, for every kind of call, and the vector-only candidates are not
// read again after the k-NN.
import type { MemoryRecord, RevalidationCandidate } from '@engram/store';
import type { PostgresMemoryStore } from '@engram/store-postgres';
import { describe, expect, it } from 'vitest';
import { add, answer, embedder, foldCalls, ids, retriever } from './fold.fixture.js';
import { openPgStore } from './pg-store.fixture.js';
import type { RetrievalStore } from './ports.js';

/** The real store seen through a thin wrapper: counts the brief re-reads, optionally strips the fold. */
function through(
  store: PostgresMemoryStore,
  options: { fold: boolean; beforeVector?: () => Promise<void> },
): { port: RetrievalStore; briefReads: string[][] } {
  const briefReads: string[][] = [];
  const port: RetrievalStore = {
    embeddingProfile: store.embeddingProfile,
    searchLexical: (query) => store.searchLexical(query),
    searchVector: async ({ briefs, ...query }) => {
      await options.beforeVector?.();
      return store.searchVector(options.fold && briefs !== undefined ? { ...query, briefs } : query);
    },
    revalidate: (agentId, candidates, scope) => store.revalidate(agentId, candidates, scope),
    revalidateBrief: (agentId, candidates: readonly RevalidationCandidate[], scope) => {
      briefReads.push(candidates.map((c) => c.id));
      return store.revalidateBrief(agentId, candidates, scope);
    },
    sessionNeighbours: (agentId, windows, scope) => store.sessionNeighbours(agentId, windows, scope),
    listConflicts: (agentId, query) => store.listConflicts(agentId, query),
  };
  return { port, briefReads };
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
  await add(store, 'Lunch menu for the offsite');
  const archived = await add(store, 'Checkout outage postmortem draft');
  await store.archiveMemory('a', archived.id);
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

describe('revalidation folded into the k-NN', () => {
  it('answers exactly as the separate re-read does, for every kind of call', {
    timeout: 60_000,
  }, async () => {
    const store = await openPgStore({ embedding: embedder.profile });
    const rows = await seed(store);
    const folded = through(store, { fold: true });
    const separate = through(store, { fold: false });
    const calls = foldCalls(rows.replacement.validFrom);
    let vectorOnlySeen = 0;
    for (const arms of [
      { lexical: true, vector: true },
      { lexical: false, vector: true },
    ]) {
      for (const query of ['keytool-rotate downtime', 'checkout outage', 'signing key']) {
        for (const options of calls) {
          const a = await retriever(folded.port, { arms }).search('a', query, options);
          const b = await retriever(separate.port, { arms }).search('a', query, options);
          expect(answer(a)).toEqual(answer(b));
          if (ids(a).includes(rows.vectorOnly.id)) vectorOnlySeen += 1;
        }
      }
    }
    // The calls do reach the rows that matter.
    expect(vectorOnlySeen).toBeGreaterThan(0);
    const plain = await retriever(folded.port).search('a', 'keytool-rotate downtime');
    expect(ids(plain)).toEqual(
      expect.arrayContaining([rows.lexicalOnly.id, rows.vectorOnly.id, rows.both.id]),
    );
    for (const gone of [rows.archived.id, rows.old.id]) expect(ids(plain)).not.toContain(gone);
    const archived = await retriever(folded.port).search('a', 'checkout outage', { includeArchived: true });
    expect(ids(archived)).toContain(rows.archived.id);
  });

  it('reads no vector-only candidate again after the k-NN', { timeout: 60_000 }, async () => {
    const store = await openPgStore({ embedding: embedder.profile });
    const rows = await seed(store);
    const query = 'keytool-rotate downtime';
    const folded = through(store, { fold: true });
    const separate = through(store, { fold: false });
    const hybrid = await retriever(folded.port).search('a', query);
    const vectorFound = hybrid.results
      .filter((r) => r.explanation.arms.join() === 'vector')
      .map((r) => r.record.id);
    expect(vectorFound).toContain(rows.vectorOnly.id);
    for (const read of folded.briefReads) for (const id of vectorFound) expect(read).not.toContain(id);
    // Without the fold the revalidation stage reads them after the k-NN.
    await retriever(separate.port).search('a', query);
    expect(separate.briefReads.flat()).toEqual(expect.arrayContaining(vectorFound));
    // The vector arm alone: no re-read of its candidates at all.
    folded.briefReads.length = 0;
    const vectorArm = await retriever(folded.port, { arms: { lexical: false, vector: true } }).search(
      'a',
      query,
    );
    expect(ids(vectorArm)).toContain(rows.vectorOnly.id);
    expect(folded.briefReads).toEqual([]);
  });

  it('drops a row archived between the lexical arm and the k-NN', { timeout: 60_000 }, async () => {
    const store = await openPgStore({ embedding: embedder.profile });
    const rows = await seed(store);
    const query = 'keytool-rotate downtime';
    const target = rows.vectorOnly.id;
    expect(ids(await retriever(store).search('a', query))).toContain(target);
    for (const fold of [true, false]) {
      for (const arms of [
        { lexical: true, vector: true },
        { lexical: false, vector: true },
      ]) {
        // The row is active when the call starts and archived just before its first k-NN reads the index.
        const row = (await store.getMemory('a', target)) as MemoryRecord;
        if (row.lifecycle !== 'active') await store.setLifecycle('a', target, row.revision, 'active');
        let archived = false;
        const racing = through(store, {
          fold,
          beforeVector: async () => {
            if (archived) return;
            archived = true;
            await store.archiveMemory('a', target);
          },
        });
        const response = await retriever(racing.port, { arms }).search('a', query);
        expect(archived).toBe(true);
        // Dropped by revalidation, as any row no longer active: not a row that changed after it was ranked.
        expect(response.execution).toMatchObject({ outcome: 'completed', degradations: [] });
        expect(ids(response)).not.toContain(target);
        expect(ids(response)).toContain(rows.both.id);
      }
    }
  });
});
