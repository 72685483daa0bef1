/**
 * The facade's errors for a file whose vector index quantization is not the one the memory asks for: at open
 * (`ENGRAM_MEMORY_VECTOR_INDEX_MISMATCH`, not the embedder's `ENGRAM_MEMORY_EMBEDDER_MISMATCH`), and after another
 * connection's `resetVectorIndex` on a memory opened with an explicit quantization (its adds, updates and
 * searches are refused with the same code until it is reopened, its deletes still erase; the tools name the
 * store's code). A memory opened
 * without `vectorIndex` adopts the file's setting and keeps working.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSqliteMemoryStore } from '@engram/store-sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemory } from './memory.js';

let dir: string;
let n = 0;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'engram-memory-vindex-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const PORT = 'The API server listens on port 8080';
const DEPLOYS = 'Deploys go out on Fridays';

/** A new int8 file with two memories; returns its path. */
async function int8File(): Promise<string> {
  n += 1;
  const path = join(dir, `m${n}`, 'memory.db');
  const memory = await createMemory({
    path,
    embedder: 'deterministic',
    vectorIndex: { quantization: 'int8' },
  });
  try {
    await memory.add(PORT);
    await memory.add(DEPLOYS);
  } finally {
    await memory.close();
  }
  return path;
}

async function rejection(promise: Promise<unknown>): Promise<Error & { code?: string; cause?: unknown }> {
  try {
    await promise;
  } catch (error) {
    return error as Error & { code?: string; cause?: unknown };
  }
  throw new Error('expected a rejection');
}

/** Another connection changes the file's quantization. */
async function resetElsewhere(path: string, quantization: 'bit' | 'none'): Promise<void> {
  const other = createSqliteMemoryStore({ path });
  try {
    await other.resetVectorIndex({ quantization });
  } finally {
    await other.close();
  }
}

describe('opening a file with another vector index quantization', () => {
  it('is ENGRAM_MEMORY_VECTOR_INDEX_MISMATCH naming the kind asked for, not the embedder error', async () => {
    const path = await int8File();
    for (const quantization of ['bit', 'none'] as const) {
      const error = await rejection(
        createMemory({ path, embedder: 'deterministic', vectorIndex: { quantization } }),
      );
      expect(error.code).toBe('ENGRAM_MEMORY_VECTOR_INDEX_MISMATCH');
      expect(error.message).toContain(`vectorIndex.quantization '${quantization}'`);
      expect(error.message).toContain('without vectorIndex');
      expect(error.message).not.toContain('embedder');
      expect((error.cause as { code?: string }).code).toBe('ENGRAM_STORE_VECTOR_INDEX_MISMATCH');
    }
    // The recovery it names: without vectorIndex the file's setting is adopted.
    const memory = await createMemory({ path, embedder: 'deterministic' });
    try {
      const hits = await memory.search('which port does the API server listen on?');
      expect(hits[0]?.content).toBe(PORT);
      expect(hits[0]?.explanation.arms).toContain('vector');
    } finally {
      await memory.close();
    }
  });

  it('another embedder is still ENGRAM_MEMORY_EMBEDDER_MISMATCH', async () => {
    const path = await int8File();
    const error = await rejection(
      createMemory({ path, embedder: 'use', vectorIndex: { quantization: 'int8' } }),
    );
    expect(error.code).toBe('ENGRAM_MEMORY_EMBEDDER_MISMATCH');
  });
});

describe('another connection changes the quantization of an open memory', () => {
  it('a memory opened with the old one refuses add, search and update with the vector index error, and still deletes', async () => {
    const path = await int8File();
    let deployAgent = '';
    const memory = await createMemory({
      path,
      embedder: 'deterministic',
      vectorIndex: { quantization: 'int8' },
    });
    try {
      const [before] = await memory.search('which port does the API server listen on?');
      expect(before?.content).toBe(PORT);
      const deploys = (await memory.search('when do deploys go out?')).find((h) => h.content === DEPLOYS);
      expect(deploys).toBeDefined();
      deployAgent = deploys?.agentId ?? '';
      await resetElsewhere(path, 'bit');

      const added = await rejection(memory.add('Backups run nightly'));
      expect(added.code).toBe('ENGRAM_MEMORY_VECTOR_INDEX_MISMATCH');
      expect(added.message).toContain("opened with vectorIndex.quantization 'int8'");
      expect(added.message).not.toContain('Backups');
      expect((added.cause as { code?: string }).code).toBe('ENGRAM_STORE_VECTOR_INDEX_MISMATCH');
      // Not an answer from the keyword arm alone, as if nothing had happened: the search says why.
      const searched = await rejection(memory.search('which port does the API server listen on?'));
      expect(searched.code).toBe('ENGRAM_MEMORY_VECTOR_INDEX_MISMATCH');
      expect(searched.message).not.toContain('port');
      const updated = await rejection(memory.update(before?.id ?? '', 'The API server listens on port 9090'));
      expect(updated.code).toBe('ENGRAM_MEMORY_VECTOR_INDEX_MISMATCH');
      // Erasing does not wait for a reopen: the delete goes through, with the file's quantised copy.
      expect(await memory.delete(deploys?.id ?? '')).toBe(true);
      // The model-facing tool names the store's code, never the text.
      const remembered = await memory.callTool('memory_remember', { content: 'Lunch is at noon' });
      expect(remembered.ok).toBe(false);
      expect(remembered.text).toContain('ENGRAM_STORE_VECTOR_INDEX_MISMATCH');
      expect(remembered.text).not.toContain('Lunch');
    } finally {
      await memory.close();
    }
    // The refused add and update stored their text, not its vector. Reopened without vectorIndex, the memory
    // adopts the file's setting and embeds them: both are found by vector.
    const reopened = await createMemory({ path, embedder: 'deterministic' });
    try {
      await reopened.flush();
      const port = await reopened.search('which port does the API server listen on?');
      expect(port[0]?.content).toBe('The API server listens on port 9090');
      expect(port[0]?.explanation.arms).toContain('vector');
      const backups = await reopened.search('when do the backups run?');
      expect(backups[0]?.content).toBe('Backups run nightly');
      expect(backups[0]?.explanation.arms).toContain('vector');
      expect((await reopened.search('when do deploys go out?')).map((h) => h.content)).not.toContain(DEPLOYS);
    } finally {
      await reopened.close();
    }
    // The deleted memory's quantised copy went with it: nothing is left for maintenance to prune.
    const store = createSqliteMemoryStore({ path });
    try {
      expect(await store.pruneOrphanedVectors(deployAgent)).toEqual({ pruned: 0 });
    } finally {
      await store.close();
    }
  });

  it('a memory opened without vectorIndex adopts the new one and keeps working', async () => {
    const path = await int8File();
    const memory = await createMemory({ path, embedder: 'deterministic' });
    try {
      await resetElsewhere(path, 'none');
      const { added } = await memory.add('Backups run nightly');
      expect(added[0]?.embedded).toBe(true);
      const hits = await memory.search('when do the backups run?');
      expect(hits[0]?.content).toBe('Backups run nightly');
      expect(hits[0]?.explanation.arms).toContain('vector');
    } finally {
      await memory.close();
    }
  });
});
