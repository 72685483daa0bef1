import { contentHash, isValidTag, normalizeContent } from '@engram/contracts';
import type { EventInput } from '@engram/store';
import { afterEach, describe, expect, it } from 'vitest';
import { createEventIngestor } from './ingest.js';
import { openTempStore, type TempStore } from './test-support/native.js';

let open: TempStore[] = [];
afterEach(async () => {
  for (const t of open) await t.close();
  open = [];
});
async function temp(): Promise<TempStore> {
  const t = await openTempStore();
  open.push(t);
  return t;
}

const T0 = 1_700_000_000_000;

/** A scripted coding session: a request, tool calls on files, their results and an answer. */
const SESSION: EventInput[] = [
  { seq: 1, type: 'message', role: 'user', content: 'Fix the failing build in src/app.ts', createdAt: T0 },
  {
    seq: 2,
    type: 'tool_call',
    role: 'assistant',
    toolName: 'read_file',
    content: '',
    metadata: { arguments: { path: 'src/app.ts' } },
    createdAt: T0 + 1,
  },
  {
    seq: 3,
    type: 'tool_result',
    role: 'tool',
    toolName: 'read_file',
    content: 'export const port = 8080;',
    metadata: { path: 'src/app.ts' },
    createdAt: T0 + 2,
  },
  {
    seq: 4,
    type: 'tool_call',
    role: 'assistant',
    toolName: 'edit_file',
    content: '',
    metadata: {
      arguments: JSON.stringify({ file_path: 'src/app.ts', paths: ['src/config.ts'], patch: '+x' }),
    },
    createdAt: T0 + 3,
  },
  {
    seq: 5,
    type: 'tool_call',
    role: 'assistant',
    toolName: 'bash',
    content: '',
    metadata: { arguments: { command: 'pnpm test', filePath: 'package.json' } },
    createdAt: T0 + 4,
  },
  {
    seq: 6,
    type: 'message',
    role: 'assistant',
    content: 'Fixed: the port constant was wrong.',
    createdAt: T0 + 5,
  },
];

const h = (text: string): string => `hash:${contentHash(text)}`;

describe('event ingestion over a real store', () => {
  it('an event of a user becomes a memory of that user; an event without one, the agent’s own', async () => {
    const { store } = await temp();
    const ingestor = createEventIngestor({ store });
    await ingestor.appendAndIngest('agent', 's-bob', [
      { seq: 1, type: 'message', role: 'user', content: 'My bank is Acme', userId: 'bob', createdAt: T0 },
      { seq: 2, type: 'message', role: 'assistant', content: 'Noted, Bob.', createdAt: T0 + 1 },
    ]);
    const rows = await store.listMemories('agent', { kinds: ['event'] });
    expect(rows.map((r) => [r.seqFrom, r.userId])).toEqual([
      [1, 'bob'],
      [2, null],
    ]);
    // Another user never sees Bob's event memory.
    const forAlice = await store.listMemories('agent', { kinds: ['event'], filter: { forUser: 'alice' } });
    expect(forAlice.map((r) => r.seqFrom)).toEqual([2]);
  });

  it('derives tags exactly as specified for a scripted session with tool calls on files', async () => {
    const { store } = await temp();
    const ingestor = createEventIngestor({ store });
    const result = await ingestor.appendAndIngest('agent', 'session-1', SESSION);
    expect(result).toMatchObject({
      appended: 6,
      skipped: 0,
      ingest: { events: 6, memories: 6, batches: 1, cursor: 6 },
    });
    const memories = [...(await store.listMemories('agent', { kinds: ['event'], limit: 100 }))].sort(
      (a, b) => (a.seqFrom ?? 0) - (b.seqFrom ?? 0),
    );
    const editCall = 'tool edit_file {"file_path":"src/app.ts","paths":["src/config.ts"],"patch":"+x"}';
    const bashCall = 'tool bash {"command":"pnpm test","filePath":"package.json"}';
    expect(memories.map((m) => ({ content: m.content, tags: m.tags }))).toEqual([
      {
        content: 'Fix the failing build in src/app.ts',
        tags: [h('Fix the failing build in src/app.ts'), 'role:user', 'seq:1-1', 'type:message'],
      },
      {
        content: 'tool read_file {"path":"src/app.ts"}',
        tags: [
          'file:src/app.ts',
          h('tool read_file {"path":"src/app.ts"}'),
          'seq:2-2',
          'tool:read_file',
          'type:tool_call',
        ],
      },
      {
        content: 'export const port = 8080;',
        tags: [
          'file:src/app.ts',
          h('export const port = 8080;'),
          'seq:3-3',
          'tool:read_file',
          'type:tool_result',
        ],
      },
      {
        content: editCall,
        tags: [
          'file:src/app.ts',
          'file:src/config.ts',
          h(editCall),
          'seq:4-4',
          'tool:edit_file',
          'type:tool_call',
        ],
      },
      {
        content: bashCall,
        tags: ['file:package.json', h(bashCall), 'seq:5-5', 'tool:bash', 'type:tool_call'],
      },
      {
        content: 'Fixed: the port constant was wrong.',
        tags: [h('Fixed: the port constant was wrong.'), 'role:assistant', 'seq:6-6', 'type:message'],
      },
    ]);
    for (const m of memories) {
      expect(m).toMatchObject({ kind: 'event', sessionId: 'session-1', importance: 0.3 });
      expect(m.seqTo).toBe(m.seqFrom);
      // The hash tag is the store's content hash of the memory.
      expect(m.tags).toContain(`hash:${m.contentHash}`);
    }
    expect(memories[0]?.createdAt).toBe(T0);
    // Retrieval filters find the rows by their derived tags.
    const onFile = await store.listMemories('agent', { tags: ['file:src/app.ts'], limit: 100 });
    expect(onFile).toHaveLength(3);
  });

  it('ingesting the same events twice adds nothing; new events are ingested incrementally', async () => {
    const { store } = await temp();
    const ingestor = createEventIngestor({ store });
    await ingestor.appendAndIngest('agent', 's', SESSION.slice(0, 4));
    const again = await ingestor.appendAndIngest('agent', 's', SESSION.slice(0, 4));
    expect(again).toMatchObject({
      appended: 0,
      skipped: 4,
      ingest: { events: 0, memories: 0, batches: 0, cursor: 4 },
    });
    expect(await ingestor.ingest('agent', 's')).toMatchObject({ events: 0, memories: 0 });
    expect(await store.listMemories('agent', { limit: 100 })).toHaveLength(4);
    const more = await ingestor.appendAndIngest('agent', 's', SESSION);
    expect(more).toMatchObject({ appended: 2, skipped: 4, ingest: { events: 2, memories: 2, cursor: 6 } });
    expect(await store.listMemories('agent', { limit: 100 })).toHaveLength(6);
    expect(await store.getCursor('agent', 's')).toBe(6);
  });

  it('ingests in bounded batches and resumes from the cursor', async () => {
    const { store } = await temp();
    const events: EventInput[] = Array.from({ length: 450 }, (_, i) => ({
      seq: i + 1,
      type: 'message' as const,
      role: 'user',
      content: `message number ${i + 1}`,
    }));
    await store.appendEvents('agent', 's', events);
    const ingestor = createEventIngestor({ store, batchSize: 200, maxBatchesPerRun: 2 });
    const first = await ingestor.ingest('agent', 's');
    expect(first).toMatchObject({ events: 400, memories: 400, batches: 2, cursor: 400, more: true });
    const second = await ingestor.ingestPending('agent');
    expect(second).toMatchObject({ sessions: 1, events: 50, batches: 1, more: false });
    expect(await ingestor.ingestPending('agent')).toMatchObject({ sessions: 0, events: 0 });
    expect(await store.listMemories('agent', { limit: 1000 })).toHaveLength(450);
  });

  it('two ingestors racing on one session write every event exactly once (cursor compare-and-set)', async () => {
    const { store } = await temp();
    const events: EventInput[] = Array.from({ length: 30 }, (_, i) => ({
      seq: i + 1,
      type: 'message' as const,
      role: 'user',
      content: `event ${i + 1}`,
    }));
    await store.appendEvents('agent', 's', events);
    const a = createEventIngestor({ store, batchSize: 10 });
    const b = createEventIngestor({ store, batchSize: 10 });
    const [ra, rb] = await Promise.all([a.ingest('agent', 's'), b.ingest('agent', 's')]);
    expect(ra.events + rb.events).toBe(30);
    expect(ra.conflicts + rb.conflicts).toBeGreaterThan(0);
    const rows = await store.listMemories('agent', { limit: 100 });
    expect(rows).toHaveLength(30);
    expect(new Set(rows.map((r) => r.seqFrom)).size).toBe(30);
  });

  it('drops tags the store would reject and still ingests the event; skips empty events', async () => {
    const { store } = await temp();
    const ingestor = createEventIngestor({ store });
    const long = `src/${'x'.repeat(700)}.ts`;
    await ingestor.appendAndIngest('agent', 's', [
      {
        seq: 1,
        type: 'tool_call',
        role: 'assistant',
        toolName: 'read_file',
        content: '',
        metadata: { arguments: { path: long, paths: ['ok.ts', 'bad\u0001.ts'] } },
      },
      { seq: 2, type: 'tool_result', role: 'tool', toolName: 'read_file', content: '   ' },
    ]);
    const rows = await store.listMemories('agent', { limit: 10 });
    expect(rows).toHaveLength(1);
    expect(rows[0]?.tags.filter((t) => t.startsWith('file:'))).toEqual(['file:ok.ts']);
    expect(await store.getCursor('agent', 's')).toBe(2);
  });

  it('derives tags and hashes by the rule the store enforces', async () => {
    const { store } = await temp();
    const samples = [
      'file:a.ts',
      `file:${'y'.repeat(512)}`,
      `file:${'y'.repeat(513)}`,
      'file:a\u0000b',
      'file:a\u007fb',
      'file:a\u0085b',
      'Tool:x',
      `${'p'.repeat(32)}:x`,
      `${'p'.repeat(33)}:x`,
      'p-_9:x',
      '9p:x',
      'seq:',
      'nocolon',
      'file:\uD800',
      'file:😀',
    ];
    for (const [i, tag] of samples.entries()) {
      const accepted = await store
        .insertMemory({ agentId: 'tags', kind: 'fact', content: `tag sample ${i}`, tags: [tag] })
        .then(
          () => true,
          () => false,
        );
      expect([tag, isValidTag(tag)]).toEqual([tag, accepted]);
    }
    for (const text of ['  Ｈello\tWORLD ', '用 pnpm\n安装', 'ﬁle  Ⅸ']) {
      const row = await store.insertMemory({ agentId: 'hash', kind: 'fact', content: text });
      expect(row.contentHash).toBe(contentHash(text));
      expect(normalizeContent(text)).toBe(normalizeContent(row.content));
    }
    // A lone surrogate never throws: it hashes as U+FFFD, as SQLite would store it.
    expect(contentHash('x\uDC00')).toBe(contentHash('x\uFFFD'));
  });
});
