import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSqliteMemoryStore, type SqliteMemoryStore } from './sqlite-store.js';
import type { EventInput } from './types.js';

let store: SqliteMemoryStore;
let clock: number;

beforeEach(() => {
  clock = 10_000;
  store = createSqliteMemoryStore({ path: ':memory:', embedding: null, now: () => clock });
});

afterEach(() => {
  store.close();
});

const session: EventInput[] = [
  { seq: 1, type: 'message', role: 'user', content: 'please read src/a.ts' },
  {
    seq: 2,
    type: 'tool_call',
    role: 'assistant',
    content: '',
    toolName: 'read_file',
    metadata: { path: 'src/a.ts', options: { lines: [1, 20] } },
  },
  { seq: 3, type: 'tool_result', role: 'tool', content: 'export const a = 1;', toolName: 'read_file' },
];

describe('event log', () => {
  it('appends a session and reads exact ranges back', async () => {
    expect(await store.appendEvents('alice', 's1', session)).toEqual({ appended: 3, skipped: 0, lastSeq: 3 });
    const range = await store.readEvents('alice', 's1', 2, 3);
    expect(range.map((e) => e.seq)).toEqual([2, 3]);
    expect(range[0]).toEqual({
      agentId: 'alice',
      sessionId: 's1',
      seq: 2,
      type: 'tool_call',
      role: 'assistant',
      content: '',
      toolName: 'read_file',
      metadata: { options: { lines: [1, 20] }, path: 'src/a.ts' },
      createdAt: 10_000,
    });
    expect(await store.readEvents('alice', 's1', 4, 9)).toEqual([]);
    expect(await store.readEvents('alice', 's1', 3, 2)).toEqual([]);
    expect(await store.readEvents('bob', 's1', 1, 3)).toEqual([]);
    expect((await store.listEventsAfter('alice', 's1', 1, 1)).map((e) => e.seq)).toEqual([2]);
    expect((await store.listEventsAfter('alice', 's1', 0, 100)).map((e) => e.seq)).toEqual([1, 2, 3]);
  });

  it('re-appending the same range adds nothing (metadata key order does not matter)', async () => {
    await store.appendEvents('alice', 's1', session);
    const reordered = session.map((e) =>
      e.seq === 2 ? { ...e, metadata: { options: { lines: [1, 20] }, path: 'src/a.ts' }, createdAt: 99 } : e,
    );
    expect(await store.appendEvents('alice', 's1', reordered)).toEqual({
      appended: 0,
      skipped: 3,
      lastSeq: 3,
    });
    expect(
      await store.appendEvents('alice', 's1', [
        ...session.slice(1),
        { seq: 4, type: 'message', role: 'assistant', content: 'done' },
      ]),
    ).toEqual({ appended: 1, skipped: 2, lastSeq: 4 });
    expect(await store.readEvents('alice', 's1', 1, 100)).toHaveLength(4);
    expect((await store.health('alice')).ok && (await store.health('alice'))).toMatchObject({
      health: { totals: { events: 4 } },
    });
  });

  it('the same seq with different content is ENGRAM_STORE_CONFLICT and nothing of the batch is written', async () => {
    await store.appendEvents('alice', 's1', session.slice(0, 2));
    await expect(
      store.appendEvents('alice', 's1', [
        { seq: 3, type: 'message', role: 'user', content: 'new' },
        { seq: 1, type: 'message', role: 'user', content: 'please read src/b.ts' },
      ]),
    ).rejects.toMatchObject({ code: 'ENGRAM_STORE_CONFLICT' });
    expect((await store.readEvents('alice', 's1', 1, 10)).map((e) => e.seq)).toEqual([1, 2]);
    await expect(
      store.appendEvents('alice', 's1', [
        { ...session[1], metadata: { path: 'src/other.ts' } } as EventInput,
      ]),
    ).rejects.toMatchObject({ code: 'ENGRAM_STORE_CONFLICT' });
    await expect(
      store.appendEvents('alice', 's1', [
        { seq: 7, type: 'message', role: 'user', content: 'x' },
        { seq: 7, type: 'message', role: 'user', content: 'y' },
      ]),
    ).rejects.toMatchObject({ code: 'ENGRAM_STORE_INVALID_INPUT' });
    expect(await store.readEvents('alice', 's1', 7, 7)).toEqual([]);
  });

  it('sessions are per agent; the same seq in another session or agent is independent', async () => {
    await store.appendEvents('alice', 's1', session);
    await store.appendEvents('alice', 's2', session.slice(0, 1));
    await store.appendEvents('bob', 's1', [{ seq: 1, type: 'message', role: 'user', content: 'other' }]);
    expect(await store.listSessions('alice')).toEqual([
      { sessionId: 's1', lastSeq: 3, cursor: 0 },
      { sessionId: 's2', lastSeq: 1, cursor: 0 },
    ]);
    expect(await store.listAgents()).toEqual(['alice', 'bob']);
  });
});

describe('cursor and ingestBatch', () => {
  it('moves the cursor with the batch atomically, compare-and-set on the cursor', async () => {
    await store.appendEvents('alice', 's1', session);
    expect(await store.getCursor('alice', 's1')).toBe(0);
    const first = await store.ingestBatch({
      agentId: 'alice',
      sessionId: 's1',
      expectedCursor: 0,
      nextCursor: 2,
      memories: [
        {
          agentId: 'alice',
          kind: 'event',
          content: 'please read src/a.ts',
          sessionId: 's1',
          seqFrom: 1,
          seqTo: 1,
        },
        {
          agentId: 'alice',
          kind: 'event',
          content: 'read_file src/a.ts',
          sessionId: 's1',
          seqFrom: 2,
          seqTo: 2,
          tags: ['tool:read_file'],
        },
      ],
    });
    expect(first.map((m) => [m.seqFrom, m.seqTo, m.sessionId])).toEqual([
      [1, 1, 's1'],
      [2, 2, 's1'],
    ]);
    expect(await store.getCursor('alice', 's1')).toBe(2);
    // A second ingester that read the old cursor conflicts and writes nothing.
    await expect(
      store.ingestBatch({
        agentId: 'alice',
        sessionId: 's1',
        expectedCursor: 0,
        nextCursor: 2,
        memories: [{ agentId: 'alice', kind: 'event', content: 'duplicate' }],
      }),
    ).rejects.toMatchObject({ code: 'ENGRAM_STORE_REVISION_CONFLICT' });
    expect(await store.listMemories('alice')).toHaveLength(2);
    expect(await store.getCursor('alice', 's1')).toBe(2);
    expect(await store.listSessions('alice')).toEqual([{ sessionId: 's1', lastSeq: 3, cursor: 2 }]);
  });

  it('rejects a batch whose memories belong to another agent, or a cursor moving backwards', async () => {
    await expect(
      store.ingestBatch({
        agentId: 'alice',
        sessionId: 's1',
        expectedCursor: 0,
        nextCursor: 1,
        memories: [{ agentId: 'bob', kind: 'event', content: 'x' }],
      }),
    ).rejects.toMatchObject({ code: 'ENGRAM_STORE_INVALID_INPUT' });
    await expect(
      store.ingestBatch({
        agentId: 'alice',
        sessionId: 's1',
        expectedCursor: 3,
        nextCursor: 1,
        memories: [],
      }),
    ).rejects.toMatchObject({ code: 'ENGRAM_STORE_INVALID_INPUT' });
    expect(await store.getCursor('alice', 's1')).toBe(0);
    expect(await store.listAgents()).toEqual([]);
  });
});

describe('skills', () => {
  it('creates, replaces (unique name per agent, case-insensitive), lists, gets and deletes', async () => {
    const created = await store.writeSkill({
      agentId: 'alice',
      name: 'deploy',
      description: 'ship it',
      content: 'step 1',
    });
    expect(created).toEqual({
      created: true,
      skill: {
        agentId: 'alice',
        name: 'deploy',
        description: 'ship it',
        content: 'step 1',
        createdAt: 10_000,
        updatedAt: 10_000,
      },
    });
    clock = 20_000;
    const replaced = await store.writeSkill({
      agentId: 'alice',
      name: 'Deploy',
      description: 'v2',
      content: 'step 2',
    });
    expect(replaced.created).toBe(false);
    expect(replaced.skill).toMatchObject({
      name: 'Deploy',
      createdAt: 10_000,
      updatedAt: 20_000,
      content: 'step 2',
    });
    await store.writeSkill({ agentId: 'alice', name: 'backup', description: '', content: 'snapshot' });
    await store.writeSkill({ agentId: 'bob', name: 'deploy', description: '', content: 'bob steps' });
    expect((await store.listSkills('alice')).map((s) => s.name)).toEqual(['backup', 'Deploy']);
    expect((await store.getSkill('alice', 'DEPLOY'))?.content).toBe('step 2');
    expect((await store.getSkill('bob', 'deploy'))?.content).toBe('bob steps');
    expect(await store.getSkill('carol', 'deploy')).toBeNull();
    expect(await store.deleteSkill('alice', 'deploy')).toBe(true);
    expect(await store.deleteSkill('alice', 'deploy')).toBe(false);
    expect((await store.listSkills('alice')).map((s) => s.name)).toEqual(['backup']);
    expect((await store.listSkills('bob')).map((s) => s.name)).toEqual(['deploy']);
  });
});

describe('health', () => {
  it('is zero-filled on an empty store', async () => {
    expect(await store.health()).toEqual({
      ok: true,
      health: {
        totals: { memories: 0, events: 0, facts: 0, skills: 0 },
        byKind: { event: 0, fact: 0, semantic: 0, episodic: 0, reflection: 0, persona: 0, skill: 0 },
        byLifecycle: { active: 0, archived: 0, superseded: 0, conflicted: 0 },
        byEmbeddingState: { pending: 0, ready: 0, error: 0, ftsOnly: 0 },
        // An in-memory store is never checked.
        integrity: { state: 'notChecked', checkedAt: null },
      },
    });
  });

  it('counts rows by kind, lifecycle and embedding state, per agent and in total', async () => {
    await store.insertMemories([
      { id: 'f1', agentId: 'alice', kind: 'fact', content: 'fact one' },
      { id: 'f2', agentId: 'alice', kind: 'fact', content: 'fact two' },
      { id: 's1', agentId: 'alice', kind: 'semantic', content: 'semantic' },
      { id: 'b1', agentId: 'bob', kind: 'episodic', content: 'bob episode' },
    ]);
    await store.archiveMemory('alice', 'f2');
    await store.commitEmbeddings([{ id: 's1', revision: 1, state: 'ftsOnly' }]);
    await store.appendEvents('alice', 's', [{ seq: 1, type: 'message', role: 'user', content: 'hi' }]);
    await store.writeSkill({ agentId: 'bob', name: 'x', description: '', content: 'y' });
    const all = await store.health();
    expect(all).toEqual({
      ok: true,
      health: {
        totals: { memories: 4, events: 1, facts: 1, skills: 1 },
        byKind: { event: 0, fact: 2, semantic: 1, episodic: 1, reflection: 0, persona: 0, skill: 0 },
        byLifecycle: { active: 3, archived: 1, superseded: 0, conflicted: 0 },
        byEmbeddingState: { pending: 3, ready: 0, error: 0, ftsOnly: 1 },
        integrity: { state: 'notChecked', checkedAt: null },
      },
    });
    const alice = await store.health('alice');
    expect(alice).toMatchObject({
      ok: true,
      health: { totals: { memories: 3, events: 1, facts: 1, skills: 0 } },
    });
    expect(await store.health('')).toEqual({ ok: false, code: 'ENGRAM_STORE_INVALID_INPUT' });
  });
});
