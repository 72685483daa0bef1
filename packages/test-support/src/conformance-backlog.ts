/**
 * The conformance suite of the store port, the backlog reads: a failed embedding keeps the error code it was
 * committed with (checked on write, read as untrusted: a stored value that is not a code reads `unknown`, never
 * an error), listed per agent and user scope; and the sessions of an agent with their entry counts and times,
 * per user scope and paged.
 */
import { describe, expect, it } from 'vitest';
import { type ConformanceOpen, type ConformancePort, testClock } from './conformance-port.js';

interface BacklogHarness {
  readonly store: ConformancePort;
  corrupt?(sql: string): Promise<void>;
  close(): Promise<void> | void;
}

function withBacklog(
  open: ConformanceOpen,
  fn: (s: ConformancePort, h: BacklogHarness, clock: ReturnType<typeof testClock>) => Promise<void>,
): () => Promise<void> {
  return async () => {
    const clock = testClock(10_000);
    let n = 0;
    const h = (await open({
      now: clock.now,
      idFactory: () => `gen-${++n}`,
      vectors: true,
      forget: 'erase',
    })) as BacklogHarness;
    try {
      await fn(h.store, h, clock);
    } finally {
      await h.close();
    }
  };
}

/** Registers the backlog part of the suite. */
export function describeBacklogConformance(name: string, open: ConformanceOpen): void {
  describe(`store port conformance: ${name}: backlog reads`, () => {
    it(
      'a failed embedding keeps its error code, listed by id in the user scope; a bad code writes nothing',
      withBacklog(open, async (s) => {
        await s.insertMemories([
          { id: 'f1', agentId: 'a', kind: 'fact', content: 'one' },
          { id: 'f2', agentId: 'a', kind: 'fact', content: 'two', userId: 'u1' },
          { id: 'f3', agentId: 'a', kind: 'fact', content: 'three', userId: 'u2' },
          { id: 'f4', agentId: 'a', kind: 'fact', content: 'four' },
          { id: 'g1', agentId: 'b', kind: 'fact', content: 'other agent' },
        ]);
        // A message is not a code: refused, nothing changes.
        await expect(
          s.commitEmbeddings([{ id: 'f1', revision: 1, state: 'error', code: 'socket hang up at 10.0.0.1' }]),
        ).rejects.toMatchObject({ code: 'ENGRAM_STORE_INVALID_INPUT' });
        expect(await s.listFailedEmbeddings('a')).toEqual([]);
        const result = await s.commitEmbeddings([
          { id: 'f1', revision: 1, state: 'error', code: 'ENGRAM_PROVIDER_TIMEOUT' },
          { id: 'f2', revision: 1, state: 'error', code: 'ENGRAM_PROVIDER_RATE_LIMITED' },
          { id: 'f3', revision: 1, state: 'error', code: 'ENGRAM_PROVIDER_TIMEOUT' },
          { id: 'f4', revision: 1, state: 'error' },
          { id: 'g1', revision: 1, state: 'error', code: 'ENGRAM_PROVIDER_TIMEOUT' },
        ]);
        expect(result.error).toBe(5);
        const all = await s.listFailedEmbeddings('a');
        expect(all.map((r) => [r.id, r.errorCode, r.attempts, r.userId])).toEqual([
          ['f1', 'ENGRAM_PROVIDER_TIMEOUT', 1, null],
          ['f2', 'ENGRAM_PROVIDER_RATE_LIMITED', 1, 'u1'],
          ['f3', 'ENGRAM_PROVIDER_TIMEOUT', 1, 'u2'],
          ['f4', 'unknown', 1, null],
        ]);
        expect(all.every((r) => r.agentId === 'a' && typeof r.failedAt === 'number')).toBe(true);
        // A user sees the agent's rows and its own, never another user's.
        expect((await s.listFailedEmbeddings('a', { forUser: 'u1' })).map((r) => r.id)).toEqual([
          'f1',
          'f2',
          'f4',
        ]);
        // Paged by id.
        expect((await s.listFailedEmbeddings('a', { limit: 2 })).map((r) => r.id)).toEqual(['f1', 'f2']);
        expect((await s.listFailedEmbeddings('a', { afterId: 'f2' })).map((r) => r.id)).toEqual(['f3', 'f4']);
        // A second failure counts the attempt and keeps the newer code.
        await s.commitEmbeddings([
          { id: 'f1', revision: 1, state: 'error', code: 'ENGRAM_PROVIDER_UNAVAILABLE' },
        ]);
        const again = (await s.listFailedEmbeddings('a', { limit: 1 }))[0];
        expect([again?.errorCode, again?.attempts]).toEqual(['ENGRAM_PROVIDER_UNAVAILABLE', 2]);
        await expect(s.listFailedEmbeddings('a', { limit: 0 })).rejects.toMatchObject({
          code: 'ENGRAM_STORE_INVALID_INPUT',
        });
      }),
      60_000,
    );

    it(
      'a stored error code that is not one reads as unknown, never an error',
      withBacklog(open, async (s, h) => {
        if (h.corrupt === undefined) throw new Error('this suite needs the harness to write raw rows');
        await s.insertMemories([
          { id: 'x1', agentId: 'a', kind: 'fact', content: 'one' },
          { id: 'x2', agentId: 'a', kind: 'fact', content: 'two' },
        ]);
        await s.commitEmbeddings([
          { id: 'x1', revision: 1, state: 'error', code: 'ENGRAM_PROVIDER_TIMEOUT' },
          { id: 'x2', revision: 1, state: 'error', code: 'ENGRAM_PROVIDER_TIMEOUT' },
        ]);
        await h.corrupt(`UPDATE memories SET embedding_error = '<b>secret</b>' WHERE id = 'x1'`);
        await h.corrupt(`UPDATE memories SET embedding_error = 'ENGRAM_${'X'.repeat(80)}' WHERE id = 'x2'`);
        expect((await s.listFailedEmbeddings('a')).map((r) => r.errorCode)).toEqual(['unknown', 'unknown']);
      }),
      60_000,
    );

    it(
      'lists the sessions with their entry counts and times, in the user scope, paged by id',
      withBacklog(open, async (s, _h, clock) => {
        const entry = (seq: number, content: string, userId?: string) => ({
          seq,
          type: 'message' as const,
          role: 'user',
          content,
          ...(userId === undefined ? {} : { userId }),
        });
        clock.set(20_000);
        await s.appendEvents('a', 's-1', [entry(1, 'hello'), entry(2, 'again')]);
        clock.set(30_000);
        await s.appendEvents('a', 's-1', [entry(3, 'third')]);
        await s.appendEvents('a', 's-2', [entry(1, 'other session')]);
        await s.appendEvents('b', 's-9', [entry(1, 'other agent')]);
        await s.appendEvents('a', 's-u1', [entry(1, 'mine', 'u1'), entry(2, 'reply')]);
        await s.appendEvents('a', 's-u2', [entry(1, 'theirs', 'u2')]);
        // A user counts the agent's entries and its own; a session with neither is left out.
        expect(
          (await s.listSessionSummaries('a', { forUser: 'u1' })).map((x) => [x.sessionId, x.entries]),
        ).toEqual([
          ['s-1', 3],
          ['s-2', 1],
          ['s-u1', 2],
        ]);
        expect(await s.listSessionSummaries('a')).toEqual([
          { sessionId: 's-1', entries: 3, firstAt: 20_000, lastAt: 30_000 },
          { sessionId: 's-2', entries: 1, firstAt: 30_000, lastAt: 30_000 },
          { sessionId: 's-u1', entries: 2, firstAt: 30_000, lastAt: 30_000 },
          { sessionId: 's-u2', entries: 1, firstAt: 30_000, lastAt: 30_000 },
        ]);
        expect((await s.listSessionSummaries('a', { limit: 1 })).map((x) => x.sessionId)).toEqual(['s-1']);
        expect(
          (await s.listSessionSummaries('a', { afterSessionId: 's-1', limit: 2 })).map((x) => x.sessionId),
        ).toEqual(['s-2', 's-u1']);
        expect(await s.listSessionSummaries('nobody')).toEqual([]);
      }),
      60_000,
    );
  });
}
