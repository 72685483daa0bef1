// The BM25 statement's folded re-read (`LexicalQuery.briefs`): with it every hit carries exactly the brief
// `revalidateBrief` reads for it at its revision under the same options (null when that re-read drops it), in
// the same statement, whichever way the statement finds its units (pruned, or pruned then scored in full);
// without it the hits are unchanged and carry none.
import type { LexicalHit, LexicalQuery, MemoryBrief, RevalidateOptions } from '@engram/store';
import { afterEach, expect, it } from 'vitest';
import type { PostgresMemoryStore } from './store.js';
import { freshPostgresStore } from './testing/fresh.js';
import { BAD_REREAD_OPTIONS, revalidateBriefRefusal } from './testing/reread.js';

const opened: PostgresMemoryStore[] = [];
afterEach(async () => {
  for (const s of opened.splice(0)) await s.close();
});

const FILLER = ['stone', 'path', 'hill', 'bridge', 'lamp', 'garden', 'door', 'field', 'tower'];

/**
 * Agent `a`: 240 short memories, `river` in four of five, `rain` in two of three, `quartz` and `basalt` in a
 * few (as the cross-store test's common-word case, so PostgreSQL prunes the common words), some of them a
 * user's, some archived, one superseded. Agent `d`: most of its `river` memories archived, so a pruned answer
 * is short and the statement runs again in full.
 */
async function seed() {
  const time = { t: 1_000_000 };
  let fts = 0;
  const store = await freshPostgresStore({
    embedding: null,
    now: () => time.t,
    forget: 'keep',
    observer: {
      onStatement: (kind) => {
        if (kind === 'fts') fts += 1;
      },
    },
  });
  opened.push(store);
  const short = (i: number) => {
    const words = [`note${i}`];
    if (i % 5 !== 0) words.push(i % 3 === 0 ? 'river river' : 'river');
    if (i % 3 !== 0) words.push('rain');
    if (i % 24 === 1 || i % 24 === 2) words.push('quartz');
    if (i % 40 === 3) words.push('basalt');
    for (let f = 0; f < i % 9; f += 1) words.push(FILLER[(i + f) % FILLER.length] as string);
    return {
      id: `a${i}`,
      agentId: 'a',
      kind: i % 4 === 0 ? ('event' as const) : ('fact' as const),
      content: words.join(' '),
      tags: [`n:${i % 3}`],
      importance: 0.25 + (i % 3) * 0.25,
      ...(i % 7 === 2 ? { userId: 'u1' } : {}),
    };
  };
  const archivedD = Array.from({ length: 60 }, (_, i) => ({
    id: `d${i}`,
    agentId: 'd',
    kind: 'fact' as const,
    content: `note${i} river${i % 20 === 0 ? ' quartz' : ''} ${FILLER[i % FILLER.length]}`,
  }));
  // Agent `c`: a long (chunked) memory, whose hit is its best chunk and whose brief is the memory's.
  const long = {
    id: 'long',
    agentId: 'c',
    kind: 'fact' as const,
    content: Array.from({ length: 7 }, (_, i) =>
      `Part ${i}: a walk along the river past the ${FILLER[i % FILLER.length]}${i === 5 ? ', quartz in the rocks' : ''}.`.padEnd(
        400,
        ' .',
      ),
    ).join('\n\n'),
    userId: 'u1',
  };
  const others = ['c1', 'c2', 'c3'].map((id, i) => ({
    id,
    agentId: 'c',
    kind: 'fact' as const,
    content: `quartz by the river ${FILLER[i]}`,
  }));
  await store.insertMemories([
    ...Array.from({ length: 240 }, (_, i) => short(i)),
    long,
    ...others,
    ...archivedD,
  ]);
  await store.archiveMemory('c', 'c2');
  for (const m of archivedD.filter((_, i) => i % 20 !== 0 && i % 6 !== 0))
    await store.archiveMemory('d', m.id);
  // Agent `a`: two `quartz` memories archived, one superseded by a later version.
  await store.archiveMemory('a', 'a25');
  await store.archiveMemory('a', 'a73');
  time.t += 1_000;
  const before = time.t;
  time.t += 1_000;
  const old = await store.getMemory('a', 'a49');
  if (old === null) throw new Error('seed: a49 is missing');
  await store.supersedeMemory('a', old.id, old.revision, {
    agentId: 'a',
    kind: 'fact',
    content: `${old.content} quartz again`,
  });
  return { store, before, statements: () => fts };
}

/** What `revalidateBrief` reads for each hit alone at its revision, under `options`: its brief or null. */
async function reread(
  store: PostgresMemoryStore,
  agentId: string,
  hits: readonly LexicalHit[],
  options: RevalidateOptions,
): Promise<(MemoryBrief | null)[]> {
  const out: (MemoryBrief | null)[] = [];
  for (const hit of hits)
    out.push(
      (await store.revalidateBrief(agentId, [{ id: hit.id, revision: hit.revision }], options))[0] ?? null,
    );
  return out;
}

it('returns with each hit the brief revalidateBrief reads at its revision, on the pruned and the full path', {
  timeout: 60_000,
}, async () => {
  const { store, before, statements } = await seed();
  const scopes: RevalidateOptions[] = [
    {},
    { includeArchived: true },
    { forUser: 'u2' },
    { forUser: 'u1', includeArchived: true },
    { asOf: before },
    { includeHistory: true },
  ];
  // The statistics, then one BM25 statement when the pruned answer is exact (2), two when it is not (3); a
  // scoped call is scored in full at once (2).
  // Agent `c`'s chunked memory adds the whole-memory scores' statement (not counted here: null).
  const cases: { query: LexicalQuery; statements: number | null }[] = [
    { query: { agentId: 'a', terms: ['quartz', 'basalt', 'river'], limit: 5 }, statements: 2 },
    { query: { agentId: 'a', terms: ['river', 'rain', 'quartz', 'basalt'], limit: 5 }, statements: 2 },
    { query: { agentId: 'a', terms: ['quartz', 'river'], limit: 40, includeArchived: true }, statements: 2 },
    {
      query: { agentId: 'a', terms: ['quartz', 'river'], limit: 40, time: { includeHistory: true } },
      statements: 2,
    },
    { query: { agentId: 'a', terms: ['quartz', 'river'], limit: 30, kinds: ['fact'] }, statements: 2 },
    { query: { agentId: 'a', terms: ['quartz', 'rain'], limit: 20, mode: 'all' }, statements: 2 },
    { query: { agentId: 'd', terms: ['quartz', 'river'], limit: 10 }, statements: 3 },
    { query: { agentId: 'd', terms: ['quartz', 'river'], limit: 10, time: { asOf: before } }, statements: 3 },
    {
      query: { agentId: 'c', terms: ['quartz', 'river'], limit: 10, includeArchived: true },
      statements: null,
    },
  ];
  let kept = 0;
  let dropped = 0;
  for (const { query, statements: expected } of cases) {
    const before = statements();
    const plain = await store.searchLexical(query);
    const count = statements() - before;
    if (expected !== null) expect(count).toBe(expected);
    expect(plain.hits.length).toBeGreaterThan(0);
    expect(plain.hits.every((h) => !('brief' in h))).toBe(true);
    for (const options of scopes) {
      const start = statements();
      const folded = await store.searchLexical({ ...query, briefs: options });
      // The same statements, the same hits in the same order with the same scores, each with its re-read.
      expect(statements() - start).toBe(count);
      expect(folded.hits.map(({ brief: _brief, ...hit }) => hit)).toEqual(plain.hits);
      expect({ ...folded, hits: [] }).toEqual({ ...plain, hits: [] });
      const briefs = folded.hits.map((h) => h.brief);
      expect(briefs).toEqual(await reread(store, query.agentId, folded.hits, options));
      for (const brief of briefs) {
        if (brief === null) dropped += 1;
        else kept += 1;
      }
    }
  }
  // The mix is real: rows kept and rows dropped by the re-read.
  expect(kept).toBeGreaterThan(0);
  expect(dropped).toBeGreaterThan(0);
  const archived = await store.searchLexical({
    agentId: 'a',
    terms: ['quartz', 'rocks'],
    limit: 50,
    includeArchived: true,
    briefs: {},
  });
  const byId = new Map(archived.hits.map((h) => [h.id, h.brief]));
  expect(byId.get('a25')).toBeNull();
  expect(byId.get('a1')).toMatchObject({ id: 'a1', kind: 'fact', tags: ['n:1'], importance: 0.5 });
  const chunked = await store.searchLexical({
    agentId: 'c',
    terms: ['quartz', 'rocks'],
    limit: 5,
    briefs: {},
  });
  const long = chunked.hits.find((h) => h.id === 'long');
  expect(long?.chunk).toBeDefined();
  expect(long?.brief).toMatchObject({ id: 'long', kind: 'fact' });
});

it('refuses bad re-read options as revalidateBrief does', async () => {
  const { store } = await seed();
  for (const options of BAD_REREAD_OPTIONS) {
    const expected = await revalidateBriefRefusal(store, options);
    expect(expected).toBe('ENGRAM_STORE_INVALID_INPUT');
    for (const terms of [['quartz'], []])
      await expect(
        store.searchLexical({ agentId: 'a', terms, limit: 5, briefs: options as RevalidateOptions }),
      ).rejects.toMatchObject({ code: expected });
  }
});
