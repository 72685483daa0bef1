/**
 * The conformance suite of the store port, the user scope: users of one agent are boundaries. A memory without
 * a user is the agent's own, shared by all its users; a call for a user (`forUser`) sees those and that
 * user's own, never another user's, and a write for a user changes only that user's own (another user's memory and
 * the agent's shared ones are not found). The exact-duplicate rule holds inside a user; `deleteAll({ userId })`
 * forgets that user's memories and events only; events carry their user. An erased memory's history (its
 * tombstone) shows to its own user and the whole agent only.
 */
import { describe, expect, it } from 'vitest';
import { type ConformanceOpen, type ConformancePort, vec4, withPort } from './conformance-port.js';
import { mulberry32 } from './prng.js';

/** The user scope of a call by id (the port's `UserScope`). */
interface Scope {
  readonly forUser?: string;
}

interface ScopedRecord {
  readonly id: string;
  readonly userId: string | null;
  readonly revision: number;
  readonly lifecycle: string;
  readonly content: string;
}

interface ScopedNewMemory {
  readonly agentId: string;
  readonly kind: 'fact' | 'semantic';
  readonly content: string;
  readonly userId?: string;
  readonly vector?: Float32Array;
}

/** The slices of the port the scope suite calls, with their scope arguments. */
interface ScopePort {
  insertUniqueMemory(
    input: ScopedNewMemory,
  ): Promise<{ readonly created: boolean; readonly record: ScopedRecord }>;
  insertMemories(inputs: readonly ScopedNewMemory[]): Promise<readonly ScopedRecord[]>;
  getMemory(agentId: string, id: string, scope?: Scope): Promise<ScopedRecord | null>;
  listMemories(
    agentId: string,
    options?: { readonly filter?: { readonly forUser?: string; readonly userId?: string } },
  ): Promise<readonly ScopedRecord[]>;
  searchLexical(query: {
    readonly agentId: string;
    readonly terms: readonly string[];
    readonly limit: number;
    readonly filter?: { readonly forUser?: string; readonly userId?: string };
  }): Promise<{
    readonly hits: readonly { readonly id: string; readonly score: number; readonly memoryScore?: number }[];
  }>;
  searchVector(query: {
    readonly agentId: string;
    readonly vector: Float32Array;
    readonly k: number;
    readonly filter?: { readonly forUser?: string; readonly userId?: string };
  }): Promise<readonly { readonly id: string; readonly distance: number }[]>;
  revalidate(
    agentId: string,
    candidates: readonly { readonly id: string }[],
    options?: Scope,
  ): Promise<readonly ScopedRecord[]>;
  history(
    agentId: string,
    id: string,
    scope?: Scope,
  ): Promise<{
    readonly records: readonly { readonly id: string }[];
    readonly entries: readonly {
      readonly memoryId: string;
      readonly action: string;
      readonly actor: string | null;
      readonly reason: string | null;
    }[];
  }>;
  updateMemory(
    agentId: string,
    id: string,
    expectedRevision: number,
    patch: { readonly content?: string; readonly importance?: number },
    scope?: Scope,
  ): Promise<ScopedRecord>;
  deleteMemory(agentId: string, id: string, scope?: Scope): Promise<boolean>;
  archiveMemory(agentId: string, id: string, expectedRevision?: number, scope?: Scope): Promise<ScopedRecord>;
  setLifecycle(
    agentId: string,
    id: string,
    expectedRevision: number,
    lifecycle: 'active' | 'archived',
    scope?: Scope,
  ): Promise<ScopedRecord>;
  supersedeMemory(
    agentId: string,
    oldId: string,
    expectedRevision: number,
    replacement: ScopedNewMemory,
    options?: Scope & { readonly actor?: string; readonly reason?: string },
  ): Promise<{ readonly replacement: { readonly id: string } }>;
  forgetMemory(
    agentId: string,
    id: string,
    options?: { readonly reason?: string; readonly forUser?: string },
  ): Promise<{ readonly forgotten: readonly string[] }>;
  deleteAll(
    agentId: string,
    options?: { readonly userId?: string },
  ): Promise<{ readonly memories: number; readonly events: number; readonly skills: number }>;
  appendEvents(
    agentId: string,
    sessionId: string,
    events: readonly {
      readonly seq: number;
      readonly type: 'message';
      readonly role: string;
      readonly content: string;
      readonly userId?: string | null;
    }[],
  ): Promise<{ readonly appended: number; readonly skipped: number }>;
  readEvents(
    agentId: string,
    sessionId: string,
    fromSeq: number,
    toSeq: number,
  ): Promise<readonly { readonly seq: number; readonly userId: string | null }[]>;
  writeSkill(input: {
    readonly agentId: string;
    readonly name: string;
    readonly description: string;
    readonly content: string;
  }): Promise<unknown>;
  listSkills(agentId: string): Promise<readonly unknown[]>;
  exportRecords(options?: { readonly agentId?: string }): AsyncIterable<ExportedRecord>;
  importRecords(
    records: Iterable<ExportedRecord>,
    options?: { readonly agentId?: string },
  ): Promise<{ readonly imported: { readonly events: number; readonly history: number } }>;
}

/** An export record as this suite reads it (the event and history rows; the rest passed on untouched). */
interface ExportedRecord {
  readonly type: string;
  readonly row?: Readonly<Record<string, string | number | null>>;
}

/** The suite's port with the scope arguments (both adapters take them; `ConformancePort` omits them). */
function scoped(s: ConformancePort): ScopePort {
  return s as unknown as ScopePort;
}

const notFound = { code: 'ENGRAM_STORE_NOT_FOUND' };

/** The agent's own memory, Alice's and Bob's, each with a vector near (1, 0, 0, 0). */
async function threeOwners(
  s: ScopePort,
): Promise<{ own: ScopedRecord; alice: ScopedRecord; bob: ScopedRecord }> {
  const [own, alice, bob] = await s.insertMemories([
    { agentId: 'a', kind: 'fact', content: 'The office opens at nine', vector: vec4(1, 0, 0, 0) },
    {
      agentId: 'a',
      kind: 'fact',
      content: 'Alice has an office key',
      userId: 'alice',
      vector: vec4(1, 0.1, 0, 0),
    },
    {
      agentId: 'a',
      kind: 'fact',
      content: 'Bob has an office plant',
      userId: 'bob',
      vector: vec4(1, 0.2, 0, 0),
    },
  ]);
  if (own === undefined || alice === undefined || bob === undefined) throw new Error('insert failed');
  return { own, alice, bob };
}

const ids = (rows: readonly { readonly id: string }[]): string[] => rows.map((r) => r.id).sort();

/** Cosine distance of two vectors. */
function cosineDistance(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i += 1) {
    dot += (a[i] as number) * (b[i] as number);
    na += (a[i] as number) ** 2;
    nb += (b[i] as number) ** 2;
  }
  return 1 - dot / Math.sqrt(na * nb);
}

/** Registers the user-scope part of the suite. */
export function describeScopeConformance(name: string, open: ConformanceOpen): void {
  describe(`store port conformance: ${name}: users are boundaries`, () => {
    it(
      'the exact-duplicate rule holds inside a user: two users, two memories; one user twice, one',
      withPort(open, async (port) => {
        const s = scoped(port);
        const text = 'I am allergic to peanuts';
        const alice = await s.insertUniqueMemory({
          agentId: 'a',
          kind: 'fact',
          content: text,
          userId: 'alice',
        });
        const bob = await s.insertUniqueMemory({ agentId: 'a', kind: 'fact', content: text, userId: 'bob' });
        expect([alice.created, bob.created]).toEqual([true, true]);
        expect(bob.record.userId).toBe('bob');
        expect(bob.record.id).not.toBe(alice.record.id);
        // Bob again (normalised the same), and the agent's own copy twice.
        const again = await s.insertUniqueMemory({
          agentId: 'a',
          kind: 'fact',
          content: ' i am ALLERGIC to peanuts',
          userId: 'bob',
        });
        expect(again).toEqual({ created: false, record: bob.record });
        const own = await s.insertUniqueMemory({ agentId: 'a', kind: 'fact', content: text });
        expect(own.created).toBe(true);
        expect((await s.insertUniqueMemory({ agentId: 'a', kind: 'fact', content: text })).created).toBe(
          false,
        );
        // A batch with the text of a third user and a repeat of it: one new row.
        const batch = await s.insertMemories([
          { agentId: 'a', kind: 'fact', content: text, userId: 'carol' },
          { agentId: 'a', kind: 'fact', content: text, userId: 'carol' },
          { agentId: 'a', kind: 'fact', content: text, userId: 'alice' },
        ]);
        expect(batch[0]?.id).toBe(batch[1]?.id);
        expect(batch[2]?.id).toBe(alice.record.id);
        expect(await s.listMemories('a')).toHaveLength(4);
        // An update onto another user's text is no duplicate; onto the same user's, it is.
        const other = await s.insertUniqueMemory({ agentId: 'a', kind: 'fact', content: 'x', userId: 'bob' });
        await expect(
          s.updateMemory('a', other.record.id, other.record.revision, { content: text }),
        ).rejects.toMatchObject({ code: 'ENGRAM_STORE_CONFLICT' });
        const dave = await s.insertUniqueMemory({ agentId: 'a', kind: 'fact', content: 'y', userId: 'dave' });
        expect(
          (await s.updateMemory('a', dave.record.id, dave.record.revision, { content: text })).content,
        ).toBe(text);
      }),
    );

    it(
      'forUser sees the agent’s own memories and that user’s on list, search, revalidate, get and history',
      withPort(open, async (port) => {
        const s = scoped(port);
        const { own, alice, bob } = await threeOwners(s);
        const forBob = { forUser: 'bob' };
        expect(ids(await s.listMemories('a', { filter: forBob }))).toEqual(ids([own, bob]));
        // The exact user filter stays exact: the agent's own rows do not pass it.
        expect(ids(await s.listMemories('a', { filter: { userId: 'bob' } }))).toEqual([bob.id]);
        expect(ids(await s.listMemories('a'))).toEqual(ids([own, alice, bob]));
        const lexical = await s.searchLexical({ agentId: 'a', terms: ['office'], limit: 10, filter: forBob });
        expect(ids(lexical.hits)).toEqual(ids([own, bob]));
        const vector = await s.searchVector({
          agentId: 'a',
          vector: vec4(1, 0.1, 0, 0),
          k: 3,
          filter: forBob,
        });
        expect(ids(vector)).toEqual(ids([own, bob]));
        const all = [own, alice, bob].map((r) => ({ id: r.id }));
        expect(ids(await s.revalidate('a', all, forBob))).toEqual(ids([own, bob]));
        expect(ids(await s.revalidate('a', all))).toEqual(ids([own, alice, bob]));
        expect(await s.getMemory('a', alice.id, forBob)).toBeNull();
        expect((await s.getMemory('a', bob.id, forBob))?.id).toBe(bob.id);
        expect((await s.getMemory('a', own.id, forBob))?.id).toBe(own.id);
        expect((await s.getMemory('a', alice.id))?.id).toBe(alice.id);
        const hidden = await s.history('a', alice.id, forBob);
        expect([hidden.records, hidden.entries]).toEqual([[], []]);
        expect(ids((await s.history('a', bob.id, forBob)).records)).toEqual([bob.id]);
        expect(ids((await s.history('a', alice.id)).records)).toEqual([alice.id]);
        await expect(s.getMemory('a', bob.id, { forUser: '' })).rejects.toMatchObject({
          code: 'ENGRAM_STORE_INVALID_INPUT',
        });
      }),
    );

    it(
      'a user’s BM25 scores count only what that user can see: another user’s writes never move them',
      withPort(open, async (port) => {
        const s = scoped(port);
        // A long memory (chunked) too, so the whole-memory scores are compared as well as the chunk scores.
        const filler = ' The members talked at length about tomatoes, compost and the new fence.'.repeat(40);
        const [, alice, aliceLong] = await s.insertMemories([
          { agentId: 'a', kind: 'fact', content: 'The office kettle is for green tea' },
          { agentId: 'a', kind: 'fact', content: 'Alice drinks jasmine tea at noon', userId: 'alice' },
          {
            agentId: 'a',
            kind: 'fact',
            content: `Alice keeps a diary.${filler} She brews jasmine tea on Sundays.${filler}`,
            userId: 'alice',
          },
        ]);
        if (alice === undefined || aliceLong === undefined) throw new Error('insert failed');
        const scores = async (filter?: {
          readonly forUser?: string;
          readonly userId?: string;
        }): Promise<Record<string, [number, number | undefined]>> => {
          const found = await s.searchLexical({
            agentId: 'a',
            terms: ['jasmine', 'tea'],
            limit: 10,
            ...(filter === undefined ? {} : { filter }),
          });
          const out: Record<string, [number, number | undefined]> = {};
          for (const h of found.hits)
            if (h.id === alice.id || h.id === aliceLong.id) out[h.id] = [h.score, h.memoryScore];
          return out;
        };
        const before = {
          forUser: await scores({ forUser: 'alice' }),
          userId: await scores({ userId: 'alice' }),
          agent: await scores(),
        };
        expect(Object.keys(before.forUser).sort()).toEqual([alice.id, aliceLong.id].sort());
        expect(before.forUser[aliceLong.id]?.[1]).toBeGreaterThan(0);
        // Bob writes the word Alice searched for, many times, and Carol writes other text.
        const bobs = await s.insertMemories([
          ...Array.from({ length: 12 }, (_, i) => ({
            agentId: 'a',
            kind: 'fact' as const,
            content: `Bob tried jasmine tea number ${i} and some more jasmine`,
            userId: 'bob',
          })),
          { agentId: 'a', kind: 'fact', content: `Carol's notes.${filler}`, userId: 'carol' },
        ]);
        expect(await scores({ forUser: 'alice' })).toEqual(before.forUser);
        expect(await scores({ userId: 'alice' })).toEqual(before.userId);
        // The whole agent's view counts every user's units: there the scores move (what Alice's must not do).
        expect(await scores()).not.toEqual(before.agent);
        // Bob forgets his memories again: Alice's scores still have not moved, and the agent's are back.
        for (const b of bobs) await s.deleteMemory('a', b.id);
        expect(await scores({ forUser: 'alice' })).toEqual(before.forUser);
        expect(await scores()).toEqual(before.agent);
      }),
    );

    it(
      'a search for a user among many ranks exactly the agent’s own memories and that user’s, both arms',
      withPort(open, async (port) => {
        const s = scoped(port);
        // 400 memories: every 10th the agent's own, the rest over 13 users in turn; random directions. The store may
        // restrict its scan to the scope inside its indexes: the answer is still the scope's nearest rows.
        const random = mulberry32(2024);
        const users = Array.from({ length: 13 }, (_, u) => `user-${u}@example.com`);
        const rows = Array.from({ length: 400 }, (_, i) => ({
          agentId: 'a',
          kind: 'fact' as const,
          content: `note ${i} about ${i % 7 === 0 ? 'harbour' : 'garden'} ${i % 3 === 0 ? 'lantern' : 'window'}`,
          vector: vec4(random() - 0.5, random() - 0.5, random() - 0.5, random() - 0.5),
          ...(i % 10 === 0 ? {} : { userId: users[i % users.length] as string }),
        }));
        const stored = await s.insertMemories(rows);
        const owner = new Map(stored.map((r) => [r.id, r.userId]));
        const vectorOf = new Map(stored.map((r, i) => [r.id, rows[i]?.vector as Float32Array]));
        for (const filter of [
          { forUser: 'user-3@example.com' },
          { forUser: 'nobody' },
          { userId: 'user-5@example.com' },
        ]) {
          const passes = (id: string): boolean => {
            const user = owner.get(id) ?? null;
            return 'userId' in filter ? user === filter.userId : user === null || user === filter.forUser;
          };
          for (let q = 0; q < 3; q += 1) {
            const query = vec4(random() - 0.5, random() - 0.5, random() - 0.5, random() - 0.5);
            const exact = stored
              .filter((r) => passes(r.id))
              .map((r) => ({ id: r.id, d: cosineDistance(query, vectorOf.get(r.id) as Float32Array) }))
              .sort((a, b) => a.d - b.d);
            for (const k of [5, 40]) {
              const hits = await s.searchVector({ agentId: 'a', vector: query, k, filter });
              expect(hits.map((h) => h.id)).toEqual(exact.slice(0, k).map((e) => e.id));
            }
          }
          const lexical = await s.searchLexical({
            agentId: 'a',
            terms: ['harbour', 'lantern'],
            limit: 200,
            filter,
          });
          const expected = stored.filter((r) => passes(r.id) && /harbour|lantern/.test(r.content));
          expect(ids(lexical.hits)).toEqual(ids(expected));
        }
      }),
    );

    it(
      'a write for a user treats another user’s memory and the agent’s shared one as not found',
      withPort(open, async (port) => {
        const s = scoped(port);
        const { own, alice, bob } = await threeOwners(s);
        const forBob = { forUser: 'bob' };
        await expect(s.updateMemory('a', alice.id, 1, { importance: 0.9 }, forBob)).rejects.toMatchObject(
          notFound,
        );
        await expect(s.forgetMemory('a', alice.id, { forUser: 'bob' })).rejects.toMatchObject(notFound);
        await expect(s.archiveMemory('a', alice.id, undefined, forBob)).rejects.toMatchObject(notFound);
        await expect(s.setLifecycle('a', alice.id, 1, 'archived', forBob)).rejects.toMatchObject(notFound);
        await expect(
          s.supersedeMemory('a', alice.id, 1, { agentId: 'a', kind: 'fact', content: 'changed' }, forBob),
        ).rejects.toMatchObject(notFound);
        expect(await s.deleteMemory('a', alice.id, forBob)).toBe(false);
        expect(await s.getMemory('a', alice.id)).toMatchObject({ revision: 1, lifecycle: 'active' });
        // The agent's shared memory is read-only to a user's call: what every user sees is changed for the
        // whole agent only.
        await expect(s.updateMemory('a', own.id, 1, { importance: 0.9 }, forBob)).rejects.toMatchObject(
          notFound,
        );
        await expect(s.forgetMemory('a', own.id, { forUser: 'bob' })).rejects.toMatchObject(notFound);
        await expect(s.archiveMemory('a', own.id, undefined, forBob)).rejects.toMatchObject(notFound);
        await expect(
          s.supersedeMemory('a', own.id, 1, { agentId: 'a', kind: 'fact', content: 'changed' }, forBob),
        ).rejects.toMatchObject(notFound);
        expect(await s.deleteMemory('a', own.id, forBob)).toBe(false);
        expect(await s.getMemory('a', own.id, forBob)).toMatchObject({ revision: 1, lifecycle: 'active' });
        // Bob's own memory is his to change.
        expect((await s.updateMemory('a', bob.id, 1, { importance: 0.9 }, forBob)).revision).toBe(2);
        expect(await s.deleteMemory('a', bob.id, forBob)).toBe(true);
        expect((await s.forgetMemory('a', own.id)).forgotten).toEqual([own.id]);
      }),
    );

    it(
      'a correction for a user records who made it and why in the old version’s history',
      withPort(open, async (port) => {
        const s = scoped(port);
        const { alice } = await threeOwners(s);
        const { replacement } = await s.supersedeMemory(
          'a',
          alice.id,
          1,
          { agentId: 'a', kind: 'fact', content: 'Alice has two office keys', userId: 'alice' },
          { forUser: 'alice', actor: 'agent', reason: 'she got a spare' },
        );
        const history = await s.history('a', replacement.id, { forUser: 'alice' });
        expect(history.entries.find((e) => e.action === 'superseded')).toMatchObject({
          memoryId: alice.id,
          actor: 'agent',
          reason: 'she got a spare',
        });
        await expect(
          s.supersedeMemory(
            'a',
            replacement.id,
            1,
            { agentId: 'a', kind: 'fact', content: 'x', userId: 'alice' },
            { reason: 'a\u0000b' },
          ),
        ).rejects.toMatchObject({ code: 'ENGRAM_STORE_INVALID_INPUT' });
      }),
    );

    it(
      'an erased memory’s tombstone shows to its own user and the whole agent, never to another user',
      withPort(open, async (port, clock) => {
        const s = scoped(port);
        const { own, alice, bob } = await threeOwners(s);
        clock.set(20_000);
        await s.updateMemory('a', bob.id, 1, { content: 'Bob has two office plants' }, { forUser: 'bob' });
        clock.set(30_000);
        expect(
          (await s.forgetMemory('a', bob.id, { forUser: 'bob', reason: 'he moved desks' })).forgotten,
        ).toEqual([bob.id]);
        expect((await s.forgetMemory('a', own.id, { reason: 'the office moved' })).forgotten).toEqual([
          own.id,
        ]);
        const tombstones = (h: Awaited<ReturnType<ScopePort['history']>>): unknown[] =>
          h.entries.map((e) => [e.memoryId, e.action, e.reason]);
        // Bob's erased memory: unknown to Alice (as an id never stored), its tombstone Bob's and the agent's.
        const forAlice = await s.history('a', bob.id, { forUser: 'alice' });
        expect([forAlice.records, forAlice.entries]).toEqual([[], []]);
        const bobs = [
          [bob.id, 'updated', null],
          [bob.id, 'forgotten', 'he moved desks'],
        ];
        expect(tombstones(await s.history('a', bob.id, { forUser: 'bob' }))).toEqual(bobs);
        expect(tombstones(await s.history('a', bob.id))).toEqual(bobs);
        // The agent's own erased memory keeps its tombstone for everyone.
        const owns = [[own.id, 'forgotten', 'the office moved']];
        for (const scope of [{ forUser: 'alice' }, { forUser: 'bob' }, undefined]) {
          expect(tombstones(await s.history('a', own.id, scope))).toEqual(owns);
        }

        // An export carries each history row's user, and its import keeps the boundary.
        await s.forgetMemory('a', alice.id, { forUser: 'alice' });
        const records: ExportedRecord[] = [];
        for await (const r of s.exportRecords({ agentId: 'a' })) records.push(r);
        const rows = records.flatMap((r) => (r.type === 'history' && r.row !== undefined ? [r.row] : []));
        expect(new Set(rows.map((r) => r.user_id))).toEqual(new Set(['bob', 'alice', null]));
        expect((await s.importRecords(records, { agentId: 'b' })).imported.history).toBe(rows.length);
        expect((await s.history('b', bob.id, { forUser: 'alice' })).entries).toEqual([]);
        expect(tombstones(await s.history('b', bob.id, { forUser: 'bob' }))).toEqual(bobs);
        expect(tombstones(await s.history('b', own.id, { forUser: 'alice' }))).toEqual(owns);
        // An export from before the column (no user_id) still imports; an erased memory's rows then name no
        // user, so only the whole agent sees them.
        const old = records.map((r) => {
          if (r.type !== 'history' || r.row === undefined) return r;
          const { user_id: _user, ...row } = r.row;
          return { type: 'history', row };
        });
        expect((await s.importRecords(old, { agentId: 'c' })).imported.history).toBe(rows.length);
        expect(tombstones(await s.history('c', bob.id))).toEqual(bobs);
        for (const forUser of ['alice', 'bob']) {
          expect((await s.history('c', bob.id, { forUser })).entries).toEqual([]);
        }
        // A malformed user is refused.
        const bad = records.map((r) =>
          r.type === 'history' && r.row !== undefined
            ? { type: 'history', row: { ...r.row, user_id: ' x' } }
            : r,
        );
        await expect(s.importRecords(bad, { agentId: 'd' })).rejects.toMatchObject({
          code: 'ENGRAM_STORE_INVALID_INPUT',
        });
      }),
    );

    it(
      'deleteAll with a userId forgets that user’s memories and events and nothing else',
      withPort(open, async (port) => {
        const s = scoped(port);
        const { own, alice, bob } = await threeOwners(s);
        await s.appendEvents('a', 's-alice', [
          { seq: 1, type: 'message', role: 'user', content: 'hi, I am Alice', userId: 'alice' },
        ]);
        await s.appendEvents('a', 's-bob', [
          { seq: 1, type: 'message', role: 'user', content: 'hi, I am Bob', userId: 'bob' },
          { seq: 2, type: 'message', role: 'assistant', content: 'hello Bob', userId: 'bob' },
        ]);
        await s.writeSkill({ agentId: 'a', name: 'greet', description: 'greets', content: 'say hi' });
        const result = await s.deleteAll('a', { userId: 'bob' });
        expect(result).toMatchObject({ memories: 1, events: 2, skills: 0 });
        expect(ids(await s.listMemories('a'))).toEqual(ids([own, alice]));
        expect(await s.getMemory('a', bob.id)).toBeNull();
        expect(await s.readEvents('a', 's-bob', 1, 10)).toEqual([]);
        expect(await s.readEvents('a', 's-alice', 1, 10)).toHaveLength(1);
        expect(await s.listSkills('a')).toHaveLength(1);
        // Without a user, the whole agent as before.
        expect(await s.deleteAll('a')).toMatchObject({ memories: 2, events: 1, skills: 1 });
        await expect(s.deleteAll('a', { userId: '' })).rejects.toMatchObject({
          code: 'ENGRAM_STORE_INVALID_INPUT',
        });
      }),
    );

    it(
      'an export and its import keep each event’s user; an event of a malformed user is refused',
      withPort(open, async (port) => {
        const s = scoped(port);
        await s.appendEvents('a', 's1', [
          { seq: 1, type: 'message', role: 'user', content: 'hello', userId: 'alice' },
          { seq: 2, type: 'message', role: 'assistant', content: 'hi' },
        ]);
        const records: ExportedRecord[] = [];
        for await (const r of s.exportRecords({ agentId: 'a' })) records.push(r);
        const events = records.flatMap((r) => (r.type === 'event' && r.row !== undefined ? [r.row] : []));
        expect(events.map((e) => e.user_id)).toEqual(['alice', null]);
        expect((await s.importRecords(records, { agentId: 'b' })).imported.events).toBe(2);
        expect((await s.readEvents('b', 's1', 1, 2)).map((e) => [e.seq, e.userId])).toEqual([
          [1, 'alice'],
          [2, null],
        ]);
        const bad = records.map((r) =>
          r.type === 'event' && r.row !== undefined ? { type: 'event', row: { ...r.row, user_id: '' } } : r,
        );
        await expect(s.importRecords(bad, { agentId: 'c' })).rejects.toMatchObject({
          code: 'ENGRAM_STORE_INVALID_INPUT',
        });
        expect(await s.readEvents('c', 's1', 1, 2)).toEqual([]);
      }),
    );

    it(
      'events carry their user; a re-append under another user is a conflict',
      withPort(open, async (port) => {
        const s = scoped(port);
        await s.appendEvents('a', 's1', [
          { seq: 1, type: 'message', role: 'user', content: 'hello', userId: 'alice' },
          { seq: 2, type: 'message', role: 'assistant', content: 'hi' },
        ]);
        expect((await s.readEvents('a', 's1', 1, 2)).map((e) => [e.seq, e.userId])).toEqual([
          [1, 'alice'],
          [2, null],
        ]);
        expect(
          await s.appendEvents('a', 's1', [
            { seq: 1, type: 'message', role: 'user', content: 'hello', userId: 'alice' },
          ]),
        ).toMatchObject({ appended: 0, skipped: 1 });
        await expect(
          s.appendEvents('a', 's1', [
            { seq: 1, type: 'message', role: 'user', content: 'hello', userId: 'bob' },
          ]),
        ).rejects.toMatchObject({ code: 'ENGRAM_STORE_CONFLICT' });
      }),
    );
  });
}
