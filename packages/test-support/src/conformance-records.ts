/**
 * The conformance suite of the store port, part four: records (insert, read, list, content hash, revalidation,
 * access), compare-and-set writes and lifecycle moves, deletes, bad input that changes nothing, and a closed
 * store, as every adapter must behave. A store's own tests may add what only it can see (its derived tables)
 * by running `BAD_INPUT_CASES` again with its own checks.
 * Longer than 400 lines: the bad-input table (31 cases, exported for the stores' own table checks) and the
 * records tests it protects belong together.
 */
import { contentHash } from '@engram/contracts';
import { describe, expect, it } from 'vitest';
import {
  CONFORMANCE_PROFILE,
  type ConformanceNewMemory,
  type ConformanceOpen,
  type ConformancePort,
  vec4,
  withPort,
} from './conformance-port.js';

const base: ConformanceNewMemory = {
  agentId: 'alice',
  kind: 'fact',
  content: 'The API listens on port 8080',
};
const fingerprint = `${CONFORMANCE_PROFILE.id}:${CONFORMANCE_PROFILE.dimensions}`;

/** A call the port must refuse with a typed error, changing nothing: its name, the call and the code. */
export type BadInputCase = readonly [string, (s: ConformancePort) => Promise<unknown>, string];

/** The seed row every bad-input case runs beside (agent `alice`, id `seed`, revision 1, with a vector). */
export const BAD_INPUT_SEED: ConformanceNewMemory = {
  ...base,
  id: 'seed',
  tags: ['seed:1'],
  vector: vec4(1, 0, 0, 0),
};

const INVALID = 'ENGRAM_STORE_INVALID_INPUT';

/** Bad input across the port's slices (the 4-d profile is bound). */
export const BAD_INPUT_CASES: readonly BadInputCase[] = [
  ['empty agent id', (s) => s.insertMemory({ ...base, agentId: '' }), INVALID],
  ['NaN importance', (s) => s.insertMemory({ ...base, importance: Number.NaN }), INVALID],
  ['importance 1.5', (s) => s.insertMemory({ ...base, importance: 1.5 }), INVALID],
  ['oversize content', (s) => s.insertMemory({ ...base, content: 'x'.repeat(65_537) }), INVALID],
  ['blank content', (s) => s.insertMemory({ ...base, content: ' \n\t ' }), INVALID],
  ['lone surrogate', (s) => s.insertMemory({ ...base, content: 'x\uD800y' }), INVALID],
  ['malformed tag', (s) => s.insertMemory({ ...base, tags: ['file:ok', 'bad tag'] }), INVALID],
  ['unknown kind', (s) => s.insertMemory({ ...base, kind: 'note' as never }), INVALID],
  [
    'wrong vector length',
    (s) => s.insertMemory({ ...base, vector: new Float32Array(3).fill(1) }),
    'ENGRAM_STORE_VECTOR_DIMENSIONS',
  ],
  [
    'NaN vector',
    (s) => s.insertMemory({ ...base, vector: vec4(1, Number.NaN, 0, 0) }),
    'ENGRAM_STORE_VECTOR_INVALID',
  ],
  ['blank agent id', (s) => s.insertMemory({ ...base, agentId: ' \t ' }), INVALID],
  ['oversize agent id', (s) => s.insertMemory({ ...base, agentId: 'a'.repeat(257) }), INVALID],
  ['importance -0.1', (s) => s.insertMemory({ ...base, importance: -0.1 }), INVALID],
  ['Infinity confidence', (s) => s.insertMemory({ ...base, confidence: Number.POSITIVE_INFINITY }), INVALID],
  ['tag without a value', (s) => s.insertMemory({ ...base, tags: ['file:'] }), INVALID],
  ['tag with a control character', (s) => s.insertMemory({ ...base, tags: ['file:a\u0000b'] }), INVALID],
  [
    '65 tags',
    (s) => s.insertMemory({ ...base, tags: Array.from({ length: 65 }, (_, i) => `t:${i}`) }),
    INVALID,
  ],
  [
    'Infinity in a vector',
    (s) => s.insertMemory({ ...base, vector: vec4(1, Number.POSITIVE_INFINITY, 0, 0) }),
    'ENGRAM_STORE_VECTOR_INVALID',
  ],
  [
    'zero vector',
    (s) => s.insertMemory({ ...base, vector: new Float32Array(4) }),
    'ENGRAM_STORE_VECTOR_INVALID',
  ],
  [
    'vector that is not a Float32Array',
    (s) => s.insertMemory({ ...base, vector: [1, 0, 0, 0] as unknown as Float32Array }),
    'ENGRAM_STORE_VECTOR_INVALID',
  ],
  [
    'wrong-length vector in an embedding commit',
    (s) => s.commitEmbeddings([{ id: 'seed', revision: 1, state: 'ready', vector: new Float32Array(5) }]),
    'ENGRAM_STORE_VECTOR_DIMENSIONS',
  ],
  [
    'empty agent id in a lexical search',
    (s) => s.searchLexical({ agentId: '', terms: ['port'], limit: 5 }),
    INVALID,
  ],
  [
    'empty agent id in a vector search',
    (s) => s.searchVector({ agentId: '', vector: vec4(1, 0, 0, 0), k: 5 }),
    INVALID,
  ],
  [
    'bad row in a batch',
    (s) =>
      s.insertMemories([
        { ...base, id: 'good' },
        { ...base, importance: -1 },
      ]),
    INVALID,
  ],
  [
    'bad vector in a batch',
    (s) =>
      s.insertMemories([
        { ...base, id: 'good', vector: vec4(1, 0, 0, 0) },
        { ...base, vector: new Float32Array([1, 0]) },
      ]),
    'ENGRAM_STORE_VECTOR_DIMENSIONS',
  ],
  ['bad patch', (s) => s.updateMemory('alice', 'seed', 1, { confidence: 2 }), INVALID],
  ['oversize patch', (s) => s.updateMemory('alice', 'seed', 1, { content: 'y'.repeat(65_537) }), INVALID],
  [
    'bad event',
    (s) =>
      s.appendEvents('alice', 's1', [
        { seq: 1, type: 'message', role: 'user', content: 'ok' },
        { seq: -2, type: 'message', role: 'user', content: 'bad' },
      ]),
    INVALID,
  ],
  [
    'bad skill name',
    (s) => s.writeSkill({ agentId: 'alice', name: 'has space', description: '', content: 'x' }),
    INVALID,
  ],
  [
    'bad ingest memory',
    (s) =>
      s.ingestBatch({
        agentId: 'alice',
        sessionId: 's1',
        expectedCursor: 0,
        nextCursor: 2,
        memories: [
          { ...base, kind: 'event' },
          { ...base, kind: 'event', tags: ['NOPE:x'] },
        ],
      }),
    INVALID,
  ],
  ['bad search limit', (s) => s.searchLexical({ agentId: 'alice', terms: ['x'], limit: 0 }), INVALID],
];

/** What the port shows of agent `alice` and the whole store: equal before and after a refused call. */
async function portState(s: ConformancePort): Promise<unknown> {
  return {
    health: await s.health(),
    memories: await s.listMemories('alice', { limit: 1000 }),
    events: await s.readEvents('alice', 's1', 1, 1000),
    cursor: await s.getCursor('alice', 's1'),
    skills: await s.listSkills('alice'),
    backlog: await s.countEmbeddingBacklog(),
    agents: await s.listAgents(),
    lexical: await s.searchLexical({ agentId: 'alice', terms: ['port'], limit: 10 }),
    vector: await s.searchVector({ agentId: 'alice', vector: vec4(1, 0, 0, 0), k: 10 }),
  };
}

/** Registers the records part of the suite. */
export function describeRecordConformance(name: string, open: ConformanceOpen): void {
  describe(`store port conformance: ${name}: insert, get, list`, () => {
    it(
      'inserts with defaults and reads the same row back',
      withPort(
        open,
        async (s) => {
          const rec = await s.insertMemory({ ...base, tags: ['topic:net', 'file:a.ts', 'topic:net'] });
          expect(rec).toMatchObject({
            id: 'gen-1',
            agentId: 'alice',
            kind: 'fact',
            importance: 0.5,
            confidence: 1,
            tags: ['file:a.ts', 'topic:net'],
            contentHash: contentHash(base.content),
            createdAt: 1000,
            updatedAt: 1000,
            lastAccessedAt: null,
            accessCount: 0,
            revision: 1,
            lifecycle: 'active',
            supersededBy: null,
            embeddingState: 'pending',
            embeddingFingerprint: null,
            embeddingAttempts: 0,
            sessionId: null,
            seqFrom: null,
            seqTo: null,
          });
          expect(await s.getMemory('alice', rec.id)).toEqual(rec);
          expect(await s.getMemory('bob', rec.id)).toBeNull();
          expect(await s.getMemory('alice', 'missing')).toBeNull();
        },
        { start: 1000 },
      ),
    );

    it(
      'stores a vector given at insert in the same write and marks the row ready',
      withPort(open, async (s) => {
        const rec = await s.insertMemory({ ...base, vector: vec4(0, 0, 1, 0) });
        expect(rec.embeddingState).toBe('ready');
        expect(rec.embeddingFingerprint).toBe(fingerprint);
        expect(
          (await s.searchVector({ agentId: 'alice', vector: vec4(0, 0, 1, 0), k: 3 })).map((h) => h.id),
        ).toEqual([rec.id]);
      }),
    );

    it(
      'lists with filters and keyset pagination',
      withPort(open, async (s) => {
        await s.insertMemories([
          { ...base, id: 'c', tags: ['x:1'] },
          { ...base, id: 'a', kind: 'semantic', tags: ['x:1', 'y:2'] },
          { ...base, id: 'b', content: 'The API listens on port 8081' },
          { ...base, id: 'z', agentId: 'bob' },
        ]);
        await s.archiveMemory('alice', 'b');
        expect((await s.listMemories('alice')).map((r) => r.id)).toEqual(['a', 'b', 'c']);
        expect((await s.listMemories('alice', { limit: 2 })).map((r) => r.id)).toEqual(['a', 'b']);
        expect((await s.listMemories('alice', { afterId: 'b' })).map((r) => r.id)).toEqual(['c']);
        expect((await s.listMemories('alice', { kinds: ['semantic'] })).map((r) => r.id)).toEqual(['a']);
        expect((await s.listMemories('alice', { lifecycles: ['archived'] })).map((r) => r.id)).toEqual(['b']);
        expect((await s.listMemories('alice', { tags: ['x:1'] })).map((r) => r.id)).toEqual(['a', 'c']);
        expect((await s.listMemories('alice', { tags: ['x:1', 'y:2'] })).map((r) => r.id)).toEqual(['a']);
      }),
    );

    it(
      'finds rows by content hash (normalised text, per agent, optionally per kind)',
      withPort(open, async (s) => {
        const a = await s.insertMemory({ ...base, id: 'h1' });
        await s.insertMemory({
          ...base,
          id: 'h2',
          kind: 'semantic',
          content: '  the api LISTENS on port 8080 ',
        });
        await s.insertMemory({ ...base, id: 'h3', agentId: 'bob' });
        expect((await s.findByContentHash('alice', a.contentHash)).map((r) => r.id)).toEqual(['h1', 'h2']);
        expect((await s.findByContentHash('alice', a.contentHash, 'semantic')).map((r) => r.id)).toEqual([
          'h2',
        ]);
      }),
    );

    it(
      'insertMemories is all or nothing (a duplicate id fails the batch with CONFLICT)',
      withPort(open, async (s) => {
        await s.insertMemory({ ...base, id: 'dup' });
        const before = await portState(s);
        await expect(
          s.insertMemories([
            { ...base, id: 'fresh', content: 'fresh row' },
            { ...base, id: 'dup' },
          ]),
        ).rejects.toMatchObject({ code: 'ENGRAM_STORE_CONFLICT', name: 'EngramStoreError' });
        expect(await portState(s)).toEqual(before);
        expect(await s.getMemory('alice', 'fresh')).toBeNull();
      }),
    );

    it(
      'revalidates: only active rows of this agent at the expected revision, in input order',
      withPort(open, async (s) => {
        await s.insertMemories([
          { ...base, id: 'r1', content: 'The API listens on port 8081' },
          { ...base, id: 'r2', content: 'The API listens on port 8082' },
          { ...base, id: 'r3', content: 'The API listens on port 8083' },
          { ...base, id: 'r4', agentId: 'bob' },
        ]);
        await s.updateMemory('alice', 'r2', 1, { importance: 0.9 });
        await s.archiveMemory('alice', 'r3');
        const out = await s.revalidate('alice', [
          { id: 'r2', revision: 1 },
          { id: 'r1' },
          { id: 'r3' },
          { id: 'r4' },
          { id: 'gone' },
          { id: 'r1', revision: 1 },
        ]);
        expect(out.map((r) => r.id)).toEqual(['r1']);
        const fresh = await s.revalidate('alice', [
          { id: 'r2', revision: 2 },
          { id: 'r1', revision: 1 },
        ]);
        expect(fresh.map((r) => r.id)).toEqual(['r2', 'r1']);
        expect(await s.revalidate('alice', [])).toEqual([]);
      }),
    );

    it(
      'records access without changing the revision (an id counted once per call, other agents untouched)',
      withPort(open, async (s) => {
        const rec = await s.insertMemory(base);
        await s.recordAccess('alice', [rec.id, rec.id], 5_000);
        await s.recordAccess('bob', [rec.id], 6_000);
        expect(await s.getMemory('alice', rec.id)).toMatchObject({
          lastAccessedAt: 5_000,
          accessCount: 1,
          revision: 1,
        });
      }),
    );
  });

  describe(`store port conformance: ${name}: compare-and-set`, () => {
    it(
      'updates with the right revision and conflicts with a stale one',
      withPort(
        open,
        async (s, clock) => {
          const rec = await s.insertMemory(base);
          clock.set(2_000);
          const v2 = await s.updateMemory('alice', rec.id, 1, { importance: 0.8, tags: ['a:1'] });
          expect(v2).toMatchObject({
            revision: 2,
            importance: 0.8,
            tags: ['a:1'],
            updatedAt: 2_000,
            createdAt: 1_000,
          });
          await expect(s.updateMemory('alice', rec.id, 1, { importance: 0.1 })).rejects.toMatchObject({
            code: 'ENGRAM_STORE_REVISION_CONFLICT',
          });
          expect(await s.getMemory('alice', rec.id)).toEqual(v2);
        },
        { start: 1_000 },
      ),
    );

    it(
      'distinguishes NOT_FOUND (missing or another agent) from REVISION_CONFLICT',
      withPort(open, async (s) => {
        const rec = await s.insertMemory(base);
        await expect(s.updateMemory('alice', 'missing', 1, { importance: 0.1 })).rejects.toMatchObject({
          code: 'ENGRAM_STORE_NOT_FOUND',
        });
        await expect(s.updateMemory('bob', rec.id, 1, { importance: 0.1 })).rejects.toMatchObject({
          code: 'ENGRAM_STORE_NOT_FOUND',
        });
        await expect(s.setLifecycle('alice', rec.id, 7, 'archived')).rejects.toMatchObject({
          code: 'ENGRAM_STORE_REVISION_CONFLICT',
        });
        await expect(s.archiveMemory('alice', rec.id, 3)).rejects.toMatchObject({
          code: 'ENGRAM_STORE_REVISION_CONFLICT',
        });
        expect((await s.getMemory('alice', rec.id))?.lifecycle).toBe('active');
      }),
    );

    it(
      'a content change re-hashes, re-indexes, drops the vector and resets to pending',
      withPort(open, async (s) => {
        const rec = await s.insertMemory({ ...base, vector: vec4(1, 0, 0, 0) });
        const v2 = await s.updateMemory('alice', rec.id, 1, { content: '服务监听端口三千 port 3000' });
        expect(v2).toMatchObject({ revision: 2, embeddingState: 'pending', embeddingFingerprint: null });
        expect(v2.contentHash).toBe(contentHash('服务监听端口三千 port 3000'));
        expect((await s.searchLexical({ agentId: 'alice', terms: ['8080'], limit: 5 })).hits).toEqual([]);
        const now = await s.searchLexical({ agentId: 'alice', terms: ['监听端口'], limit: 5 });
        expect(now.hits.map((h) => h.id)).toEqual([rec.id]);
        expect(await s.searchVector({ agentId: 'alice', vector: vec4(1, 0, 0, 0), k: 5 })).toEqual([]);
      }),
    );

    it(
      'event rows take tag changes but never content or kind changes',
      withPort(open, async (s) => {
        const ev = await s.insertMemory({
          ...base,
          kind: 'event',
          content: 'user: hello',
          tags: ['type:message'],
        });
        const tagged = await s.updateMemory('alice', ev.id, 1, { tags: ['type:message', 'tool:bash'] });
        expect(tagged.tags).toEqual(['tool:bash', 'type:message']);
        await expect(s.updateMemory('alice', ev.id, 2, { content: 'user: edited' })).rejects.toMatchObject({
          code: 'ENGRAM_STORE_INVALID_INPUT',
        });
        await expect(s.updateMemory('alice', ev.id, 2, { kind: 'fact' })).rejects.toMatchObject({
          code: 'ENGRAM_STORE_INVALID_INPUT',
        });
        const fact = await s.insertMemory(base);
        await expect(s.updateMemory('alice', fact.id, 1, { kind: 'event' })).rejects.toMatchObject({
          code: 'ENGRAM_STORE_INVALID_INPUT',
        });
        expect((await s.getMemory('alice', ev.id))?.content).toBe('user: hello');
        expect((await s.listMemories('alice', { tags: ['tool:bash'] })).map((r) => r.id)).toEqual([ev.id]);
      }),
    );

    it(
      'supersede inserts the replacement and links the old row, in one transaction',
      withPort(open, async (s) => {
        const old = await s.insertMemory({ ...base, id: 'old' });
        const { superseded, replacement } = await s.supersedeMemory('alice', 'old', 1, {
          ...base,
          id: 'new',
          content: 'The API listens on port 3000',
        });
        expect(superseded).toMatchObject({
          id: 'old',
          lifecycle: 'superseded',
          supersededBy: 'new',
          revision: 2,
        });
        expect(replacement).toMatchObject({ id: 'new', lifecycle: 'active', revision: 1 });
        expect(await s.getMemory('alice', old.id)).toEqual(superseded);
        const search = await s.searchLexical({ agentId: 'alice', terms: ['port'], limit: 5 });
        expect(search.hits.map((h) => h.id)).toEqual(['new']);
        // A stale supersede writes nothing (not even the replacement).
        await expect(
          s.supersedeMemory('alice', 'old', 1, { ...base, id: 'newer', content: 'port 5000' }),
        ).rejects.toMatchObject({ code: 'ENGRAM_STORE_REVISION_CONFLICT' });
        expect(await s.getMemory('alice', 'newer')).toBeNull();
        await expect(
          s.supersedeMemory('alice', 'new', 1, { ...base, agentId: 'bob', content: 'x' }),
        ).rejects.toMatchObject({ code: 'ENGRAM_STORE_INVALID_INPUT' });
      }),
    );

    it(
      'archive and setLifecycle move the revision; search sees only active rows, and sees them again',
      withPort(open, async (s) => {
        const rec = await s.insertMemory({ ...base, vector: vec4(1, 0, 0, 0) });
        const archived = await s.archiveMemory('alice', rec.id, 1);
        expect(archived).toMatchObject({ lifecycle: 'archived', revision: 2 });
        expect((await s.searchLexical({ agentId: 'alice', terms: ['port'], limit: 5 })).hits).toEqual([]);
        const back = await s.setLifecycle('alice', rec.id, 2, 'active');
        expect(back.revision).toBe(3);
        expect((await s.searchLexical({ agentId: 'alice', terms: ['port'], limit: 5 })).hits).toHaveLength(1);
        expect(
          (await s.searchVector({ agentId: 'alice', vector: vec4(1, 0, 0, 0), k: 5 })).map((h) => h.id),
        ).toEqual([rec.id]);
      }),
    );
  });

  describe(`store port conformance: ${name}: delete`, () => {
    it(
      'removes the row from every read path; another agent cannot delete it',
      withPort(open, async (s) => {
        const keep = await s.insertMemory({ ...base, id: 'keep', agentId: 'bob', vector: vec4(1, 0, 0, 0) });
        const rec = await s.insertMemory({
          ...base,
          id: 'doomed',
          content: '数据库连接池 getUserById',
          tags: ['file:x.ts', 'tool:bash'],
          vector: vec4(1, 0, 0, 0),
        });
        expect(await s.deleteMemory('alice', rec.id)).toBe(true);
        expect(await s.getMemory('alice', rec.id)).toBeNull();
        expect(
          (await s.searchLexical({ agentId: 'alice', terms: ['getUserById', '连接池'], limit: 5 })).hits,
        ).toEqual([]);
        expect(await s.searchVector({ agentId: 'alice', vector: vec4(1, 0, 0, 0), k: 5 })).toEqual([]);
        expect(await s.listMemories('alice', { tags: ['tool:bash'] })).toEqual([]);
        expect(await s.deleteMemory('alice', rec.id)).toBe(false);
        expect(await s.deleteMemory('alice', keep.id)).toBe(false);
        expect((await s.getMemory('bob', keep.id))?.id).toBe('keep');
      }),
    );
  });

  describe(`store port conformance: ${name}: bad input changes nothing`, () => {
    for (const [what, call, code] of BAD_INPUT_CASES) {
      it(
        `${what} → ${code}`,
        withPort(open, async (s) => {
          await s.insertMemory(BAD_INPUT_SEED);
          const before = await portState(s);
          const seed = await s.getMemory('alice', 'seed');
          const err = await call(s).then(
            () => undefined,
            (e: unknown) => e,
          );
          expect(err).toMatchObject({ name: 'EngramStoreError', code });
          expect(await portState(s)).toEqual(before);
          expect(await s.getMemory('alice', 'seed')).toEqual(seed);
        }),
      );
    }
  });

  describe(`store port conformance: ${name}: closed store`, () => {
    it(
      'rejects every call with CLOSED and health reports it without throwing',
      withPort(open, async (s) => {
        await s.close();
        await s.close();
        await expect(s.getMemory('alice', 'x')).rejects.toMatchObject({ code: 'ENGRAM_STORE_CLOSED' });
        await expect(s.insertMemory(base)).rejects.toMatchObject({ code: 'ENGRAM_STORE_CLOSED' });
        expect(await s.health()).toEqual({ ok: false, code: 'ENGRAM_STORE_CLOSED' });
        expect(s.closed).toBe(true);
      }),
    );
  });
}
