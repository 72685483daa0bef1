/**
 * What a person looking at a memory file reads through the facade: the open conflicts of a scope (never
 * another user's), the logged sessions with their entry counts, the memories whose embedding failed with the
 * embedder's error code (never its message), and a memory opened for looking that embeds nothing on its own.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDeterministicEmbedder } from '@engram/embedder-deterministic';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemory } from './memory.js';

let dir: string;
let n = 0;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'engram-backlog-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const path = (): string => {
  n += 1;
  return join(dir, `b${n}`, 'memory.db');
};

describe('conflicts()', () => {
  it("lists a scope's open contradictions with both sides; a user never sees another user's", async () => {
    const memory = await createMemory({ path: path(), embedder: 'deterministic', agentId: 'coder' });
    try {
      await memory.add('The staging API port is 8080', { userId: 'alice' });
      const newer = await memory.add('The staging API port is 9090', { userId: 'alice' });
      expect(newer.conflicts?.length).toBe(1);
      const whole = await memory.conflicts();
      expect(whole.map((c) => [c.older.content, c.newer.content])).toEqual([
        ['The staging API port is 8080', 'The staging API port is 9090'],
      ]);
      expect(whole[0]?.reason).toBe('number');
      expect((await memory.conflicts({ userId: 'alice' })).length).toBe(1);
      expect(await memory.conflicts({ userId: 'bob' })).toEqual([]);
      // Settled: forgetting one side leaves no open conflict.
      await memory.delete(whole[0]?.older.id ?? '', { reason: 'moved to 9090' });
      expect(await memory.conflicts()).toEqual([]);
      await expect(memory.conflicts({ limit: 0 })).rejects.toMatchObject({
        code: 'ENGRAM_MEMORY_INVALID_INPUT',
      });
    } finally {
      await memory.close();
    }
  }, 60_000);

  it("a user's limit counts none of another user's conflicts", async () => {
    const memory = await createMemory({ path: path(), embedder: 'deterministic', agentId: 'coder' });
    try {
      for (const n of [1, 2, 3]) {
        await memory.add(`Bob's build ${n} takes ${n} minutes`, { userId: 'bob' });
        await memory.add(`Bob's build ${n} takes ${n + 10} minutes`, { userId: 'bob' });
      }
      await memory.add('The staging API port is 8080', { userId: 'alice' });
      await memory.add('The staging API port is 9090', { userId: 'alice' });
      // Bob's links are older: the agent's first page of one link is his, and a user filter applied after the
      // limit would leave Alice's page empty.
      const first = await memory.conflicts({ limit: 1 });
      expect(first.map((c) => c.newer.content.startsWith("Bob's"))).toEqual([true]);
      const mine = await memory.conflicts({ userId: 'alice', limit: 1 });
      expect(mine.map((c) => c.newer.content)).toEqual(['The staging API port is 9090']);
    } finally {
      await memory.close();
    }
  }, 60_000);
});

describe('sessions()', () => {
  it('lists the logged conversations with their entry counts, per user, paged', async () => {
    const memory = await createMemory({ path: path(), embedder: 'deterministic', agentId: 'coder' });
    try {
      await memory.add(
        [
          { role: 'user', content: 'Which port does staging use?' },
          { role: 'assistant', content: 'Staging listens on 9090.' },
        ],
        { sessionId: 'chat-1', userId: 'alice' },
      );
      await memory.add([{ role: 'user', content: 'Hello from Bob' }], { sessionId: 'chat-2', userId: 'bob' });
      const all = await memory.sessions();
      expect(all.map((s) => [s.sessionId, s.entries])).toEqual([
        ['chat-1', 2],
        ['chat-2', 1],
      ]);
      expect(all[0]?.lastAt).toBeGreaterThanOrEqual(all[0]?.firstAt ?? Number.POSITIVE_INFINITY);
      expect((await memory.sessions({ userId: 'alice' })).map((s) => s.sessionId)).toEqual(['chat-1']);
      expect((await memory.sessions({ limit: 1, afterSessionId: 'chat-1' })).map((s) => s.sessionId)).toEqual(
        ['chat-2'],
      );
    } finally {
      await memory.close();
    }
  }, 60_000);
});

describe('embeddingFailures()', () => {
  it("keeps the embedder's error code with each failed memory, never its message", async () => {
    const file = path();
    const working = createDeterministicEmbedder();
    let failing = true;
    const embedder = {
      profile: working.profile,
      async embed(texts: readonly string[], options?: { readonly signal?: AbortSignal }) {
        if (failing) {
          throw Object.assign(new Error('connect ECONNREFUSED 10.1.2.3:443 key=sk-secret'), {
            code: 'ENGRAM_PROVIDER_TIMEOUT',
          });
        }
        return working.embed(texts, options);
      },
    };
    const memory = await createMemory({ path: file, embedder, agentId: 'coder' });
    try {
      await memory.ingest(['The deploy runs at noon', 'Backups run nightly'], { userId: 'alice' });
      await memory.ingest(['Bob prefers tabs'], { userId: 'bob' });
      await memory.flush();
      const failures = await memory.embeddingFailures();
      expect(failures.map((f) => f.errorCode)).toEqual([
        'ENGRAM_PROVIDER_TIMEOUT',
        'ENGRAM_PROVIDER_TIMEOUT',
        'ENGRAM_PROVIDER_TIMEOUT',
      ]);
      // Retried by the drain up to its bound: each attempt counted.
      expect(failures.every((f) => f.attempts >= 1)).toBe(true);
      expect(JSON.stringify(failures)).not.toContain('ECONNREFUSED');
      expect(failures.every((f) => typeof f.failedAt === 'number')).toBe(true);
      const alice = await memory.embeddingFailures({ userId: 'alice' });
      expect(alice.map((f) => f.userId)).toEqual(['alice', 'alice']);
      failing = false;
      await memory.flush();
      expect(await memory.embeddingFailures()).toEqual([]);
    } finally {
      await memory.close();
    }
  }, 60_000);
});

describe('backgroundDrain: false', () => {
  it('opens for looking: rows left pending stay pending until flush() is called', async () => {
    const file = path();
    const writer = await createMemory({
      path: file,
      embedder: 'deterministic',
      agentId: 'coder',
      backgroundDrain: false,
    });
    await writer.ingest(['The deploy runs at noon', 'Backups run nightly', 'The wiki moved']);
    const pending = async (m: typeof writer): Promise<number> =>
      (await m.health({ agentId: 'coder' })).store.byEmbeddingState.pending;
    expect(await pending(writer)).toBe(3);
    await writer.close();

    const looking = await createMemory({ path: file, agentId: 'coder', backgroundDrain: false });
    try {
      // Reads go on; nothing embeds on its own.
      for (let i = 0; i < 5; i += 1) {
        await looking.list();
        expect(await pending(looking)).toBe(3);
      }
      await looking.flush();
      expect(await pending(looking)).toBe(0);
    } finally {
      await looking.close();
    }
  }, 60_000);
});
