/**
 * The facade over a real SQLite file, with the deterministic embedder (reproducible): what a user of
 * `createMemory` notices — writes are searchable at once, by words and by vector; bulk ingestion is embedded in
 * the background; corrections keep a history; bad input changes nothing; close releases the file.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ModelPort } from '@engram/maintenance';
import type { VectorIndexProgress } from '@engram/store';
import { createSqliteMemoryStore } from '@engram/store-sqlite';
import { openDatabase } from '@engram/store-sqlite/raw';
import { interruptVectorIndexBuild } from '@engram/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemory } from './memory.js';
import type { Memory } from './types.js';

let dir: string;
let n = 0;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'engram-memory-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function fresh(extra: { readonly model?: ModelPort; readonly agentId?: string } = {}): Promise<Memory> {
  n += 1;
  return createMemory({ path: join(dir, `m${n}`, 'memory.db'), embedder: 'deterministic', ...extra });
}

describe('add and search', () => {
  it('a text is stored, embedded before add resolves, and found at once by words and by vector', async () => {
    const memory = await fresh();
    try {
      const { added, unchanged } = await memory.add('The API server listens on port 8080');
      expect(unchanged).toEqual([]);
      expect(added).toHaveLength(1);
      expect(added[0]?.embedded).toBe(true);
      expect(added[0]?.kind).toBe('fact');
      await memory.add('Deploys go out on Fridays');
      const hits = await memory.search('which port does the API server listen on?');
      expect(hits[0]?.content).toBe('The API server listens on port 8080');
      expect(hits[0]?.explanation.arms).toContain('vector');
      expect(hits[0]?.explanation.arms).toContain('lexical');
    } finally {
      await memory.close();
    }
  });

  it('the same text again (other case and spacing) is not stored twice', async () => {
    const memory = await fresh();
    try {
      const first = await memory.add('The team prefers tabs');
      const again = await memory.add('  the TEAM prefers   tabs ');
      expect(again.added).toEqual([]);
      expect(again.unchanged.map((m) => m.id)).toEqual(first.added.map((m) => m.id));
      expect(await memory.list()).toHaveLength(1);
    } finally {
      await memory.close();
    }
  });

  it('agents are isolated: one agent never finds, gets or deletes another one’s memories', async () => {
    const memory = await fresh({ agentId: 'alice' });
    try {
      const { added } = await memory.add('Alice keeps her notes in Obsidian');
      await memory.add('Bob keeps his notes in Notion', { agentId: 'bob' });
      expect((await memory.search('notes')).map((h) => h.agentId)).toEqual(['alice']);
      expect((await memory.search('notes', { agentId: 'bob' })).map((h) => h.agentId)).toEqual(['bob']);
      const id = added[0]?.id ?? '';
      expect(await memory.get(id, { agentId: 'bob' })).toBeNull();
      expect(await memory.delete(id, { agentId: 'bob' })).toBe(false);
      expect(await memory.deleteAll({ agentId: 'bob' })).toBe(1);
      expect(await memory.get(id)).not.toBeNull();
    } finally {
      await memory.close();
    }
  });
});

describe('memory ids', () => {
  it('new memories get time-ordered ids by default, the caller’s idFactory when given; a bad one is a typed error', async () => {
    const memory = await fresh();
    try {
      const first = (await memory.add('The API server listens on port 8080')).added[0]?.id ?? '';
      const second = (await memory.add('Deploys go out on Fridays')).added[0]?.id ?? '';
      // UUID version 7: the version nibble, and a later memory sorts after an earlier one.
      expect(first).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(second > first).toBe(true);
    } finally {
      await memory.close();
    }
    n += 1;
    let next = 0;
    const own = await createMemory({
      path: join(dir, `m${n}`, 'memory.db'),
      embedder: 'deterministic',
      idFactory: () => {
        next += 1;
        return `note-${next}`;
      },
    });
    try {
      const { added } = await own.add('The API server listens on port 8080');
      expect(added[0]?.id).toBe('note-1');
      expect((await own.search('API server port'))[0]?.id).toBe('note-1');
    } finally {
      await own.close();
    }
    n += 1;
    const path = join(dir, `m${n}`, 'memory.db');
    await expect(
      createMemory({ path, embedder: 'deterministic', idFactory: 'uuid' as unknown as () => string }),
    ).rejects.toMatchObject({ code: 'ENGRAM_MEMORY_INVALID_INPUT' });
    expect(existsSync(path)).toBe(false);
  });
});

describe('conversations', () => {
  it('messages without a model are logged as given, and a resent history logs only what is new', async () => {
    const memory = await fresh();
    try {
      const turn1 = [
        { role: 'user', content: 'Please use pnpm in this repository' },
        { role: 'assistant', content: 'Understood, pnpm it is' },
      ] as const;
      const first = await memory.add(turn1, { sessionId: 's1' });
      expect(first.events).toBe(2);
      expect(first.added.map((m) => [m.kind, m.embedded, m.sessionId])).toEqual([
        ['event', true, 's1'],
        ['event', true, 's1'],
      ]);
      const second = await memory.add(
        [...turn1, { role: 'user', content: 'And run biome before committing' }],
        {
          sessionId: 's1',
        },
      );
      expect(second.events).toBe(1);
      expect(await memory.list({ kinds: ['event'] })).toHaveLength(3);
      expect((await memory.search('biome'))[0]?.content).toContain('biome');
    } finally {
      await memory.close();
    }
  });

  it('with a model, memories are extracted from the messages and embedded before add resolves', async () => {
    const asked: string[] = [];
    const model: ModelPort = {
      id: 'scripted',
      async generate({ jsonSchema }) {
        asked.push(jsonSchema.name);
        if (jsonSchema.name === 'memory_candidates') {
          return {
            text: JSON.stringify({
              memories: [{ content: 'The user deploys with Docker Compose', kind: 'fact', importance: 0.8 }],
            }),
          };
        }
        return { text: JSON.stringify({ decision: 'ADD', targetId: null, content: null }) };
      },
    };
    const memory = await fresh({ model });
    try {
      const result = await memory.add([
        { role: 'user', content: 'We ship everything with docker compose up' },
      ]);
      expect(asked[0]).toBe('memory_candidates');
      expect(result.extractionError).toBeUndefined();
      expect(result.extraction).toBe('extracted');
      const fact = result.added.find((m) => m.kind === 'fact');
      expect(fact?.content).toBe('The user deploys with Docker Compose');
      expect(fact?.embedded).toBe(true);
      expect((await memory.search('how does the user deploy?', { kinds: ['fact'] }))[0]?.id).toBe(fact?.id);
    } finally {
      await memory.close();
    }
  });
});

describe('bulk ingestion', () => {
  it('ingested texts are found by words at once and all embedded after flush', async () => {
    const memory = await fresh();
    try {
      const texts = Array.from({ length: 300 }, (_, i) => `Build step ${i} writes artifact-${i}.tar`);
      const summary = await memory.ingest(texts);
      expect(summary.added).toBe(300);
      expect(summary.pending).toBeGreaterThan(0);
      expect((await memory.search('artifact-123.tar'))[0]?.content).toBe(
        'Build step 123 writes artifact-123.tar',
      );
      await memory.flush();
      const listed = await memory.list({ limit: 1000 });
      expect(listed).toHaveLength(300);
      expect(listed.every((m) => m.embedded)).toBe(true);
      expect((await memory.health()).store.byEmbeddingState.pending).toBe(0);
      const again = await memory.ingest(texts.slice(0, 10));
      expect(again).toEqual({ added: 0, unchanged: 10, pending: 0 });
    } finally {
      await memory.close();
    }
  });
});

describe('maintain and health', () => {
  it('a merge made by the pass is embedded in the same pass: found by vector at once, nothing left pending', async () => {
    const texts = [
      'The staging database is backed up every night at two',
      'The staging database gets backed up every night at two',
      'The staging database is backed up each night at two',
    ];
    const model: ModelPort = {
      id: 'scripted',
      async generate({ jsonSchema }) {
        if (jsonSchema.name === 'memory_merge') {
          return {
            text: JSON.stringify({ merge: true, content: 'The staging database is backed up nightly at 2' }),
          };
        }
        if (jsonSchema.name === 'memory_reflection') return { text: JSON.stringify({ reflections: [] }) };
        if (jsonSchema.name === 'memory_persona')
          return { text: JSON.stringify({ persona: 'An engineer.' }) };
        return { text: JSON.stringify({ verdict: 'keepBoth' }) };
      },
    };
    const memory = await fresh({ model });
    try {
      for (const text of texts) await memory.add(text, { kind: 'semantic' });
      const pass = await memory.maintain({ force: true });
      expect(pass.report?.heavy.steps.merge).toBe('completed');
      // Embedded by the pass itself, not by a later drain.
      expect(pass.details?.written).toEqual({ rows: 1, embedded: 1, pending: 0 });
      const merged = (await memory.list({ limit: 10 })).find((m) =>
        m.content.startsWith('The staging database is backed up nightly'),
      );
      expect(merged?.embedded).toBe(true);
      expect((await memory.health()).store.byEmbeddingState.pending).toBe(0);
      const hits = await memory.search('staging database backup at night');
      expect(hits[0]?.id).toBe(merged?.id);
      expect(hits[0]?.explanation.arms).toContain('vector');
    } finally {
      await memory.close();
    }
  });

  it('a pass runs for the agent, and health reports counts without any memory text', async () => {
    const memory = await fresh({ agentId: 'ops' });
    try {
      await memory.add('The on-call rotation changes every Monday');
      await memory.add([{ role: 'user', content: 'Page me only for severity one incidents' }]);
      const pass = await memory.maintain();
      expect(pass.skipped).toBeNull();
      expect(pass.report?.agentId).toBe('ops');
      // Without a model the heavy phase (merges, reflections) does not run.
      expect(pass.report?.heavy.modelCalls).toBe(0);
      const health = await memory.health();
      expect(health.store.totals).toMatchObject({ memories: 2, facts: 1, events: 1 });
      const text = JSON.stringify(health);
      expect(text).not.toContain('on-call');
      expect(text).not.toContain('severity');
    } finally {
      await memory.close();
    }
  });
});

describe('scopes, metadata and time', () => {
  it('a filter on user and metadata narrows search and list; asOf finds what held then', async () => {
    const memory = await fresh();
    try {
      await memory.add('Prefers window seats on flights', {
        userId: 'ann',
        metadata: { topic: 'travel', rank: 2 },
      });
      await memory.add('Prefers aisle seats on flights', {
        userId: 'bo',
        metadata: { topic: 'travel', rank: 5 },
      });
      await memory.add('Prefers green tea', { userId: 'ann', metadata: { topic: 'food' } });
      const ann = await memory.search('seats on flights', { filter: { userId: 'ann' } });
      expect(ann.map((h) => h.content)).toEqual(['Prefers window seats on flights']);
      expect(ann[0]?.metadata).toEqual({ topic: 'travel', rank: 2 });
      const ranked = await memory.search('prefers', {
        filter: { metadata: [{ key: 'rank', op: 'range', gte: 3 }] },
      });
      expect(ranked.map((h) => h.userId)).toEqual(['bo']);
      const food = await memory.list({ filter: { metadata: [{ key: 'topic', op: 'eq', value: 'food' }] } });
      expect(food.map((m) => m.content)).toEqual(['Prefers green tea']);

      const [tea] = food;
      const before = Date.now();
      await new Promise((resolve) => setTimeout(resolve, 5));
      const coffee = await memory.update(tea?.id ?? '', 'Prefers black coffee');
      expect(coffee.userId).toBe('ann');
      expect(coffee.metadata).toEqual({ topic: 'food' });
      expect((await memory.search('prefers tea coffee')).map((h) => h.content)).not.toContain(
        'Prefers green tea',
      );
      const then = await memory.search('prefers tea coffee', { asOf: before });
      expect(then.map((h) => h.content)).toContain('Prefers green tea');
      expect(then.map((h) => h.content)).not.toContain('Prefers black coffee');
    } finally {
      await memory.close();
    }
  });
});

describe('vector index', () => {
  it('vectorIndex is handed to the SQLite store: a quantised file searches by vector and records its setting', async () => {
    n += 1;
    const path = join(dir, `m${n}`, 'memory.db');
    const memory = await createMemory({
      path,
      embedder: 'deterministic',
      vectorIndex: { quantization: 'int8' },
    });
    try {
      await memory.add('The API server listens on port 8080');
      await memory.add('Deploys go out on Fridays');
      const hits = await memory.search('which port does the API server listen on?');
      expect(hits[0]?.content).toBe('The API server listens on port 8080');
      expect(hits[0]?.explanation.arms).toContain('vector');
    } finally {
      await memory.close();
    }
    const store = createSqliteMemoryStore({ path, access: 'read' });
    try {
      expect(store.vectorIndex.quantization).toBe('int8');
    } finally {
      await store.close();
    }
  });

  it('onIndexProgress reports the quantised build an interrupted process left, as the open finishes it', async () => {
    n += 1;
    const path = join(dir, `m${n}`, 'memory.db');
    const options = {
      path,
      embedder: 'deterministic' as const,
      vectorIndex: { quantization: 'int8' as const },
    };
    const first = await createMemory(options);
    try {
      for (const text of [
        'The API server listens on port 8080',
        'Deploys go out on Fridays',
        'Tea at four',
      ]) {
        await first.add(text);
      }
    } finally {
      await first.close();
    }
    // What a build stopped before its first step leaves: an empty quantised table and the watermark at 0.
    interruptVectorIndexBuild(openDatabase(path));
    const reports: VectorIndexProgress[] = [];
    const memory = await createMemory({ ...options, onIndexProgress: (p) => reports.push(p) });
    try {
      expect(reports.length).toBeGreaterThanOrEqual(2);
      expect(reports[0]).toEqual({ phase: 'vectorIndex', quantization: 'int8', step: 0, done: 0, total: 3 });
      expect(reports.at(-1)).toMatchObject({ done: 3, total: 3 });
      const hits = await memory.search('which port does the API server listen on?');
      expect(hits[0]?.content).toBe('The API server listens on port 8080');
    } finally {
      await memory.close();
    }
  });

  it('an invalid vectorIndex is the store’s typed error, and no file is left behind', async () => {
    n += 1;
    const path = join(dir, `m${n}`, 'memory.db');
    const failed = await createMemory({
      path,
      embedder: 'deterministic',
      vectorIndex: { quantization: 'nope' as 'int8' },
    }).then(
      () => null,
      (error: unknown) => (error as { code?: unknown }).code,
    );
    expect(failed).toBe('ENGRAM_STORE_INVALID_INPUT');
    expect(existsSync(path)).toBe(false);
  });
});
