/**
 * Corrections, forgetting and the file's lifecycle through the facade: an update keeps the old version in the
 * history and out of search, a delete removes the text, bad input is a typed error that changes nothing, and
 * `close` releases the file.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemory } from './memory.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'engram-memory-corrections-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function codeOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => 'resolved',
    (e: unknown) => (e as { code?: unknown }).code,
  );
}

describe('contradictions in the core block', () => {
  it('marks both sides of an open conflict, and keeps marking it after one side is corrected', async () => {
    const memory = await createMemory({ path: join(dir, 'core-conflict.db'), embedder: 'deterministic' });
    try {
      await memory.add('The team standup is on Tuesdays');
      const newer = await memory.add('The team standup is on Wednesdays');
      expect(newer.conflicts).toHaveLength(1);
      const marked = (await memory.context(null)).core.split('\n').filter((l) => l.includes('standup'));
      expect(marked).toEqual([
        '- [conflicting: another fact here says otherwise] The team standup is on Tuesdays',
        '- [conflicting: another fact here says otherwise] The team standup is on Wednesdays',
      ]);
      await memory.update(newer.added[0]?.id ?? '', 'The team standup is on Thursdays');
      const after = (await memory.context(null)).core.split('\n').filter((l) => l.includes('standup'));
      expect(after).toEqual([
        '- [conflicting: another fact here says otherwise] The team standup is on Tuesdays',
        '- [conflicting: another fact here says otherwise] The team standup is on Thursdays',
      ]);
    } finally {
      await memory.close();
    }
  });
});

describe('update, history, delete', () => {
  it('new text makes a new version: search finds only it, history shows both, in order', async () => {
    const memory = await createMemory({ path: join(dir, 'update.db'), embedder: 'deterministic' });
    try {
      const { added } = await memory.add('The API listens on port 8080');
      const old = added[0]?.id ?? '';
      const current = await memory.update(old, 'The API listens on port 9090');
      expect(current.id).not.toBe(old);
      expect(current.embedded).toBe(true);
      const hits = await memory.search('API port');
      expect(hits.map((h) => h.content)).toEqual(['The API listens on port 9090']);
      expect((await memory.list()).map((m) => m.content)).toEqual(['The API listens on port 9090']);
      expect(await memory.list({ includeInactive: true })).toHaveLength(2);
      const versions = await memory.history(old);
      expect(versions.map((v) => ['content' in v ? v.content : null, v.lifecycle])).toEqual([
        ['The API listens on port 8080', 'superseded'],
        ['The API listens on port 9090', 'active'],
      ]);
      expect((await memory.history(current.id)).map((v) => v.id)).toEqual([old, current.id]);
      expect(await codeOf(memory.update(old, 'again'))).toBe('ENGRAM_MEMORY_NOT_FOUND');
      const retagged = await memory.update(current.id, { tags: ['topic:api'], importance: 0.9 });
      expect([retagged.id, retagged.tags, retagged.importance]).toEqual([current.id, ['topic:api'], 0.9]);
    } finally {
      await memory.close();
    }
  });

  it('delete removes the memory and its earlier versions; deleteAll empties the agent', async () => {
    const memory = await createMemory({ path: join(dir, 'delete.db'), embedder: 'deterministic' });
    try {
      const { added } = await memory.add('The staging database is db-stage-1');
      const old = added[0]?.id ?? '';
      const current = await memory.update(old, 'The staging database is db-stage-2');
      await memory.add('Keep this one');
      expect(await memory.delete(current.id, { actor: 'user', reason: 'moved to a new database' })).toBe(
        true,
      );
      expect(await memory.get(current.id)).toBeNull();
      expect(await memory.get(old)).toBeNull();
      expect(await memory.search('staging database')).toEqual([]);
      expect(await memory.delete(current.id)).toBe(false);
      // Forgotten versions show their tombstones (who, when, why), never their text; an unknown id is not found.
      const tombs = await memory.history(current.id);
      expect(tombs.map((v) => [v.id, v.lifecycle])).toEqual([
        [old, 'forgotten'],
        [current.id, 'forgotten'],
      ]);
      for (const tomb of tombs) {
        expect(tomb).toMatchObject({ forgottenBy: 'user', reason: 'moved to a new database' });
        expect(JSON.stringify(tomb)).not.toContain('db-stage');
      }
      expect(await codeOf(memory.history('never-stored'))).toBe('ENGRAM_MEMORY_NOT_FOUND');
      expect((await memory.list()).map((m) => m.content)).toEqual(['Keep this one']);
      expect(await memory.deleteAll()).toBe(1);
      expect(await memory.list({ includeInactive: true })).toEqual([]);
    } finally {
      await memory.close();
    }
  });
});

describe('bad input', () => {
  it('is a typed error and changes nothing', async () => {
    const memory = await createMemory({ path: join(dir, 'bad.db'), embedder: 'deterministic' });
    try {
      await memory.add('The only memory');
      const attempts: [Promise<unknown>, string][] = [
        [memory.add(''), 'ENGRAM_MEMORY_INVALID_INPUT'],
        [memory.add(42 as unknown as string), 'ENGRAM_MEMORY_INVALID_INPUT'],
        [memory.add([]), 'ENGRAM_MEMORY_INVALID_INPUT'],
        [memory.add([{ role: 'robot', content: 'hi' }] as never), 'ENGRAM_MEMORY_INVALID_INPUT'],
        [memory.add('text', { agentId: ' ' }), 'ENGRAM_MEMORY_INVALID_INPUT'],
        [memory.add('text', { sessionId: '' }), 'ENGRAM_MEMORY_INVALID_INPUT'],
        [memory.add('text with a bad tag', { tags: ['no prefix'] }), 'ENGRAM_STORE_INVALID_INPUT'],
        [memory.ingest(['fine', '']), 'ENGRAM_MEMORY_INVALID_INPUT'],
        [memory.ingest('not a list' as never), 'ENGRAM_MEMORY_INVALID_INPUT'],
        [memory.search('   '), 'ENGRAM_MEMORY_INVALID_INPUT'],
        [memory.search('ok', { limit: 0 }), 'ENGRAM_RETRIEVAL_INVALID_INPUT'],
        [memory.update('no-such-id', 'x'), 'ENGRAM_MEMORY_NOT_FOUND'],
        [memory.update('no-such-id', {}), 'ENGRAM_MEMORY_INVALID_INPUT'],
      ];
      for (const [attempt, code] of attempts) expect(await codeOf(attempt)).toBe(code);
      expect((await memory.list({ includeInactive: true })).map((m) => m.content)).toEqual([
        'The only memory',
      ]);
      expect((await memory.list({ kinds: ['event'] })).length).toBe(0);
    } finally {
      await memory.close();
    }
  });

  it('a file keeps its embedder: another one is refused and the file is left as it was', async () => {
    const path = join(dir, 'embedder.db');
    const memory = await createMemory({ path, embedder: 'deterministic' });
    await memory.add('Made with the deterministic embedder');
    await memory.close();
    expect(await codeOf(createMemory({ path, embedder: 'use' }))).toBe('ENGRAM_MEMORY_EMBEDDER_MISMATCH');
    const reopened = await createMemory({ path });
    try {
      expect((await reopened.list()).map((m) => m.content)).toEqual(['Made with the deterministic embedder']);
      expect((await reopened.search('deterministic embedder'))[0]?.explanation.arms).toContain('vector');
    } finally {
      await reopened.close();
    }
  });
});

describe('close', () => {
  it('releases the file: the WAL is checkpointed away, calls are refused, and the file opens again', async () => {
    const path = join(dir, 'close.db');
    const memory = await createMemory({ path, embedder: 'deterministic' });
    await memory.ingest(Array.from({ length: 50 }, (_, i) => `Closing note ${i}`));
    await memory.close();
    await memory.close();
    expect(existsSync(`${path}-wal`)).toBe(false);
    expect(await codeOf(memory.search('note'))).toBe('ENGRAM_MEMORY_CLOSED');
    expect(await codeOf(memory.add('after close'))).toBe('ENGRAM_MEMORY_CLOSED');
    const again = await createMemory({ path });
    try {
      expect(await again.list({ limit: 100 })).toHaveLength(50);
      // Rows the first process left pending are embedded by the new one's background drain.
      await again.flush();
      expect((await again.list({ limit: 100 })).every((m) => m.embedded)).toBe(true);
    } finally {
      await again.close();
    }
  });
});

describe('contradictions', () => {
  it('a fact that contradicts a current one is kept, linked, and explained; an unrelated near-duplicate is not', async () => {
    const memory = await createMemory({ path: join(dir, 'conflict.db'), embedder: 'deterministic' });
    try {
      const first = await memory.add('The API listens on port 8080');
      await memory.add('The admin console listens on port 9000');
      const second = await memory.add('The API listens on port 9090');
      const firstId = first.added[0]?.id ?? '';
      expect(second.conflicts).toEqual([{ id: firstId, reason: 'number' }]);
      const hits = await memory.search('API port');
      const newer = hits.find((h) => h.content === 'The API listens on port 9090');
      expect(newer?.explanation.conflict).toEqual({ status: 'newer', with: [firstId] });
      // Another subject with another value is neither linked nor retired.
      expect((await memory.list()).map((m) => m.content).sort()).toEqual([
        'The API listens on port 8080',
        'The API listens on port 9090',
        'The admin console listens on port 9000',
      ]);
    } finally {
      await memory.close();
    }
  });
});
