import { afterEach, describe, expect, it } from 'vitest';
import type { StoreContext } from './context.js';
import { openStoreContext } from './open.js';
import { listMemories, revalidate } from './read.js';
import { searchLexical } from './search-lexical.js';
import { searchVector } from './search-vector.js';
import { insertMemories } from './write.js';

const profile = { id: 'test-v1', dimensions: 4 };
/** Text of the filter clauses: none may be in a statement that was given no filter. */
const FILTER_MARKERS = ['@fMeta', '@fUser', '@fSession', '@tags', '@tMode', '@tAsOf', 'json_type('];

let ctx: StoreContext | undefined;

afterEach(() => {
  ctx?.close();
  ctx = undefined;
});

async function openWithRows(): Promise<StoreContext> {
  const c = openStoreContext({ path: ':memory:', embedding: profile });
  ctx = c;
  await insertMemories(c, [
    {
      id: 'm1',
      agentId: 'a',
      kind: 'fact',
      content: 'notes about the build (one)',
      userId: 'alice',
      metadata: { lang: 'ts' },
      tags: ['topic:build'],
      vector: new Float32Array([1, 0, 0, 0]),
    },
    {
      id: 'm2',
      agentId: 'a',
      kind: 'fact',
      content: 'notes about the build (two)',
      userId: 'bob',
      metadata: { lang: 'go' },
      vector: new Float32Array([0.9, 0.1, 0, 0]),
    },
    {
      id: 'm3',
      agentId: 'a',
      kind: 'fact',
      content: 'the build notes (three)',
      vector: new Float32Array([0.8, 0.2, 0, 0]),
    },
  ]);
  return c;
}

/** Runs `fn` and returns the SQL of the statements it prepared (a fresh shape prepares its own). */
async function preparedBy(c: StoreContext, fn: () => Promise<unknown>): Promise<string[]> {
  const before = new Set(c.statements.keys());
  await fn();
  return [...c.statements.keys()].filter((sql) => !before.has(sql));
}

describe('filter clauses are built per call shape', () => {
  it('an unfiltered search, revalidation and listing prepare statements without any filter clause', async () => {
    const c = await openWithRows();
    const statements = [
      ...(await preparedBy(c, async () => {
        const result = await searchLexical(c, { agentId: 'a', terms: ['build'], limit: 10 });
        expect(result.hits.map((h) => h.id).sort()).toEqual(['m1', 'm2', 'm3']);
      })),
      ...(await preparedBy(c, async () => {
        const result = await searchLexical(c, { agentId: 'a', terms: ['build'], limit: 10, mode: 'all' });
        expect(result.hits.map((h) => h.id).sort()).toEqual(['m1', 'm2', 'm3']);
      })),
      ...(await preparedBy(c, async () => {
        const hits = await searchVector(c, { agentId: 'a', vector: new Float32Array([1, 0, 0, 0]), k: 3 });
        expect(hits.map((h) => h.id)).toEqual(['m1', 'm2', 'm3']);
      })),
      ...(await preparedBy(c, async () => {
        const rows = await revalidate(c, 'a', [{ id: 'm2' }, { id: 'm1' }]);
        expect(rows.map((r) => r.id)).toEqual(['m2', 'm1']);
      })),
      ...(await preparedBy(c, async () => {
        expect((await listMemories(c, 'a')).map((r) => r.id)).toEqual(['m1', 'm2', 'm3']);
      })),
    ];
    expect(statements.length).toBeGreaterThanOrEqual(5);
    for (const sql of statements) {
      for (const marker of FILTER_MARKERS) expect(sql).not.toContain(marker);
    }
    // The BM25 statement of a search is prepared once per shape and reused by the next unfiltered search.
    const again = await preparedBy(c, () => searchLexical(c, { agentId: 'a', terms: ['notes'], limit: 10 }));
    expect(again).toEqual([]);
  });

  it("the BM25 statement's plan builds no automatic index over its hits", async () => {
    const c = await openWithRows();
    const statements = await preparedBy(c, () =>
      searchLexical(c, { agentId: 'a', terms: ['build', 'notes'], limit: 10 }),
    );
    const bm25 = statements.filter((sql) => sql.includes('hits(rid, score, cand)'));
    expect(bm25).toHaveLength(1);
    const params = {
      weights: '[]',
      agent: 'a',
      k1: 0.9,
      b: 0.4,
      avgdl: 5,
      // The kinds are bound one value each (null when unused).
      ...Object.fromEntries(Array.from({ length: 7 }, (_, i) => [`kind${i}`, i === 0 ? 'fact' : null])),
      limit: 10,
      cutAt: 9,
      wideAt: 19,
      tArchived: 'active',
    };
    const plan = c.db.prepare(`EXPLAIN QUERY PLAN ${bm25[0]}`).all(params) as { detail: string }[];
    expect(plan.some((row) => row.detail.includes('SEARCH m USING INTEGER PRIMARY KEY'))).toBe(true);
    expect(plan.filter((row) => row.detail.includes('AUTOMATIC'))).toEqual([]);
    // The unit lengths come with the postings (schema v10): no lookup into the length rows per hit.
    expect(plan.filter((row) => row.detail.includes('lexical_docs'))).toEqual([]);
  });

  it('a filtered search prepares the clauses it needs and still filters, in both arms and the listing', async () => {
    const c = await openWithRows();
    const lexical = await preparedBy(c, async () => {
      const result = await searchLexical(c, {
        agentId: 'a',
        terms: ['build'],
        limit: 10,
        filter: { userId: 'alice', metadata: [{ key: 'lang', op: 'eq', value: 'ts' }] },
      });
      expect(result.hits.map((h) => h.id)).toEqual(['m1']);
    });
    expect(lexical.some((sql) => sql.includes('json_each(@fMeta)') && sql.includes('@fUser'))).toBe(true);
    const tagged = await preparedBy(c, async () => {
      const result = await searchLexical(c, {
        agentId: 'a',
        terms: ['build'],
        limit: 10,
        tags: ['topic:build'],
      });
      expect(result.hits.map((h) => h.id)).toEqual(['m1']);
    });
    expect(tagged.some((sql) => sql.includes('json_each(@tags)') && !sql.includes('@fMeta'))).toBe(true);
    const vector = await preparedBy(c, async () => {
      const hits = await searchVector(c, {
        agentId: 'a',
        vector: new Float32Array([1, 0, 0, 0]),
        k: 3,
        filter: { metadata: [{ key: 'lang', op: 'eq', value: 'go' }] },
      });
      expect(hits.map((h) => h.id)).toEqual(['m2']);
    });
    expect(vector.some((sql) => sql.includes('json_each(@fMeta)') && !sql.includes('@fUser'))).toBe(true);
    const history = await searchLexical(c, {
      agentId: 'a',
      terms: ['build'],
      limit: 10,
      time: { asOf: Date.now() + 60_000 },
      filter: { sessionId: 'none' },
    });
    expect(history.hits).toEqual([]);
    const listed = await listMemories(c, 'a', { filter: { userId: 'bob' } });
    expect(listed.map((r) => r.id)).toEqual(['m2']);
  });
});
