import { availableParallelism } from 'node:os';
import { describe, expect, it } from 'vitest';
import { createUseEmbedderPool, DEFAULT_USE_BATCH_CHARS, defaultUseThreads } from './index.js';

// Behavior tier: nothing here starts a worker thread or loads the model.

describe('createUseEmbedderPool without the model', () => {
  it('defaults to the cores less one (at least one) and starts nothing until used', () => {
    const pool = createUseEmbedderPool();
    expect(defaultUseThreads()).toBe(Math.max(1, availableParallelism() - 1));
    expect(pool.threads).toBe(defaultUseThreads());
    expect(pool.profile).toEqual({ id: 'use-lite-512-v1', dimensions: 512 });
    expect(pool.backend).toBe('wasm');
    expect(pool.maxBatchSize).toBe(32);
    expect(pool.maxBatchChars).toBe(DEFAULT_USE_BATCH_CHARS);
    expect(pool.running).toBe(0);
  });

  it('rejects bad options with ENGRAM_EMBEDDER_USE_INVALID_CONFIG', () => {
    for (const config of [
      { threads: 0 },
      { threads: 65 },
      { threads: 1.5 },
      { maxBatchSize: 0 },
      { maxBatchSize: 129 },
      { maxBatchChars: 1_000 },
      { backend: 'gpu' as 'cpu' },
      { modelDirectory: '' },
    ]) {
      expect(() => createUseEmbedderPool(config)).toThrow(
        expect.objectContaining({ code: 'ENGRAM_EMBEDDER_USE_INVALID_CONFIG' }),
      );
    }
  });

  it('answers blank texts with zero vectors and rejects bad input, aborts and a closed pool, without a worker', async () => {
    const pool = createUseEmbedderPool({ threads: 2 });
    const vectors = await pool.embed(['', ' \n\t ']);
    expect(vectors.map((v) => v.length)).toEqual([512, 512]);
    expect(vectors.every((v) => v.every((x) => x === 0))).toBe(true);
    expect(await pool.embed([])).toEqual([]);
    const secret = 'my secret memory text';
    const error: unknown = await pool.embed([secret, 42] as unknown as string[]).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'ENGRAM_EMBEDDER_USE_INVALID_INPUT' });
    expect(String((error as Error).message)).not.toContain(secret);
    const controller = new AbortController();
    controller.abort(new Error('stop'));
    await expect(pool.embed([secret], { signal: controller.signal })).rejects.toMatchObject({
      name: 'AbortError',
      code: 'ENGRAM_EMBEDDER_USE_ABORTED',
    });
    await expect(pool.load({ signal: controller.signal })).rejects.toMatchObject({ name: 'AbortError' });
    expect(pool.running).toBe(0);
    await pool.close();
    await pool.close();
    await expect(pool.embed([secret])).rejects.toMatchObject({ code: 'ENGRAM_EMBEDDER_USE_CLOSED' });
    await expect(pool.load()).rejects.toMatchObject({ code: 'ENGRAM_EMBEDDER_USE_CLOSED' });
  });
});
