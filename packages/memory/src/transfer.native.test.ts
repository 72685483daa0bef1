/**
 * Backups through the facade, SQLite to SQLite: `memory.export()` streams the store's export records and
 * `memory.import(records)` restores them with the store's checks — into one agent when asked, with the decay
 * clock started at the import unless `keepAges`, and the same records `engram export` writes.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DETERMINISTIC_PROFILE } from '@engram/embedder-deterministic';
import { createSqliteMemoryStore } from '@engram/store-sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemory } from './memory.js';
import { type ExportRecord, formatExportLine, parseExportLine } from './transfer.js';

const IN_2017 = Date.UTC(2017, 5, 1);
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'engram-memory-transfer-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function collect(records: AsyncIterable<ExportRecord>): Promise<ExportRecord[]> {
  const out: ExportRecord[] = [];
  for await (const r of records) out.push(r);
  return out;
}

describe('memory.export and memory.import', () => {
  it('round-trips every agent of a file into a fresh one; the copy exports the same records; a second import changes nothing', async () => {
    const source = await createMemory({ path: join(dir, 'a.db'), embedder: 'deterministic' });
    const copy = await createMemory({ path: join(dir, 'b.db'), embedder: 'deterministic' });
    try {
      await source.add('The API server listens on port 8080', { agentId: 'coder' });
      await source.add('Deploys go out on Fridays', { agentId: 'ops' });
      const records = await collect(source.export({ vectors: true }));
      expect(records[0]).toMatchObject({ type: 'header', agentId: null, vectors: true });
      expect(records.at(-1)).toMatchObject({ type: 'end', counts: { memories: 2 } });
      // The records are the export format's lines, one for one.
      const lines = records.map(formatExportLine);
      const summary = await copy.import(
        lines.map((l, i) => parseExportLine(l, i + 1)),
        { keepAges: true },
      );
      expect(summary.imported.memories).toBe(2);
      expect(summary.vectorsImported).toBe(2);
      expect((await collect(copy.export({ vectors: true }))).map(formatExportLine)).toEqual(lines);
      const again = await copy.import(records);
      expect(again.imported.memories).toBe(0);
      expect(again.unchanged.memories).toBe(2);
      const hits = await copy.search('which port does the API server use?', { agentId: 'coder' });
      expect(hits[0]?.content).toBe('The API server listens on port 8080');
    } finally {
      await source.close();
      await copy.close();
    }
  });

  it('imports one agent as another, and restarts the decay clock of old memories unless keepAges', async () => {
    const path = join(dir, 'old.db');
    const store = createSqliteMemoryStore({ path, embedding: DETERMINISTIC_PROFILE, now: () => IN_2017 });
    await store.insertMemories([{ agentId: 'alice', kind: 'semantic', content: 'a note from 2017' }]);
    store.close();
    const old = await createMemory({ path, embedder: 'deterministic' });
    const restored = await createMemory({ path: join(dir, 'restored.db'), embedder: 'deterministic' });
    try {
      const records = await collect(old.export({ agentId: 'alice' }));
      const before = Date.now();
      await restored.import(records, { agentId: 'bob' });
      const [item] = await restored.list({ agentId: 'bob' });
      expect(item?.content).toBe('a note from 2017');
      expect(await restored.list({ agentId: 'alice' })).toEqual([]);
      // Created in 2017, last written here at the import: decay counts from the import.
      expect(item?.createdAt).toBe(IN_2017);
      expect(item?.updatedAt).toBeGreaterThanOrEqual(before);
      const kept = await createMemory({ path: join(dir, 'kept.db'), embedder: 'deterministic' });
      try {
        await kept.import(records, { keepAges: true });
        expect((await kept.list({ agentId: 'alice' }))[0]?.updatedAt).toBe(IN_2017);
      } finally {
        await kept.close();
      }
      await expect(restored.import(records, { agentId: ' bad id' })).rejects.toMatchObject({
        code: 'ENGRAM_MEMORY_INVALID_INPUT',
      });
    } finally {
      await old.close();
      await restored.close();
    }
  });
});
