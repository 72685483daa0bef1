import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createUseEmbedder, isEngramEmbedderUseError } from './index.js';

// Behavior tier: nothing here loads the model or TensorFlow.js.

function tensorflowLoaded(): boolean {
  const cache = createRequire(import.meta.url).cache;
  return Object.keys(cache).some((file) => file.includes(`${path.sep}@tensorflow${path.sep}`));
}

describe('createUseEmbedder without the model', () => {
  it('creates an embedder that loads nothing until used', () => {
    const embedder = createUseEmbedder();
    expect(embedder.profile).toEqual({ id: 'use-lite-512-v1', dimensions: 512 });
    expect(embedder.backend).toBe('wasm');
    expect(embedder.maxBatchSize).toBe(32);
    expect(embedder.loaded).toBe(false);
    expect(tensorflowLoaded()).toBe(false);
  });

  it('rejects bad options with ENGRAM_EMBEDDER_USE_INVALID_CONFIG', () => {
    for (const config of [
      { maxBatchSize: 0 },
      { maxBatchSize: 129 },
      { maxBatchSize: 2.5 },
      { backend: 'gpu' as 'cpu' },
      { modelDirectory: '' },
    ]) {
      expect(() => createUseEmbedder(config)).toThrow(
        expect.objectContaining({
          code: 'ENGRAM_EMBEDDER_USE_INVALID_CONFIG',
          name: 'EngramEmbedderUseError',
        }),
      );
    }
  });

  it('rejects bad input and an aborted signal before loading anything, with no content in the message', async () => {
    const embedder = createUseEmbedder();
    const secret = 'my secret memory text';
    const notStrings = [secret, 42] as unknown as string[];
    await expect(embedder.embed(notStrings)).rejects.toMatchObject({
      code: 'ENGRAM_EMBEDDER_USE_INVALID_INPUT',
    });
    await expect(embedder.embed(secret as unknown as string[])).rejects.toMatchObject({
      code: 'ENGRAM_EMBEDDER_USE_INVALID_INPUT',
    });
    const reason = new Error('deadline');
    const error: unknown = await embedder
      .embed([secret], { signal: AbortSignal.abort(reason) })
      .catch((e) => e);
    expect(error).toMatchObject({ name: 'AbortError', code: 'ENGRAM_EMBEDDER_USE_ABORTED', cause: reason });
    expect(isEngramEmbedderUseError(error)).toBe(true);
    expect(String((error as Error).message)).not.toContain('secret');
    expect(await embedder.embed([])).toEqual([]);
    expect(embedder.loaded).toBe(false);
    expect(tensorflowLoaded()).toBe(false);
  });

  it('fails with ENGRAM_EMBEDDER_USE_MODEL_LOAD_FAILED on a missing or broken model folder, then retries', async () => {
    const directory = await mkdtemp(path.join(tmpdir(), 'engram-use-'));
    try {
      const embedder = createUseEmbedder({ modelDirectory: directory });
      const missing: unknown = await embedder.embed(['some private text']).catch((e) => e);
      expect(missing).toMatchObject({ code: 'ENGRAM_EMBEDDER_USE_MODEL_LOAD_FAILED' });
      expect(String((missing as Error).message)).not.toContain('private');
      await writeFile(
        path.join(directory, 'model.json'),
        JSON.stringify({ modelTopology: {}, weightsManifest: [] }),
      );
      await writeFile(path.join(directory, 'vocab.json'), JSON.stringify([['a', 1]]));
      await expect(embedder.load()).rejects.toMatchObject({ code: 'ENGRAM_EMBEDDER_USE_MODEL_LOAD_FAILED' });
      await writeFile(
        path.join(directory, 'model.json'),
        JSON.stringify({ modelTopology: {}, weightsManifest: [{ paths: ['../outside'], weights: [] }] }),
      );
      await expect(embedder.load()).rejects.toMatchObject({ code: 'ENGRAM_EMBEDDER_USE_MODEL_LOAD_FAILED' });
      expect(embedder.loaded).toBe(false);
      // The files are checked before TensorFlow.js is imported.
      expect(tensorflowLoaded()).toBe(false);
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });
});
