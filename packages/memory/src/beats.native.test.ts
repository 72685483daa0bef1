/**
 * Process beats through the facade and the engine, on a real SQLite file: a memory publishes its runtime
 * figures into the file, a read-only engine on the same file (another health page) lists that memory's process
 * with its searches and the totals, and the row — as stored and as served — holds numbers and enum keys only.
 * A clean `close()` deletes the row; `processBeat: false` never writes one; a bad interval is a typed error.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '@engram/store-sqlite/raw';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openEngine } from './engine.js';
import { createMemory } from './memory.js';

const CANARY = 'CANARY-7f3a';
const POLL = { timeout: 15_000, interval: 50 } as const;

let dir: string;
let path: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), `engram-beats-${CANARY}-`));
  path = join(dir, 'memory.db');
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** Every row of the beat table as stored: id and the snapshot's text. */
function storedRows(): { process_id: string; snapshot: string }[] {
  const raw = openDatabase(path, { loadVectorExtension: false, readonly: true });
  try {
    return raw.prepare('SELECT process_id, snapshot FROM process_beats').all() as {
      process_id: string;
      snapshot: string;
    }[];
  } finally {
    raw.close();
  }
}

/** Every leaf a number, boolean or null; every key an identifier. */
function expectContentFree(value: unknown, where: string): void {
  if (value === null || typeof value === 'number' || typeof value === 'boolean') return;
  expect(typeof value, where).toBe('object');
  expect(Array.isArray(value), where).toBe(false);
  for (const [key, inner] of Object.entries(value as object)) {
    expect(key, where).toMatch(/^[A-Za-z][A-Za-z0-9_]{0,63}$/);
    expectContentFree(inner, `${where}.${key}`);
  }
}

describe('process beats', () => {
  it('a memory’s searches reach a read-only health page on the same file; the row is content-free', async () => {
    const memory = await createMemory({ path, embedder: 'deterministic', processBeat: { intervalMs: 50 } });
    const reader = await openEngine({ path, embedder: 'deterministic', access: 'read', env: {} });
    try {
      await memory.add(`${CANARY} the deploy key lives in vault.internal/secret`);
      for (let i = 0; i < 4; i += 1) await memory.search(`${CANARY} where is the deploy key ${i}`);

      await expect
        .poll(async () => {
          const dto = await reader.health(null);
          return dto.processes?.list
            .filter((p) => !p.self)
            .map((p) => p.runtime.agent.retrieval.search.operations);
        }, POLL)
        .toEqual([4]);
      const dto = await reader.health(null);
      expect(dto.runtime.agent.retrieval.search.operations).toBe(4);
      expect(dto.processes?.list.find((p) => p.self)?.id).toBe(reader.processId);

      const rows = storedRows();
      expect(rows).toHaveLength(1);
      for (const stored of rows) {
        expect(stored.snapshot).not.toContain(CANARY);
        expect(stored.snapshot).not.toMatch(/vault|deploy|SELECT|memory\.db|engram-beats/);
        expectContentFree(JSON.parse(stored.snapshot), 'stored');
      }
      const served = JSON.stringify(dto);
      expect(served).not.toContain(CANARY);
      expect(served).not.toMatch(/vault|deploy|SELECT|memory\.db|engram-beats/);
      for (const process of dto.processes?.list ?? []) expectContentFree(process.runtime, 'served');
    } finally {
      await memory.close();
    }
    // A clean close deletes the row at once: the page lists the reader only.
    expect(storedRows()).toEqual([]);
    expect((await reader.health(null)).processes?.list.map((p) => p.self)).toEqual([true]);
    await reader.close();
  }, 30_000);

  it('processBeat: false publishes nothing; a bad interval is a typed error', async () => {
    const quiet = await openEngine({ path, embedder: 'deterministic', processBeat: false, env: {} });
    const busy = await openEngine({
      path,
      embedder: 'deterministic',
      env: { ENGRAM_PROCESS_BEAT_MS: '50' },
    });
    try {
      await quiet.retriever.search('a', 'anything');
      // The other engine beats (so the table is written to), yet the quiet one never appears.
      await expect.poll(() => storedRows().map((r) => r.process_id), POLL).toEqual([busy.processId]);
      expect(storedRows().map((r) => r.process_id)).not.toContain(quiet.processId);
    } finally {
      await quiet.close();
      await busy.close();
    }
    for (const env of [{ ENGRAM_PROCESS_BEAT_MS: '5' }, { ENGRAM_PROCESS_BEAT_MS: 'soon' }]) {
      await expect(openEngine({ path, embedder: 'deterministic', env })).rejects.toMatchObject({
        code: 'ENGRAM_MEMORY_INVALID_CONFIG',
        message: expect.stringContaining('ENGRAM_PROCESS_BEAT_MS'),
      });
    }
    await expect(
      createMemory({ path, embedder: 'deterministic', processBeat: { intervalMs: 0 } }),
    ).rejects.toMatchObject({ code: 'ENGRAM_MEMORY_INVALID_CONFIG' });
  }, 30_000);
});
