/**
 * The conformance suite of the store port, part two: the event log, the ingestion cursor, skills and health,
 * as every adapter must behave (run by `describeStoreConformance`).
 */
import { describe, expect, it } from 'vitest';
import { type ConformanceEvent, type ConformanceOpen, withPort } from './conformance-port.js';

const session: ConformanceEvent[] = [
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

/** Registers the event-log, cursor, skill and health parts of the suite. */
export function describeEventConformance(name: string, open: ConformanceOpen): void {
  describe(`store port conformance: ${name}: event log`, () => {
    it(
      'appends a session and reads exact ranges back',
      withPort(open, async (s) => {
        expect(await s.appendEvents('alice', 's1', session)).toEqual({ appended: 3, skipped: 0, lastSeq: 3 });
        const range = await s.readEvents('alice', 's1', 2, 3);
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
          userId: null,
        });
        expect(await s.readEvents('alice', 's1', 4, 9)).toEqual([]);
        expect(await s.readEvents('alice', 's1', 3, 2)).toEqual([]);
        expect(await s.readEvents('bob', 's1', 1, 3)).toEqual([]);
        expect((await s.listEventsAfter('alice', 's1', 1, 1)).map((e) => e.seq)).toEqual([2]);
        expect((await s.listEventsAfter('alice', 's1', 0, 100)).map((e) => e.seq)).toEqual([1, 2, 3]);
      }),
    );

    it(
      're-appending the same range adds nothing (metadata key order does not matter)',
      withPort(open, async (s) => {
        await s.appendEvents('alice', 's1', session);
        const reordered = session.map((e) =>
          e.seq === 2
            ? { ...e, metadata: { options: { lines: [1, 20] }, path: 'src/a.ts' }, createdAt: 99 }
            : e,
        );
        expect(await s.appendEvents('alice', 's1', reordered)).toEqual({
          appended: 0,
          skipped: 3,
          lastSeq: 3,
        });
        expect(
          await s.appendEvents('alice', 's1', [
            ...session.slice(1),
            { seq: 4, type: 'message', role: 'assistant', content: 'done' },
          ]),
        ).toEqual({ appended: 1, skipped: 2, lastSeq: 4 });
        expect(await s.readEvents('alice', 's1', 1, 100)).toHaveLength(4);
        expect(await s.health('alice')).toMatchObject({ ok: true, health: { totals: { events: 4 } } });
      }),
    );

    it(
      'the same seq with different content is ENGRAM_STORE_CONFLICT and nothing of the batch is written',
      withPort(open, async (s) => {
        await s.appendEvents('alice', 's1', session.slice(0, 2));
        await expect(
          s.appendEvents('alice', 's1', [
            { seq: 3, type: 'message', role: 'user', content: 'new' },
            { seq: 1, type: 'message', role: 'user', content: 'please read src/b.ts' },
          ]),
        ).rejects.toMatchObject({ code: 'ENGRAM_STORE_CONFLICT' });
        expect((await s.readEvents('alice', 's1', 1, 10)).map((e) => e.seq)).toEqual([1, 2]);
        const second = session[1] as ConformanceEvent;
        await expect(
          s.appendEvents('alice', 's1', [{ ...second, metadata: { path: 'src/other.ts' } }]),
        ).rejects.toMatchObject({ code: 'ENGRAM_STORE_CONFLICT' });
        await expect(
          s.appendEvents('alice', 's1', [
            { seq: 7, type: 'message', role: 'user', content: 'x' },
            { seq: 7, type: 'message', role: 'user', content: 'y' },
          ]),
        ).rejects.toMatchObject({ code: 'ENGRAM_STORE_INVALID_INPUT' });
        expect(await s.readEvents('alice', 's1', 7, 7)).toEqual([]);
      }),
    );

    it(
      'sessions are per agent; the same seq in another session or agent is independent',
      withPort(open, async (s) => {
        await s.appendEvents('alice', 's1', session);
        await s.appendEvents('alice', 's2', session.slice(0, 1));
        await s.appendEvents('bob', 's1', [{ seq: 1, type: 'message', role: 'user', content: 'other' }]);
        expect(await s.listSessions('alice')).toEqual([
          { sessionId: 's1', lastSeq: 3, cursor: 0 },
          { sessionId: 's2', lastSeq: 1, cursor: 0 },
        ]);
        expect(await s.listAgents()).toEqual(['alice', 'bob']);
      }),
    );
  });

  describe(`store port conformance: ${name}: cursor and ingestBatch`, () => {
    it(
      'moves the cursor with the batch atomically, compare-and-set on the cursor',
      withPort(open, async (s) => {
        await s.appendEvents('alice', 's1', session);
        expect(await s.getCursor('alice', 's1')).toBe(0);
        const first = await s.ingestBatch({
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
        expect(await s.getCursor('alice', 's1')).toBe(2);
        // A second ingester that read the old cursor conflicts and writes nothing.
        await expect(
          s.ingestBatch({
            agentId: 'alice',
            sessionId: 's1',
            expectedCursor: 0,
            nextCursor: 2,
            memories: [{ agentId: 'alice', kind: 'event', content: 'duplicate' }],
          }),
        ).rejects.toMatchObject({ code: 'ENGRAM_STORE_REVISION_CONFLICT' });
        expect(await s.listMemories('alice')).toHaveLength(2);
        expect(await s.getCursor('alice', 's1')).toBe(2);
        expect(await s.listSessions('alice')).toEqual([{ sessionId: 's1', lastSeq: 3, cursor: 2 }]);
      }),
    );

    it(
      'rejects a batch whose memories belong to another agent, or a cursor moving backwards',
      withPort(open, async (s) => {
        await expect(
          s.ingestBatch({
            agentId: 'alice',
            sessionId: 's1',
            expectedCursor: 0,
            nextCursor: 1,
            memories: [{ agentId: 'bob', kind: 'event', content: 'x' }],
          }),
        ).rejects.toMatchObject({ code: 'ENGRAM_STORE_INVALID_INPUT' });
        await expect(
          s.ingestBatch({
            agentId: 'alice',
            sessionId: 's1',
            expectedCursor: 3,
            nextCursor: 1,
            memories: [],
          }),
        ).rejects.toMatchObject({ code: 'ENGRAM_STORE_INVALID_INPUT' });
        expect(await s.getCursor('alice', 's1')).toBe(0);
        expect(await s.listAgents()).toEqual([]);
      }),
    );
  });

  describe(`store port conformance: ${name}: skills`, () => {
    it(
      'creates, replaces (unique name per agent, case-insensitive), lists, gets and deletes',
      withPort(open, async (s, clock) => {
        const created = await s.writeSkill({
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
        clock.set(20_000);
        const replaced = await s.writeSkill({
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
        await s.writeSkill({ agentId: 'alice', name: 'backup', description: '', content: 'snapshot' });
        await s.writeSkill({ agentId: 'bob', name: 'deploy', description: '', content: 'bob steps' });
        expect((await s.listSkills('alice')).map((k) => k.name)).toEqual(['backup', 'Deploy']);
        expect((await s.getSkill('alice', 'DEPLOY'))?.content).toBe('step 2');
        expect((await s.getSkill('bob', 'deploy'))?.content).toBe('bob steps');
        expect(await s.getSkill('carol', 'deploy')).toBeNull();
        expect(await s.deleteSkill('alice', 'deploy')).toBe(true);
        expect(await s.deleteSkill('alice', 'deploy')).toBe(false);
        expect((await s.listSkills('alice')).map((k) => k.name)).toEqual(['backup']);
        expect((await s.listSkills('bob')).map((k) => k.name)).toEqual(['deploy']);
      }),
    );
  });

  describe(`store port conformance: ${name}: health`, () => {
    it(
      'is zero-filled on an empty store',
      withPort(open, async (s) => {
        const empty = await s.health();
        expect(empty).toMatchObject({
          ok: true,
          health: {
            totals: { memories: 0, events: 0, facts: 0, skills: 0 },
            byKind: { event: 0, fact: 0, semantic: 0, episodic: 0, reflection: 0, persona: 0, skill: 0 },
            byLifecycle: { active: 0, archived: 0, superseded: 0, conflicted: 0 },
            byEmbeddingState: { pending: 0, ready: 0, error: 0, ftsOnly: 0 },
          },
        });
        // Exactly these keys: zero-filled, nothing else.
        if (!empty.ok) throw new Error('health failed');
        expect(Object.keys(empty.health.byKind).sort()).toEqual(
          ['episodic', 'event', 'fact', 'persona', 'reflection', 'semantic', 'skill'].sort(),
        );
        expect(Object.keys(empty.health.byLifecycle).sort()).toEqual(
          ['active', 'archived', 'conflicted', 'superseded'].sort(),
        );
        expect(Object.keys(empty.health.byEmbeddingState).sort()).toEqual(
          ['error', 'ftsOnly', 'pending', 'ready'].sort(),
        );
      }),
    );

    it(
      'counts rows by kind, lifecycle and embedding state, per agent and in total',
      withPort(open, async (s) => {
        await s.insertMemories([
          { id: 'f1', agentId: 'alice', kind: 'fact', content: 'fact one' },
          { id: 'f2', agentId: 'alice', kind: 'fact', content: 'fact two' },
          { id: 's1', agentId: 'alice', kind: 'semantic', content: 'semantic' },
          { id: 'b1', agentId: 'bob', kind: 'episodic', content: 'bob episode' },
        ]);
        await s.archiveMemory('alice', 'f2');
        await s.commitEmbeddings([{ id: 's1', revision: 1, state: 'ftsOnly' }]);
        await s.appendEvents('alice', 's', [{ seq: 1, type: 'message', role: 'user', content: 'hi' }]);
        await s.writeSkill({ agentId: 'bob', name: 'x', description: '', content: 'y' });
        expect(await s.health()).toMatchObject({
          ok: true,
          health: {
            totals: { memories: 4, events: 1, facts: 1, skills: 1 },
            byKind: { event: 0, fact: 2, semantic: 1, episodic: 1, reflection: 0, persona: 0, skill: 0 },
            byLifecycle: { active: 3, archived: 1, superseded: 0, conflicted: 0 },
            byEmbeddingState: { pending: 3, ready: 0, error: 0, ftsOnly: 1 },
          },
        });
        expect(await s.health('alice')).toMatchObject({
          ok: true,
          health: { totals: { memories: 3, events: 1, facts: 1, skills: 0 } },
        });
        const bob = await s.health('bob');
        expect(bob.ok && bob.health.byLifecycle).toEqual({
          active: 1,
          archived: 0,
          superseded: 0,
          conflicted: 0,
        });
        const alice = await s.health('alice');
        expect(alice.ok && alice.health.byLifecycle).toEqual({
          active: 2,
          archived: 1,
          superseded: 0,
          conflicted: 0,
        });
        expect(await s.health('')).toEqual({ ok: false, code: 'ENGRAM_STORE_INVALID_INPUT' });
      }),
    );
  });
}
