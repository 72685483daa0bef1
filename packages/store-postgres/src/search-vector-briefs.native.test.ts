// The k-NN's folded re-read (`VectorQuery.briefs`): with it every hit carries exactly the brief
// `revalidateBrief` reads for its id under the same options (null when that re-read drops the row), in the
// same statement; without it the hits are unchanged and carry none.
import type { MemoryBrief, RevalidateOptions, VectorHit } from '@engram/store';
import { afterEach, expect, it } from 'vitest';
import type { PostgresMemoryStore } from './store.js';
import { freshPostgresStore } from './testing/fresh.js';
import { BAD_REREAD_OPTIONS, revalidateBriefRefusal } from './testing/reread.js';

const opened: PostgresMemoryStore[] = [];
afterEach(async () => {
  for (const s of opened.splice(0)) await s.close();
});

const DIMS = 8;

/** A unit vector near `base` (a small turn by `seed`), so every row is a neighbour of the query. */
function near(seed: number): Float32Array {
  const v = new Float32Array(DIMS).fill(1);
  v[seed % DIMS] = 1 + (seed + 1) * 0.05;
  const n = Math.hypot(...v);
  return v.map((y) => y / n);
}

/** A clock the test moves: every write is stamped by it. */
function clock(start: number) {
  const state = { t: start };
  return { now: () => state.t, tick: (ms: number) => (state.t += ms) };
}

/** The agent's rows in every state a re-read tells apart, each with a vector near the query. */
async function seed() {
  const time = clock(1_000_000);
  const store = await freshPostgresStore({
    embedding: { id: 'briefs', dimensions: DIMS },
    now: time.now,
    forget: 'keep',
  });
  opened.push(store);
  let n = 0;
  const add = (content: string, extra: { userId?: string; tags?: string[]; kind?: 'episodic' } = {}) =>
    store.insertMemory({
      agentId: 'a',
      kind: extra.kind ?? 'semantic',
      content,
      tags: extra.tags ?? ['topic:ops'],
      importance: 0.25 + (n % 3) * 0.25,
      sessionId: 's',
      seqFrom: ++n,
      vector: near(n),
      ...(extra.userId === undefined ? {} : { userId: extra.userId }),
    });
  const active = await add('The deploy runs on Fridays', { kind: 'episodic' });
  const archived = await add('The office closes at six');
  await store.archiveMemory('a', archived.id);
  const old = await add('Backups run nightly');
  time.tick(1_000);
  const beforeSupersede = time.now();
  time.tick(1_000);
  const { replacement } = await store.supersedeMemory('a', old.id, old.revision, {
    agentId: 'a',
    kind: 'semantic',
    content: 'Backups run weekly',
    vector: near(40),
  });
  const mine = await add('My editor is vim', { userId: 'u1' });
  const forgotten = await add('The old password was hunter2');
  await store.forgetMemory('a', forgotten.id);
  // Another agent's identical vector: never a hit of agent `a`.
  await store.insertMemory({
    agentId: 'b',
    kind: 'semantic',
    content: 'The deploy runs on Fridays',
    vector: near(1),
  });
  return { store, beforeSupersede, ids: { active, archived, old, replacement, mine, forgotten } };
}

/** What `revalidateBrief` reads for each hit's id alone, under `options`: its brief or null. */
async function reread(
  store: PostgresMemoryStore,
  hits: readonly VectorHit[],
  options: RevalidateOptions,
): Promise<(MemoryBrief | null)[]> {
  const out: (MemoryBrief | null)[] = [];
  for (const hit of hits) out.push((await store.revalidateBrief('a', [{ id: hit.id }], options))[0] ?? null);
  return out;
}

it('returns with each hit the brief revalidateBrief reads under the same options, null where it drops the row', async () => {
  const { store, beforeSupersede, ids } = await seed();
  const vector = near(3);
  const plain = await store.searchVector({ agentId: 'a', vector, k: 20 });
  // The archived and superseded rows' vectors are still in the index: the re-read decides.
  expect(plain.map((h) => h.id)).toEqual(
    expect.arrayContaining([ids.active.id, ids.archived.id, ids.old.id, ids.replacement.id, ids.mine.id]),
  );
  expect(plain.every((h) => !('brief' in h))).toBe(true);
  const scopes: RevalidateOptions[] = [
    {},
    { includeArchived: true },
    { asOf: beforeSupersede },
    { asOf: beforeSupersede, includeArchived: true },
    { includeHistory: true },
    { forUser: 'u2' },
    { forUser: 'u1', includeArchived: true },
  ];
  for (const options of scopes) {
    const folded = await store.searchVector({ agentId: 'a', vector, k: 20, briefs: options });
    // The same neighbours in the same order, each with its re-read.
    expect(folded.map(({ brief: _brief, ...hit }) => hit)).toEqual(plain);
    expect(folded.map((h) => h.brief)).toEqual(await reread(store, folded, options));
  }
  // The mix is real: kept and dropped rows under the default and the archived and time scopes.
  const byId = async (options: RevalidateOptions) =>
    new Map(
      (await store.searchVector({ agentId: 'a', vector, k: 20, briefs: options })).map((h) => [
        h.id,
        h.brief,
      ]),
    );
  const current = await byId({});
  expect(current.get(ids.active.id)).toMatchObject({
    id: ids.active.id,
    kind: 'episodic',
    tags: ['topic:ops'],
  });
  expect(current.get(ids.archived.id)).toBeNull();
  expect(current.get(ids.old.id)).toBeNull();
  expect((await byId({ includeArchived: true })).get(ids.archived.id)).toMatchObject({ id: ids.archived.id });
  const past = await byId({ asOf: beforeSupersede });
  expect(past.get(ids.old.id)).toMatchObject({ id: ids.old.id });
  expect(past.get(ids.replacement.id)).toBeNull();
  expect((await byId({ forUser: 'u2' })).get(ids.mine.id)).toBeNull();
});

it('folds the re-read into a filtered k-NN too', async () => {
  const { store, ids } = await seed();
  const vector = near(5);
  const options: RevalidateOptions = { includeArchived: true };
  const folded = await store.searchVector({
    agentId: 'a',
    vector,
    k: 20,
    kinds: ['semantic'],
    tags: ['topic:ops'],
    briefs: options,
  });
  expect(folded.map((h) => h.id)).toContain(ids.archived.id);
  expect(folded.map((h) => h.id)).not.toContain(ids.active.id);
  expect(folded.map((h) => h.brief)).toEqual(await reread(store, folded, options));
});

it('refuses bad re-read options as revalidateBrief does', async () => {
  const { store } = await seed();
  for (const options of BAD_REREAD_OPTIONS) {
    const expected = await revalidateBriefRefusal(store, options);
    expect(expected).toBe('ENGRAM_STORE_INVALID_INPUT');
    await expect(
      store.searchVector({ agentId: 'a', vector: near(1), k: 5, briefs: options as RevalidateOptions }),
    ).rejects.toMatchObject({ code: expected });
  }
});
