/**
 * The conformance suite of the store port, part seven: scopes, metadata filters (in listing and both search
 * arms, a filtered k-NN that never starves), validity in time, history, forgetting (erase and keep), delete-all
 * and contradiction links, as every adapter must behave.
 * Longer than 400 lines: the tests move whole from the SQLite store's facts tests, each a scenario read top to
 * bottom; splitting one part of the contract over two files would hide which store behaviour it pins.
 */
import { describe, expect, it } from 'vitest';
import { type ConformanceOpen, withPort } from './conformance-port.js';

const DIMS = 4;

/** A reproducible pseudo-random vector. */
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

/** Registers the facts part of the suite. */
export function describeFactsConformance(name: string, open: ConformanceOpen): void {
  describe(`store port conformance: ${name}: scopes and metadata`, () => {
    it(
      'refuses bad metadata with a typed error and writes nothing',
      withPort(
        open,
        async (s) => {
          const bad: unknown[] = [[1, 2], 'text', { big: 'x'.repeat(20_000) }, { n: Number.NaN }, new Map()];
          for (const metadata of bad) {
            await expect(
              s.insertMemory({ agentId: 'a', kind: 'fact', content: 'c', metadata: metadata as never }),
            ).rejects.toMatchObject({ code: 'ENGRAM_STORE_INVALID_INPUT' });
          }
          await expect(
            s.searchLexical({
              agentId: 'a',
              terms: ['c'],
              limit: 5,
              filter: { metadata: [{ key: 'a"', op: 'exists' }] },
            }),
          ).rejects.toMatchObject({
            code: 'ENGRAM_STORE_INVALID_INPUT',
            message: 'invalid input: filter is invalid (badKey)',
          });
          expect(await s.listMemories('a')).toEqual([]);
        },
        { start: 1000 },
      ),
    );

    it(
      'filters lexical search and listing by scope, equality, in, range and existence',
      withPort(
        open,
        async (s) => {
          const rows = [
            { id: 'm1', userId: 'alice', sessionId: 's1', metadata: { lang: 'ts', stars: 5, pinned: true } },
            { id: 'm2', userId: 'alice', sessionId: 's2', metadata: { lang: 'go', stars: 50 } },
            { id: 'm3', userId: 'bob', sessionId: 's1', metadata: { lang: 'ts', stars: '50' } },
            { id: 'm4', metadata: { project: { name: 'engram' } } },
          ];
          for (const r of rows) {
            await s.insertMemory({
              agentId: 'a',
              kind: 'fact',
              content: `notes about the build (${r.id})`,
              ...r,
            });
          }
          const ids = async (filter: object): Promise<string[]> =>
            (await s.searchLexical({ agentId: 'a', terms: ['build'], limit: 10, filter })).hits
              .map((h) => h.id)
              .sort();
          expect(await ids({ userId: 'alice' })).toEqual(['m1', 'm2']);
          expect(await ids({ sessionId: 's1' })).toEqual(['m1', 'm3']);
          expect(await ids({ metadata: [{ key: 'lang', op: 'eq', value: 'ts' }] })).toEqual(['m1', 'm3']);
          expect(await ids({ metadata: [{ key: 'lang', op: 'in', values: ['go', 'rust'] }] })).toEqual([
            'm2',
          ]);
          // A string "50" is not the number 50.
          expect(await ids({ metadata: [{ key: 'stars', op: 'range', gte: 10 }] })).toEqual(['m2']);
          expect(await ids({ metadata: [{ key: 'stars', op: 'eq', value: 50 }] })).toEqual(['m2']);
          expect(await ids({ metadata: [{ key: 'pinned', op: 'eq', value: true }] })).toEqual(['m1']);
          expect(await ids({ metadata: [{ key: 'stars', op: 'absent' }] })).toEqual(['m4']);
          expect(await ids({ metadata: [{ key: 'project.name', op: 'eq', value: 'engram' }] })).toEqual([
            'm4',
          ]);
          expect(
            await ids({
              userId: 'alice',
              metadata: [
                { key: 'lang', op: 'eq', value: 'ts' },
                { key: 'pinned', op: 'exists' },
              ],
            }),
          ).toEqual(['m1']);
          expect(await s.getMemory('a', 'm1')).toMatchObject({
            userId: 'alice',
            sessionId: 's1',
            metadata: { lang: 'ts', stars: 5, pinned: true },
          });
          await expect(
            s.listMemories('a', { filter: { metadata: [{ key: 'bad key!', op: 'exists' }] } }),
          ).rejects.toMatchObject({ code: 'ENGRAM_STORE_INVALID_INPUT' });
          const listed = await s.listMemories('a', { filter: { userId: 'bob' } });
          expect(listed.map((m) => m.id)).toEqual(['m3']);
          // Another agent never sees these rows, whatever the filter.
          const other = await s.searchLexical({
            agentId: 'b',
            terms: ['build'],
            limit: 10,
            filter: { userId: 'alice' },
          });
          expect(other.hits).toEqual([]);
        },
        { start: 1000 },
      ),
    );

    it(
      'returns k vector hits for a filter matching 1% of rows, the nearest passing ones',
      withPort(
        open,
        async (s) => {
          const n = 3000;
          const batch = Array.from({ length: n }, (_, i) => ({
            id: `r${i}`,
            agentId: 'a',
            kind: 'fact' as const,
            content: `row ${i}`,
            vector: vec(i + 1),
            metadata: { bucket: i % 100 },
          }));
          await s.insertMemories(batch);
          const query = vec(424242);
          const k = 10;
          const hits = await s.searchVector({
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
        },
        { start: 1000 },
      ),
    );

    it(
      'still returns k hits when the passing rows lie beyond the index k (exact scan)',
      withPort(
        open,
        async (s) => {
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
          await s.insertMemories(batch);
          const hits = await s.searchVector({
            agentId: 'a',
            vector: query,
            k: 10,
            filter: { userId: 'rare' },
          });
          expect(hits).toHaveLength(10);
          expect(hits.every((h) => Number(h.id.slice(1)) < 12)).toBe(true);
        },
        { start: 1000 },
      ),
    );
  });

  describe(`store port conformance: ${name}: corrections and time`, () => {
    it(
      'superseding closes the old fact; search sees current facts, as-of facts, or the history',
      withPort(
        open,
        async (s, clock) => {
          const v1 = await s.insertMemory({
            agentId: 'a',
            kind: 'fact',
            content: 'the API listens on port 8080',
          });
          clock.set(2000);
          const { superseded, replacement } = await s.supersedeMemory('a', v1.id, v1.revision, {
            agentId: 'a',
            kind: 'fact',
            content: 'the API listens on port 9090',
          });
          expect(superseded).toMatchObject({ lifecycle: 'superseded', validFrom: 1000, validTo: 2000 });
          expect(replacement).toMatchObject({ validFrom: 2000, validTo: null });
          const search = async (time?: object) =>
            (
              await s.searchLexical({
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
          expect((await s.revalidate('a', [{ id: v1.id }], { asOf: 1500 })).map((r) => r.id)).toEqual([
            v1.id,
          ]);
          expect(await s.revalidate('a', [{ id: v1.id }])).toEqual([]);
        },
        { start: 1000 },
      ),
    );

    it(
      'history shows the lineage: creation, update with the text it replaced, supersede',
      withPort(
        open,
        async (s, clock) => {
          const v1 = await s.insertMemory({
            agentId: 'a',
            kind: 'fact',
            content: 'deploys go out on Mondays',
          });
          clock.set(2000);
          const v1b = await s.updateMemory('a', v1.id, v1.revision, {
            content: 'deploys go out on Tuesdays',
          });
          clock.set(3000);
          const { replacement } = await s.supersedeMemory('a', v1.id, v1b.revision, {
            agentId: 'a',
            kind: 'fact',
            content: 'deploys go out on Wednesdays',
          });
          const h = await s.history('a', replacement.id);
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
          expect((await s.history('a', v1.id)).chain).toEqual(h.chain);
          expect(await s.history('b', v1.id)).toMatchObject({ chain: [v1.id], records: [], entries: [] });
          // An update of the replacement comes after the supersede, with the text it replaced.
          clock.set(4000);
          await s.updateMemory('a', replacement.id, replacement.revision, {
            content: 'deploys go out on Thursdays',
          });
          const later = await s.history('a', v1.id);
          expect(later.entries.at(-1)).toMatchObject({
            memoryId: replacement.id,
            action: 'updated',
            at: 4000,
            previousContent: 'deploys go out on Wednesdays',
          });
        },
        { start: 1000 },
      ),
    );

    it(
      'forget erases content by default and keeps a tombstone with who, when and why',
      withPort(
        open,
        async (s, clock) => {
          const v1 = await s.insertMemory({ agentId: 'a', kind: 'fact', content: 'my address is 1 Elm St' });
          const v1b = await s.updateMemory('a', v1.id, v1.revision, { content: 'my address is 2 Elm St' });
          const { replacement } = await s.supersedeMemory('a', v1.id, v1b.revision, {
            agentId: 'a',
            kind: 'fact',
            content: 'my address is 3 Oak Ave',
          });
          clock.set(5000);
          const result = await s.forgetMemory('a', replacement.id, {
            actor: 'user',
            reason: 'asked to forget',
          });
          expect(result).toEqual({ forgotten: [v1.id, replacement.id], mode: 'erase' });
          expect(await s.getMemory('a', replacement.id)).toBeNull();
          expect(await s.getMemory('a', v1.id)).toBeNull();
          for (const term of ['elm', 'oak', 'address']) {
            expect(
              (
                await s.searchLexical({
                  agentId: 'a',
                  terms: [term],
                  limit: 5,
                  time: { includeHistory: true },
                })
              ).hits,
            ).toEqual([]);
          }
          const h = await s.history('a', replacement.id);
          const tombstones = h.entries.filter((e) => e.action === 'forgotten');
          expect(tombstones.map((t) => [t.memoryId, t.actor, t.reason, t.at])).toEqual([
            [v1.id, 'user', 'asked to forget', 5000],
            [replacement.id, 'user', 'asked to forget', 5000],
          ]);
          expect(h.entries.every((e) => e.previousContent === null)).toBe(true);
          expect(h.records).toEqual([]);
          await expect(s.forgetMemory('a', replacement.id)).rejects.toMatchObject({
            code: 'ENGRAM_STORE_NOT_FOUND',
          });
        },
        { start: 1000 },
      ),
    );

    it(
      'forget in keep mode keeps the row and its text, marked forgotten and never searched',
      withPort(
        open,
        async (s, clock) => {
          const m = await s.insertMemory({
            agentId: 'a',
            kind: 'fact',
            content: 'the wifi password is hunter2',
          });
          clock.set(4000);
          expect(await s.forgetMemory('a', m.id, { actor: 'agent' })).toEqual({
            forgotten: [m.id],
            mode: 'keep',
          });
          expect(await s.getMemory('a', m.id)).toMatchObject({
            content: 'the wifi password is hunter2',
            lifecycle: 'archived',
            forgottenAt: 4000,
            validTo: 4000,
          });
          expect(
            (
              await s.searchLexical({
                agentId: 'a',
                terms: ['wifi'],
                limit: 5,
                time: { includeHistory: true },
              })
            ).hits,
          ).toEqual([]);
          expect((await s.history('a', m.id)).entries.at(-1)).toMatchObject({
            action: 'forgotten',
            actor: 'agent',
          });
        },
        { start: 1000, forget: 'keep' },
      ),
    );

    it(
      'deleteAll forgets one agent entirely and leaves every other agent untouched',
      withPort(
        open,
        async (s) => {
          for (const agent of ['a', 'b']) {
            await s.insertMemories([
              { agentId: agent, kind: 'fact', content: 'shared words here', vector: vec(1) },
              { agentId: agent, kind: 'semantic', content: 'more shared words' },
            ]);
            await s.appendEvents(agent, 's', [
              { seq: 1, type: 'message', role: 'user', content: 'hello words' },
            ]);
            await s.writeSkill({ agentId: agent, name: 'deploy', description: 'd', content: 'steps' });
          }
          const result = await s.deleteAll('a', { actor: 'operator', reason: 'account closed' });
          expect(result).toEqual({ memories: 2, events: 1, skills: 1, mode: 'erase' });
          expect(await s.listMemories('a')).toEqual([]);
          expect(await s.listSessions('a')).toEqual([]);
          expect(await s.listSkills('a')).toEqual([]);
          expect((await s.searchLexical({ agentId: 'a', terms: ['words'], limit: 5 })).hits).toEqual([]);
          expect(await s.searchVector({ agentId: 'a', vector: vec(1), k: 5 })).toEqual([]);
          expect(await s.listMemories('b')).toHaveLength(2);
          expect((await s.searchLexical({ agentId: 'b', terms: ['words'], limit: 5 })).hits).toHaveLength(2);
          expect(await s.listSkills('b')).toHaveLength(1);
          expect(await s.readEvents('b', 's', 1, 1)).toHaveLength(1);
          expect(await s.listAgents()).toEqual(['b']);
        },
        { start: 1000 },
      ),
    );
  });

  describe(`store port conformance: ${name}: contradiction links`, () => {
    it(
      'links two facts, lists the link for either side, and resolves it by superseding the older',
      withPort(
        open,
        async (s, clock) => {
          const older = await s.insertMemory({
            agentId: 'a',
            kind: 'fact',
            content: 'the API listens on port 8080',
          });
          clock.set(2000);
          const newer = await s.insertMemory({
            agentId: 'a',
            kind: 'fact',
            content: 'the API listens on port 9090',
          });
          expect(await s.linkConflict('a', older.id, newer.id, 'number')).toBe(true);
          expect(await s.linkConflict('a', older.id, newer.id, 'number')).toBe(false);
          expect(await s.listConflicts('a', { ids: [newer.id] })).toEqual([
            {
              olderId: older.id,
              newerId: newer.id,
              state: 'open',
              reason: 'number',
              createdAt: 2000,
              resolvedAt: null,
            },
          ]);
          expect(await s.listConflicts('b')).toEqual([]);
          await expect(s.linkConflict('b', older.id, newer.id, 'number')).rejects.toMatchObject({
            code: 'ENGRAM_STORE_NOT_FOUND',
          });
          clock.set(3000);
          const link = await s.resolveConflict('a', older.id, newer.id, {
            outcome: 'supersede',
            actor: 'maintenance',
          });
          expect(link).toMatchObject({ state: 'resolved', resolvedAt: 3000 });
          expect(await s.getMemory('a', older.id)).toMatchObject({
            lifecycle: 'superseded',
            supersededBy: newer.id,
            validTo: 3000,
          });
          expect(await s.getMemory('a', newer.id)).toMatchObject({ lifecycle: 'active', validTo: null });
          expect((await s.history('a', newer.id)).chain).toEqual([older.id, newer.id]);
          await expect(
            s.resolveConflict('a', older.id, newer.id, { outcome: 'dismiss' }),
          ).rejects.toMatchObject({ code: 'ENGRAM_STORE_REVISION_CONFLICT' });
        },
        { start: 1000 },
      ),
    );

    it(
      'a dismissed conflict keeps both facts current',
      withPort(
        open,
        async (s) => {
          const x = await s.insertMemory({ agentId: 'a', kind: 'fact', content: 'staging uses port 8080' });
          const y = await s.insertMemory({ agentId: 'a', kind: 'fact', content: 'staging uses port 9090' });
          await s.linkConflict('a', x.id, y.id, 'number');
          await s.resolveConflict('a', x.id, y.id, { outcome: 'dismiss', reason: 'both hold' });
          expect((await s.getMemory('a', x.id))?.lifecycle).toBe('active');
          expect((await s.getMemory('a', y.id))?.lifecycle).toBe('active');
          expect(await s.listConflicts('a', { state: 'open' })).toEqual([]);
        },
        { start: 1000 },
      ),
    );

    it(
      'a listing for a user holds only links it sees, so its limit counts none of another user’s',
      withPort(
        open,
        async (s, clock) => {
          const fact = async (content: string, userId?: string) =>
            (await s.insertMemory({ agentId: 'a', kind: 'fact', content, ...(userId ? { userId } : {}) })).id;
          // Bob's links are the oldest, so an unscoped first page is all his.
          for (const n of [1, 2, 3]) {
            clock.set(1000 + n);
            await s.linkConflict(
              'a',
              await fact(`bob ${n} a`, 'bob'),
              await fact(`bob ${n} b`, 'bob'),
              'number',
            );
          }
          clock.set(2000);
          const alice = [await fact('alice a', 'alice'), await fact('alice b', 'alice')] as const;
          await s.linkConflict('a', alice[0], alice[1], 'number');
          clock.set(3000);
          const shared = [await fact('shared a'), await fact('shared b')] as const;
          await s.linkConflict('a', shared[0], shared[1], 'number');
          const pairs = (links: readonly { olderId: string; newerId: string }[]) =>
            links.map((l) => [l.olderId, l.newerId]);
          expect(await s.listConflicts('a', { state: 'open', limit: 1 })).toHaveLength(1);
          expect(pairs(await s.listConflicts('a', { state: 'open', limit: 1, forUser: 'alice' }))).toEqual([
            [...alice],
          ]);
          expect(pairs(await s.listConflicts('a', { state: 'open', forUser: 'alice' }))).toEqual([
            [...alice],
            [...shared],
          ]);
          expect(await s.listConflicts('a', { forUser: 'carol' })).toHaveLength(1);
          expect(await s.listConflicts('a')).toHaveLength(5);
          await expect(s.listConflicts('a', { forUser: '' })).rejects.toMatchObject({
            code: 'ENGRAM_STORE_INVALID_INPUT',
          });
        },
        { start: 1000 },
      ),
    );
  });

  describe(`store port conformance: ${name}: validity through updateMemory`, () => {
    it(
      'a lifecycle patch to superseded closes the fact, back to active reopens it',
      withPort(
        open,
        async (s, clock) => {
          const m = await s.insertMemory({ agentId: 'a', kind: 'fact', content: 'the office is in Lyon' });
          clock.set(7000);
          const closed = await s.updateMemory('a', m.id, m.revision, { lifecycle: 'superseded' });
          expect(closed).toMatchObject({ lifecycle: 'superseded', validTo: 7000 });
          const asOf = (t: number) =>
            s.searchLexical({ agentId: 'a', terms: ['office'], limit: 5, time: { asOf: t } });
          expect((await asOf(6999)).hits.map((h) => h.id)).toEqual([m.id]);
          expect((await asOf(7000)).hits).toEqual([]);
          const reopened = await s.updateMemory('a', m.id, closed.revision, { lifecycle: 'active' });
          expect(reopened.validTo).toBeNull();
        },
        { start: 1000 },
      ),
    );
  });
}
