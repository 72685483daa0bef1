/**
 * The CLI and a file's vector index quantization: the CLI has no quantization setting, so it opens a file with the
 * one the file records and follows another process's `resetVectorIndex` (its commands and MCP tools keep working);
 * and a store's vector index mismatch is never reported as "another embedder" (its recovery is different), while
 * an embedder mismatch still is.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DETERMINISTIC_PROFILE } from '@engram/embedder-deterministic';
import { createSqliteMemoryStore } from '@engram/store-sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { embedderMismatch } from './embedder-choice.js';
import { openEngine } from './engine.js';

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'engram-cli-vindex-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A new file of the deterministic embedder with an int8 vector index; returns its path. */
async function int8File(name: string): Promise<string> {
  const path = join(dir, name);
  const store = createSqliteMemoryStore({
    path,
    embedding: DETERMINISTIC_PROFILE,
    vectorIndex: { quantization: 'int8' },
  });
  await store.close();
  return path;
}

/** The error a store open throws. */
function openError(open: () => unknown): unknown {
  try {
    open();
  } catch (error) {
    return error;
  }
  throw new Error('expected the open to throw');
}

describe('the store errors the CLI maps at open', () => {
  it('a vector index mismatch passes as the store reports it, not as another embedder', async () => {
    const path = await int8File('mapped.db');
    const error = openError(() => createSqliteMemoryStore({ path, vectorIndex: { quantization: 'bit' } }));
    const mapped = embedderMismatch(error, DETERMINISTIC_PROFILE);
    expect(mapped).toBe(error);
    // As the CLI prints a failure: its message, then its code.
    const line = `${(mapped as Error).message} (${(mapped as { code: string }).code})`;
    expect(line).toMatch(
      /quantization is 'int8', not the 'bit' asked for.*\(ENGRAM_STORE_VECTOR_INDEX_MISMATCH\)$/,
    );
    expect(line).not.toContain('embedder');
  });

  it('an embedder mismatch is still ENGRAM_MEMORY_EMBEDDER_MISMATCH', async () => {
    const path = await int8File('embedder.db');
    const other = { id: 'other-v1', dimensions: 64 };
    const error = openError(() => createSqliteMemoryStore({ path, embedding: other }));
    expect((error as { code?: unknown }).code).toBe('ENGRAM_STORE_FINGERPRINT_MISMATCH');
    const mapped = embedderMismatch(error, other) as { code?: unknown; message?: unknown };
    expect(mapped.code).toBe('ENGRAM_MEMORY_EMBEDDER_MISMATCH');
    expect(mapped.message).toBe(
      'the database was indexed with another embedder than other-v1; use another --db or re-index it',
    );
  });
});

describe('another process changes the quantization while the CLI has the file open', () => {
  it('the CLI follows the file: its tools remember and find by vector with the new setting', async () => {
    const path = await int8File('follow.db');
    const engram = await openEngine({ path, env: { ENGRAM_EMBEDDER: 'deterministic' } });
    try {
      const first = await engram.tools.execute(
        'memory_remember',
        { content: 'The API server listens on port 8080' },
        { agentId: 'default' },
      );
      expect(first.ok).toBe(true);
      const other = createSqliteMemoryStore({ path });
      try {
        await other.resetVectorIndex({ quantization: 'bit' });
      } finally {
        await other.close();
      }
      const second = await engram.tools.execute(
        'memory_remember',
        { content: 'Deploys go out on Fridays' },
        { agentId: 'default' },
      );
      expect(second.ok).toBe(true);
      const { results, execution } = await engram.retriever.search('default', 'when do deploys go out?');
      expect(execution.degradations).toEqual([]);
      expect(results[0]?.record.content).toBe('Deploys go out on Fridays');
      expect(results[0]?.explanation.arms).toContain('vector');
    } finally {
      await engram.close();
    }
  });
});
