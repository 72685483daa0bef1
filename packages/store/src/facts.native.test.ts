/**
 * Scopes, metadata filters, validity in time, history, forgetting and contradiction links, against a real
 * SQLite file: what a user of the store sees after each call.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ForgetMode } from './facts-types.js';
import { openDatabase } from './native.js';
import { createSqliteMemoryStore, type SqliteMemoryStore } from './sqlite-store.js';

const DIMS = 8;
let dir: string;
let clock: number;
const open: SqliteMemoryStore[] = [];

function openStore(forget?: ForgetMode, name = 'facts.db'): SqliteMemoryStore {
  const store = createSqliteMemoryStore({
    path: join(dir, name),
    embedding: { id: 'test', dimensions: DIMS },
    now: () => clock,
    ...(forget === undefined ? {} : { forget }),
  });
  open.push(store);
  return store;
}

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'engram-facts-'));
  clock = 1000;
});

afterEach(() => {
  for (const s of open.splice(0)) s.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A reproducible pseudo-random unit vector. */
function vec(seed: number): Float32Array {
  let x = seed * 2654435761;
  const v = new Float32Array(DIMS);
  for (let i = 0; i < DIMS; i += 1) {
    x = (x * 1103515245 + 12345) % 2147483648;
    v[i] = (x / 2147483648) * 2 - 1;
  }
  return v;
}

function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i += 1) {
    dot += (a[i] ?? 0) * (b[i] ?? 0);
    na += (a[i] ?? 0) ** 2;
    nb += (b[i] ?? 0) ** 2;
  }
  return dot / Math.sqrt(na * nb);
}

describe('scopes and metadata', () => {
  it('refuses bad metadata with a typed error and writes nothing', async () => {
    const store = openStore();
    const bad: unknown[] = [[1, 2], 'text', { big: 'x'.repeat(20_000) }, { n: Number.NaN }, new Map()];
    for (const metadata of bad) {
      await expect(
        store.insertMemory({ agentId: 'a', kind: 'fact', content: 'c', metadata: metadata as never }),
      ).rejects.toMatchObject({ code: 'ENGRAM_STORE_INVALID_INPUT' });
    }
    await expect(
      store.searchLexical({
        agentId: 'a',
        terms: ['c'],
        limit: 5,
        filter: { metadata: [{ key: 'a"', op: 'exists' }] },
      }),
    ).rejects.toMatchObject({
      code: 'ENGRAM_STORE_INVALID_INPUT',
      message: 'invalid input: filter is invalid (badKey)',
    });
    expect(await store.listMemories('a')).toEqual([]);
  });

  it('filters lexical search and listing by scope, equality, in, range and existence', async () => {
    const store = openStore();
    const rows = [
      { id: 'm1', userId: 'alice', sessionId: 's1', metadata: { lang: 'ts', stars: 5, pinned: true } },
      { id: 'm2', userId: 'alice', sessionId: 's2', metadata: { lang: 'go', stars: 50 } },
      { id: 'm3', userId: 'bob', sessionId: 's1', metadata: { lang: 'ts', stars: '50' } },
      { id: 'm4', metadata: { project: { name: 'engram' } } },
    ];
    for (const r of rows) {
      await store.insertMemory({
        agentId: 'a',
        kind: 'fact',
        content: `notes about the build (${r.id})`,
        ...r,
      });
    }
    const ids = async (filter: object): Promise<string[]> =>
      (await store.searchLexical({ agentId: 'a', terms: ['build'], limit: 10, filter })).hits
        .map((h) => h.id)
        .sort();
    expect(await ids({ userId: 'alice' })).toEqual(['m1', 'm2']);
    expect(await ids({ sessionId: 's1' })).toEqual(['m1', 'm3']);
    expect(await ids({ metadata: [{ key: 'lang', op: 'eq', value: 'ts' }] })).toEqual(['m1', 'm3']);
    expect(await ids({ metadata: [{ key: 'lang', op: 'in', values: ['go', 'rust'] }] })).toEqual(['m2']);
    // A string "50" is not the number 50.
    expect(await ids({ metadata: [{ key: 'stars', op: 'range', gte: 10 }] })).toEqual(['m2']);
    expect(await ids({ metadata: [{ key: 'stars', op: 'eq', value: 50 }] })).toEqual(['m2']);
    expect(await ids({ metadata: [{ key: 'pinned', op: 'eq', value: true }] })).toEqual(['m1']);
    expect(await ids({ metadata: [{ key: 'stars', op: 'absent' }] })).toEqual(['m4']);
    expect(await ids({ metadata: [{ key: 'project.name', op: 'eq', value: 'engram' }] })).toEqual(['m4']);
    expect(
      await ids({
        userId: 'alice',
        metadata: [
          { key: 'lang', op: 'eq', value: 'ts' },
          { key: 'pinned', op: 'exists' },
        ],
      }),
    ).toEqual(['m1']);
    const listed = await store.listMemories('a', { filter: { userId: 'bob' } });
    expect(listed.map((m) => m.id)).toEqual(['m3']);
    // Another agent never sees these rows, whatever the filter.
    const other = await store.searchLexical({
      agentId: 'b',
      terms: ['build'],
      limit: 10,
      filter: { userId: 'alice' },
    });
    expect(other.hits).toEqual([]);
  });

  it('returns k vector hits for a filter matching 1% of rows, the nearest passing ones', async () => {
    const store = openStore();
    const n = 3000;
    const batch = Array.from({ length: n }, (_, i) => ({
      id: `r${i}`,
      agentId: 'a',
      kind: 'fact' as const,
      content: `row ${i}`,
      vector: vec(i + 1),
      metadata: { bucket: i % 100 },
    }));
    await store.insertMemories(batch);
    const query = vec(424242);
    const k = 10;
    const hits = await store.searchVector({
      agentId: 'a',
      vector: query,
      k,
      filter: { metadata: [{ key: 'bucket', op: 'eq', value: 7 }] },
    });
    const expected = batch
      .filter((r) => r.metadata.bucket === 7)
      .map((r) => ({ id: r.id, s: cosine(query, r.vector) }))
      .sort((x, y) => y.s - x.s)
      .slice(0, k)
      .map((r) => r.id);
    expect(hits.map((h) => h.id)).toEqual(expected);
  });

  it('still returns k hits when the passing rows lie beyond the index k (exact scan)', async () => {
    const store = openStore();
    const n = 5000;
    const query = vec(1);
    // The passing rows point away from the query: the 4,096 nearest neighbours hold none of them.
    const far = new Float32Array(query.map((x) => -x));
    const batch = Array.from({ length: n }, (_, i) => ({
      id: `r${i}`,
      agentId: 'a',
      kind: 'fact' as const,
      content: `row ${i}`,
      vector: i < 12 ? far : vec(i + 10),
      userId: i < 12 ? 'rare' : 'common',
    }));
    await store.insertMemories(batch);
    const hits = await store.searchVector({ agentId: 'a', vector: query, k: 10, filter: { userId: 'rare' } });
    expect(hits).toHaveLength(10);
    expect(hits.every((h) => Number(h.id.slice(1)) < 12)).toBe(true);
  });
});

describe('corrections and time', () => {
  it('superseding closes the old fact; search sees current facts, as-of facts, or the history', async () => {
    const store = openStore();
    const v1 = await store.insertMemory({
      agentId: 'a',
      kind: 'fact',
      content: 'the API listens on port 8080',
    });
    clock = 2000;
    const { superseded, replacement } = await store.supersedeMemory('a', v1.id, v1.revision, {
      agentId: 'a',
      kind: 'fact',
      content: 'the API listens on port 9090',
    });
    expect(superseded).toMatchObject({ lifecycle: 'superseded', validFrom: 1000, validTo: 2000 });
    expect(replacement).toMatchObject({ validFrom: 2000, validTo: null });
    const search = async (time?: object) =>
      (
        await store.searchLexical({
          agentId: 'a',
          terms: ['api', 'port'],
          limit: 10,
          ...(time ? { time } : {}),
        })
      ).hits
        .map((h) => h.id)
        .sort();
    expect(await search()).toEqual([replacement.id]);
    expect(await search({ asOf: 1500 })).toEqual([v1.id]);
    expect(await search({ asOf: 2000 })).toEqual([replacement.id]);
    expect(await search({ includeHistory: true })).toEqual([v1.id, replacement.id].sort());
    expect((await store.revalidate('a', [{ id: v1.id }], { asOf: 1500 })).map((r) => r.id)).toEqual([v1.id]);
    expect(await store.revalidate('a', [{ id: v1.id }])).toEqual([]);
  });

  it('history shows the lineage: creation, update with the text it replaced, supersede', async () => {
    const store = openStore();
    const v1 = await store.insertMemory({ agentId: 'a', kind: 'fact', content: 'deploys go out on Mondays' });
    clock = 2000;
    const v1b = await store.updateMemory('a', v1.id, v1.revision, { content: 'deploys go out on Tuesdays' });
    clock = 3000;
    const { replacement } = await store.supersedeMemory('a', v1.id, v1b.revision, {
      agentId: 'a',
      kind: 'fact',
      content: 'deploys go out on Wednesdays',
    });
    const h = await store.history('a', replacement.id);
    expect(h.chain).toEqual([v1.id, replacement.id]);
    expect(h.entries.map((e) => [e.memoryId, e.action, e.at])).toEqual([
      [v1.id, 'created', 1000],
      [v1.id, 'updated', 2000],
      [replacement.id, 'created', 3000],
      [v1.id, 'superseded', 3000],
    ]);
    expect(h.entries[1]?.previousContent).toBe('deploys go out on Mondays');
    expect(h.entries[3]?.relatedId).toBe(replacement.id);
    // The same lineage from either end; nothing for another agent.
    expect((await store.history('a', v1.id)).chain).toEqual(h.chain);
    expect(await store.history('b', v1.id)).toMatchObject({ chain: [v1.id], records: [], entries: [] });
  });

  it('forget erases content by default and keeps a tombstone with who, when and why', async () => {
    const store = openStore();
    const v1 = await store.insertMemory({ agentId: 'a', kind: 'fact', content: 'my address is 1 Elm St' });
    const v1b = await store.updateMemory('a', v1.id, v1.revision, { content: 'my address is 2 Elm St' });
    const { replacement } = await store.supersedeMemory('a', v1.id, v1b.revision, {
      agentId: 'a',
      kind: 'fact',
      content: 'my address is 3 Oak Ave',
    });
    clock = 5000;
    const result = await store.forgetMemory('a', replacement.id, {
      actor: 'user',
      reason: 'asked to forget',
    });
    expect(result).toEqual({ forgotten: [v1.id, replacement.id], mode: 'erase' });
    expect(await store.getMemory('a', replacement.id)).toBeNull();
    expect(await store.getMemory('a', v1.id)).toBeNull();
    for (const term of ['elm', 'oak', 'address']) {
      expect(
        (await store.searchLexical({ agentId: 'a', terms: [term], limit: 5, time: { includeHistory: true } }))
          .hits,
      ).toEqual([]);
    }
    const h = await store.history('a', replacement.id);
    const tombstones = h.entries.filter((e) => e.action === 'forgotten');
    expect(tombstones.map((t) => [t.memoryId, t.actor, t.reason, t.at])).toEqual([
      [v1.id, 'user', 'asked to forget', 5000],
      [replacement.id, 'user', 'asked to forget', 5000],
    ]);
    expect(h.entries.every((e) => e.previousContent === null)).toBe(true);
    // No trace of the text anywhere in the file.
    const db = openDatabase(join(dir, 'facts.db'));
    try {
      const text = db
        .prepare("SELECT count(*) AS n FROM memory_history WHERE content LIKE '%Elm%'")
        .get() as { n: number };
      expect(text.n).toBe(0);
      expect((db.prepare('SELECT count(*) AS n FROM memories').get() as { n: number }).n).toBe(0);
      expect((db.prepare('SELECT count(*) AS n FROM lexical_postings').get() as { n: number }).n).toBe(0);
    } finally {
      db.close();
    }
    await expect(store.forgetMemory('a', replacement.id)).rejects.toMatchObject({
      code: 'ENGRAM_STORE_NOT_FOUND',
    });
  });

  it('forget in keep mode keeps the row and its text, marked forgotten and never searched', async () => {
    const store = openStore('keep');
    const m = await store.insertMemory({
      agentId: 'a',
      kind: 'fact',
      content: 'the wifi password is hunter2',
    });
    clock = 4000;
    expect(await store.forgetMemory('a', m.id, { actor: 'agent' })).toEqual({
      forgotten: [m.id],
      mode: 'keep',
    });
    expect(await store.getMemory('a', m.id)).toMatchObject({
      content: 'the wifi password is hunter2',
      lifecycle: 'archived',
      forgottenAt: 4000,
      validTo: 4000,
    });
    expect(
      (await store.searchLexical({ agentId: 'a', terms: ['wifi'], limit: 5, time: { includeHistory: true } }))
        .hits,
    ).toEqual([]);
    expect((await store.history('a', m.id)).entries.at(-1)).toMatchObject({
      action: 'forgotten',
      actor: 'agent',
    });
  });

  it('deleteAll forgets one agent entirely and leaves every other agent untouched', async () => {
    const store = openStore();
    for (const agent of ['a', 'b']) {
      await store.insertMemories([
        { agentId: agent, kind: 'fact', content: 'shared words here', vector: vec(1) },
        { agentId: agent, kind: 'semantic', content: 'more shared words' },
      ]);
      await store.appendEvents(agent, 's', [
        { seq: 1, type: 'message', role: 'user', content: 'hello words' },
      ]);
      await store.writeSkill({ agentId: agent, name: 'deploy', description: 'd', content: 'steps' });
    }
    const result = await store.deleteAll('a', { actor: 'operator', reason: 'account closed' });
    expect(result).toEqual({ memories: 2, events: 1, skills: 1, mode: 'erase' });
    expect(await store.listMemories('a')).toEqual([]);
    expect(await store.listSessions('a')).toEqual([]);
    expect(await store.listSkills('a')).toEqual([]);
    expect((await store.searchLexical({ agentId: 'a', terms: ['words'], limit: 5 })).hits).toEqual([]);
    expect(await store.searchVector({ agentId: 'a', vector: vec(1), k: 5 })).toEqual([]);
    expect(await store.listMemories('b')).toHaveLength(2);
    expect((await store.searchLexical({ agentId: 'b', terms: ['words'], limit: 5 })).hits).toHaveLength(2);
    expect(await store.listSkills('b')).toHaveLength(1);
    expect(await store.readEvents('b', 's', 1, 1)).toHaveLength(1);
  });
});

describe('contradiction links', () => {
  it('links two facts, lists the link for either side, and resolves it by superseding the older', async () => {
    const store = openStore();
    const older = await store.insertMemory({
      agentId: 'a',
      kind: 'fact',
      content: 'the API listens on port 8080',
    });
    clock = 2000;
    const newer = await store.insertMemory({
      agentId: 'a',
      kind: 'fact',
      content: 'the API listens on port 9090',
    });
    expect(await store.linkConflict('a', older.id, newer.id, 'number')).toBe(true);
    expect(await store.linkConflict('a', older.id, newer.id, 'number')).toBe(false);
    expect(await store.listConflicts('a', { ids: [newer.id] })).toEqual([
      {
        olderId: older.id,
        newerId: newer.id,
        state: 'open',
        reason: 'number',
        createdAt: 2000,
        resolvedAt: null,
      },
    ]);
    expect(await store.listConflicts('b')).toEqual([]);
    await expect(store.linkConflict('b', older.id, newer.id, 'number')).rejects.toMatchObject({
      code: 'ENGRAM_STORE_NOT_FOUND',
    });
    clock = 3000;
    const link = await store.resolveConflict('a', older.id, newer.id, {
      outcome: 'supersede',
      actor: 'maintenance',
    });
    expect(link).toMatchObject({ state: 'resolved', resolvedAt: 3000 });
    expect(await store.getMemory('a', older.id)).toMatchObject({
      lifecycle: 'superseded',
      supersededBy: newer.id,
      validTo: 3000,
    });
    expect(await store.getMemory('a', newer.id)).toMatchObject({ lifecycle: 'active', validTo: null });
    expect((await store.history('a', newer.id)).chain).toEqual([older.id, newer.id]);
    await expect(
      store.resolveConflict('a', older.id, newer.id, { outcome: 'dismiss' }),
    ).rejects.toMatchObject({ code: 'ENGRAM_STORE_REVISION_CONFLICT' });
  });

  it('a dismissed conflict keeps both facts current', async () => {
    const store = openStore();
    const x = await store.insertMemory({ agentId: 'a', kind: 'fact', content: 'staging uses port 8080' });
    const y = await store.insertMemory({ agentId: 'a', kind: 'fact', content: 'staging uses port 9090' });
    await store.linkConflict('a', x.id, y.id, 'number');
    await store.resolveConflict('a', x.id, y.id, { outcome: 'dismiss', reason: 'both hold' });
    expect((await store.getMemory('a', x.id))?.lifecycle).toBe('active');
    expect((await store.getMemory('a', y.id))?.lifecycle).toBe('active');
    expect(await store.listConflicts('a', { state: 'open' })).toEqual([]);
  });
});

describe('validity through updateMemory', () => {
  it('a lifecycle patch to superseded closes the fact, back to active reopens it', async () => {
    const store = openStore();
    const m = await store.insertMemory({ agentId: 'a', kind: 'fact', content: 'the office is in Lyon' });
    clock = 7000;
    const closed = await store.updateMemory('a', m.id, m.revision, { lifecycle: 'superseded' });
    expect(closed).toMatchObject({ lifecycle: 'superseded', validTo: 7000 });
    const asOf = (t: number) =>
      store.searchLexical({ agentId: 'a', terms: ['office'], limit: 5, time: { asOf: t } });
    expect((await asOf(6999)).hits.map((h) => h.id)).toEqual([m.id]);
    expect((await asOf(7000)).hits).toEqual([]);
    const reopened = await store.updateMemory('a', m.id, closed.revision, { lifecycle: 'active' });
    expect(reopened.validTo).toBeNull();
  });
});
