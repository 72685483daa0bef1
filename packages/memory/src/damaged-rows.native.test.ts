/**
 * What a memory file damaged by another tool, or a tampered backup, does to the facade: a damaged row never
 * crashes the process, never makes a read throw, never blocks forgetting, and a backup can only hold positions
 * and revisions the store can keep adding to.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ExportRecord } from '@engram/store';
import { openDatabase } from '@engram/store-sqlite/raw';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemory } from './memory.js';

let dir: string;
let n = 0;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'engram-damaged-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const path = (): string => {
  n += 1;
  return join(dir, `d${n}.db`);
};

const open = (file: string) =>
  createMemory({ path: file, embedder: 'deterministic', backgroundDrain: false, processBeat: false });

/** A closed memory file holding `texts`, one memory each. */
async function seeded(texts: readonly string[]): Promise<string> {
  const file = path();
  const memory = await open(file);
  try {
    for (const text of texts) await memory.add(text);
  } finally {
    await memory.close();
  }
  return file;
}

/** Runs one statement on the closed file, as another tool would. */
function damage(file: string, sql: string): void {
  const db = openDatabase(file);
  try {
    db.exec(sql);
  } finally {
    db.close();
  }
}

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

describe('a damaged row', () => {
  it('a chunk count far past what the content allows: search answers and the memory can be forgotten', async () => {
    const file = path();
    const long = Array.from({ length: 30 }, (_, i) => `Sentence ${i} about green tea number ${i}.`).join(' ');
    let id: string;
    {
      const memory = await open(file);
      await memory.add('Alice likes green tea');
      id = (await memory.add(long)).added[0]?.id ?? '';
      await memory.close();
    }
    damage(file, `UPDATE memories SET chunk_count = 1000000000 WHERE content LIKE 'Sentence%'`);
    const memory = await open(file);
    try {
      const hits = await memory.search('green tea sentence');
      expect(hits.map((h) => h.id)).toContain(id);
      expect(await memory.delete(id)).toBe(true);
      expect((await memory.list()).map((m) => m.content)).toEqual(['Alice likes green tea']);
    } finally {
      await memory.close();
    }
  }, 120_000);

  it('content stored as a blob reads as text: search, context and the tools answer', async () => {
    const file = await seeded(['Alice likes green tea', 'Bob drinks coffee']);
    damage(file, `UPDATE memories SET content = CAST('Bob drinks coffee' AS BLOB) WHERE content LIKE 'Bob%'`);
    const memory = await open(file);
    try {
      const hits = await memory.search('coffee');
      expect(hits.map((h) => h.content)).toEqual(['Bob drinks coffee']);
      const recalled = await memory.context('tea');
      expect(recalled.core + recalled.recall).toContain('Alice likes green tea');
      expect((await memory.context(null)).core).toContain('Bob drinks coffee');
      expect((await memory.callTool('memory_search', { query: 'coffee' })).ok).toBe(true);
    } finally {
      await memory.close();
    }
  }, 60_000);

  it('a value outside a column closed list: health counts it, and writes, forgetting included, go on', async () => {
    const file = path();
    let bob: string;
    {
      const memory = await open(file);
      await memory.add('Alice likes green tea');
      bob = (await memory.add('Bob drinks coffee')).added[0]?.id ?? '';
      await memory.close();
    }
    // Another tool that ignores the schema's CHECK constraints.
    damage(
      file,
      `PRAGMA ignore_check_constraints = ON; UPDATE memories SET kind = 'bogus' WHERE content LIKE 'Bob%'`,
    );
    const memory = await open(file);
    try {
      expect((await memory.health()).store).toMatchObject({ integrity: { state: 'failed' } });
      expect(await memory.delete(bob)).toBe(true);
      await memory.add('Carol reads');
      expect((await memory.list()).map((m) => m.content).sort()).toEqual([
        'Alice likes green tea',
        'Carol reads',
      ]);
      expect(await memory.deleteAll()).toBe(2);
    } finally {
      await memory.close();
    }
  }, 120_000);

  it('a revision or an id that is not one: search answers without it, a change is refused, forgetting works', async () => {
    const file = await seeded([
      'Alice likes green tea',
      'Bob likes green tea too',
      'Carol likes green tea as well',
    ]);
    damage(
      file,
      `UPDATE memories SET revision = 'x' WHERE content LIKE 'Bob%';
       UPDATE memories SET id = X'4142' WHERE content LIKE 'Carol%';`,
    );
    const memory = await open(file);
    try {
      expect((await memory.search('green tea')).map((m) => m.content)).toEqual(['Alice likes green tea']);
      const bob = (await memory.list()).find((m) => m.content.startsWith('Bob'));
      await expect(memory.update(bob?.id ?? '', { tags: ['x'] })).rejects.toMatchObject({
        code: 'ENGRAM_STORE_CORRUPT',
      });
      await expect(memory.update(bob?.id ?? '', 'Bob likes tea')).rejects.toMatchObject({
        code: 'ENGRAM_STORE_CORRUPT',
      });
      expect((await memory.health()).store).toMatchObject({ integrity: { state: 'failed' } });
      expect(await memory.delete(bob?.id ?? '')).toBe(true);
      expect(await memory.deleteAll()).toBe(2);
    } finally {
      await memory.close();
    }
  }, 120_000);

  it('a position or a cursor that is not a counter: the session can be read, added to and ingested', async () => {
    const file = path();
    {
      const memory = await open(file);
      await memory.add(
        [
          { role: 'user', content: 'I moved to Lyon' },
          { role: 'assistant', content: 'Noted' },
        ],
        { sessionId: 's1' },
      );
      await memory.ingest([{ role: 'user', content: 'I like cats' }], { sessionId: 's1' });
      await memory.close();
    }
    damage(file, `UPDATE events SET seq = 'x' WHERE seq = 2; UPDATE session_cursors SET cursor = 1e300`);
    const memory = await open(file);
    try {
      expect((await memory.messages({ sessionId: 's1' })).map((m) => m.content)).toContain('I moved to Lyon');
      await memory.add([{ role: 'user', content: 'And I cycle to work' }], { sessionId: 's1' });
      await memory.ingest([{ role: 'user', content: 'I like dogs too' }], { sessionId: 's1' });
      const logged = (await memory.messages({ sessionId: 's1' })).map((m) => m.content);
      expect(logged).toEqual(expect.arrayContaining(['And I cycle to work', 'I like dogs too']));
      expect((await memory.health()).store).toMatchObject({ integrity: { state: 'failed' } });
    } finally {
      await memory.close();
    }
  }, 120_000);

  it('a damaged vector chunk: health fails, export answers, forgetting works, the rest is embedded again', async () => {
    const file = path();
    let alice: string;
    {
      const memory = await open(file);
      alice = (await memory.add('Alice likes green tea')).added[0]?.id ?? '';
      await memory.add('Bob drinks coffee');
      await memory.close();
    }
    // Another tool rewrites sqlite-vec's vector blob (the one table of its index SQL may change).
    damage(file, `UPDATE memories_vec_vector_chunks00 SET vectors = x'0102'`);
    const memory = await open(file);
    try {
      expect((await memory.health()).store).toMatchObject({ integrity: { state: 'failed' } });
      const records = await collect(memory.export({ vectors: true }));
      expect(records.at(-1)).toMatchObject({ type: 'end', counts: { memories: 2 } });
      expect(await memory.delete(alice)).toBe(true);
      expect((await memory.list()).map((m) => m.content)).toEqual(['Bob drinks coffee']);
      await memory.maintain();
      const health = (await memory.health()).store;
      expect(health).toMatchObject({
        integrity: { state: 'ok' },
        byEmbeddingState: { pending: 0, ready: 1 },
      });
      expect((await memory.search('coffee'))[0]?.explanation.arms).toContain('vector');
      expect(await memory.deleteAll()).toBe(1);
    } finally {
      await memory.close();
    }
  }, 120_000);
});

describe('the backup of a damaged file', () => {
  it('an import into a file with a damaged vector chunk repairs it first, and restores', async () => {
    const source = await open(path());
    let records: ExportRecord[];
    try {
      await source.add('Dan plays chess');
      records = await collect(source.export({ vectors: true }));
    } finally {
      await source.close();
    }
    const file = await seeded(['Alice likes green tea']);
    damage(file, `UPDATE memories_vec_vector_chunks00 SET vectors = x'0102'`);
    const memory = await open(file);
    try {
      expect((await memory.import(records)).imported.memories).toBe(1);
      expect((await memory.list()).map((m) => m.content).sort()).toEqual([
        'Alice likes green tea',
        'Dan plays chess',
      ]);
      expect((await memory.health()).store).toMatchObject({ integrity: { state: 'ok' } });
    } finally {
      await memory.close();
    }
  }, 120_000);

  it('leaves out, and counts, the rows an import would refuse, so the rest restores', async () => {
    const file = path();
    {
      const memory = await open(file);
      for (let i = 0; i < 20; i += 1)
        await memory.add(`Note ${i}: the build of service ${i} takes ${i} minutes`);
      await memory.close();
    }
    damage(
      file,
      `PRAGMA ignore_check_constraints = ON;
       UPDATE memories SET created_at = '2024-01-01' WHERE content LIKE 'Note 3:%';
       UPDATE memories SET importance = 9e999 WHERE content LIKE 'Note 7:%';`,
    );
    const memory = await open(file);
    let records: ExportRecord[];
    try {
      records = await collect(memory.export());
    } finally {
      await memory.close();
    }
    const end = records.at(-1);
    expect(end).toMatchObject({ type: 'end', counts: { memories: 18 }, skipped: 2 });
    const target = await open(path());
    try {
      const summary = await target.import(records);
      expect(summary.imported.memories).toBe(18);
      const restored = (await target.list({ limit: 100 })).map((m) => m.content);
      expect(restored).toHaveLength(18);
      expect(restored.some((c) => c.startsWith('Note 3:') || c.startsWith('Note 7:'))).toBe(false);
    } finally {
      await target.close();
    }
  }, 120_000);
});

describe('a tampered backup', () => {
  /** A backup of one memory and one logged message, with `edit` applied to its rows. */
  async function backup(edit: (record: ExportRecord) => ExportRecord): Promise<ExportRecord[]> {
    const memory = await open(path());
    try {
      await memory.add('Alice likes green tea');
      await memory.add([{ role: 'user', content: 'I moved to Lyon' }], { sessionId: 's1' });
      return (await collect(memory.export())).map(edit);
    } finally {
      await memory.close();
    }
  }

  /** Imports `records` into a new memory: refused as invalid input, and nothing written. */
  async function expectRefused(records: ExportRecord[], what: string): Promise<void> {
    const target = await open(path());
    try {
      await expect(target.import(records), what).rejects.toMatchObject({
        code: 'ENGRAM_STORE_INVALID_INPUT',
      });
      expect(await target.list(), what).toEqual([]);
    } finally {
      await target.close();
    }
  }

  it('a revision or a position past what the store can add to is refused, and nothing is written', async () => {
    const edits: [string, (r: ExportRecord) => ExportRecord][] = [
      [
        'revision',
        (r) => (r.type === 'memory' ? { ...r, row: { ...r.row, revision: Number.MAX_SAFE_INTEGER - 1 } } : r),
      ],
      [
        'event seq',
        (r) => (r.type === 'event' ? { ...r, row: { ...r.row, seq: Number.MAX_SAFE_INTEGER } } : r),
      ],
      [
        'cursor',
        (r) => (r.type === 'cursor' ? { ...r, row: { ...r.row, cursor: Number.MAX_SAFE_INTEGER } } : r),
      ],
    ];
    for (const [what, edit] of edits) {
      const records = await backup(edit);
      await expectRefused(records, what);
    }
  }, 120_000);

  it('a header missing or mistyping a field is refused as invalid input, and nothing is written', async () => {
    const edits: [string, Record<string, unknown>][] = [
      ['no embedder', { embedder: undefined }],
      ['embedder without dimensions', { embedder: { id: 'x' } }],
      ['formatVersion as text', { formatVersion: 'x' }],
      ['no vectors flag', { vectors: undefined }],
      ['no agentId', { agentId: undefined }],
    ];
    for (const [what, change] of edits) {
      const records = await backup((r) => (r.type === 'header' ? ({ ...r, ...change } as ExportRecord) : r));
      await expectRefused(records, what);
    }
  }, 120_000);

  it('a progress callback that throws at the end aborts the import with nothing written', async () => {
    const records = await backup((r) => r);
    const target = await open(path());
    try {
      let calls = 0;
      await expect(
        target.import(records, {
          onProgress: () => {
            calls += 1;
            throw new Error('the caller gave up');
          },
        }),
      ).rejects.toThrow();
      expect(calls).toBe(1);
      expect(await target.list()).toEqual([]);
    } finally {
      await target.close();
    }
  }, 60_000);
});
