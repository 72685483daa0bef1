/**
 * `--embedder openai` end to end against provider-openai's loopback server (a real HTTP server on 127.0.0.1,
 * never the network), configured by the same ENGRAM_OPENAI_* variables as the engram CLI.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  EMBEDDINGS_PATH,
  type LoopbackOpenAIServer,
  startLoopbackOpenAIServer,
} from '../../provider-openai/src/test-support/openai-loopback-server.js';
import { createEvalEmbedder } from './embedders.js';
import type { RetrievalFixture } from './fixture.js';
import { VARIANTS } from './report.js';
import { runFixture } from './runner.js';
import { openVectorCache } from './vector-cache.js';

let server: LoopbackOpenAIServer;
const dir = mkdtempSync(join(tmpdir(), 'engram-eval-openai-'));
beforeAll(async () => {
  server = await startLoopbackOpenAIServer({ embeddingDimensions: 24 });
});
afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

const fixture: RetrievalFixture = {
  version: 1,
  name: 'remote',
  vectorProfile: { id: 'deterministic-lexicon-v1', dimensions: 128, normalized: true },
  subsets: ['s'],
  corpus: [
    { id: 'a1', agentId: 'a', kind: 'fact', content: 'The API gateway runs on port 8443.', importance: 0.5 },
    {
      id: 'a2',
      agentId: 'a',
      kind: 'fact',
      content: 'Backups are written to cold storage.',
      importance: 0.5,
    },
    { id: 'b1', agentId: 'b', kind: 'fact', content: 'The API gateway runs on port 8443.', importance: 0.5 },
  ],
  queries: [{ id: 'q1', agentId: 'a', text: 'gateway port', subsets: ['s'], relevantIds: ['a1'] }],
};

const env = (): Record<string, string> => ({
  ENGRAM_OPENAI_BASE_URL: server.baseUrl,
  ENGRAM_OPENAI_EMBEDDING_MODEL: 'loopback-embed',
  ENGRAM_OPENAI_EMBEDDING_DIMENSIONS: '24',
});

describe('--embedder openai', () => {
  it('embeds through the configured endpoint, names its profile, and caches so a second run sends nothing', async () => {
    server.reset();
    const named = await createEvalEmbedder('openai', { env: env() });
    expect(named.embedder.profile).toEqual({ id: 'openai-compatible:loopback-embed', dimensions: 24 });
    const cache = openVectorCache(dir, { id: named.cacheId, dimensions: 24 });
    const first = await runFixture({
      fixture,
      embedder: { name: 'openai', embedder: named.embedder },
      vectorCache: cache,
    });
    expect(first.embedder).toEqual({
      name: 'openai',
      id: 'openai-compatible:loopback-embed',
      dimensions: 24,
    });
    // Two distinct corpus texts and one query, in one batch for the corpus and one for the queries.
    expect(first.vectors).toEqual({ embedded: 3, fromCache: 0 });
    const sent = server.requests.filter((r) => r.path === EMBEDDINGS_PATH);
    expect(sent.map((r) => (r.body as { input: string[] }).input.length)).toEqual([2, 1]);
    expect(first.variants.fts.queries[0]?.ranked[0]).toBe('a1');
    for (const variant of VARIANTS) expect(first.variants[variant].queries[0]?.ranked).not.toContain('b1');

    server.reset();
    const again = await createEvalEmbedder('openai', { env: env() });
    const second = await runFixture({
      fixture,
      embedder: { name: 'openai', embedder: again.embedder },
      vectorCache: openVectorCache(dir, { id: again.cacheId, dimensions: 24 }),
    });
    expect(server.requests).toEqual([]);
    expect(second.vectors).toEqual({ embedded: 0, fromCache: 3 });
    expect(second.variants).toEqual(first.variants);
  });

  it('refuses an invalid setting by naming the variable, never its value', async () => {
    await expect(
      createEvalEmbedder('openai', { env: { ...env(), ENGRAM_OPENAI_EMBEDDING_DIMENSIONS: 'lots' } }),
    ).rejects.toMatchObject({ code: 'ENGRAM_PROVIDER_CONFIG', message: expect.not.stringContaining('lots') });
    await expect(createEvalEmbedder('openai', { env: {} })).rejects.toMatchObject({
      code: 'ENGRAM_EVAL_EMBEDDER_UNAVAILABLE',
    });
  });
});

describe('--embedder use', () => {
  it('loads @engram/embedder-use on demand and embeds with its 512-d profile', async () => {
    const named = await createEvalEmbedder('use');
    expect(named.name).toBe('use');
    expect(named.embedder.profile.dimensions).toBe(512);
    expect(named.cacheId).toBe(named.embedder.profile.id);
    const [a, b] = await named.embedder.embed(['the package manager is pnpm', 'pnpm installs dependencies']);
    expect(a).toHaveLength(512);
    expect(b).toHaveLength(512);
  });

  it('gives the same vectors on worker threads (--threads 2) as on the calling thread (--threads 0)', {
    timeout: 120_000,
  }, async () => {
    const texts = [
      'the package manager is pnpm',
      '',
      'pnpm installs dependencies',
      'a third, longer sentence about caches',
    ];
    const main = await createEvalEmbedder('use', { threads: 0 });
    const workers = await createEvalEmbedder('use', { threads: 2 });
    expect((workers.embedder as { readonly threads?: number }).threads).toBe(2);
    expect(workers.cacheId).toBe(main.cacheId);
    const [a, b] = [await main.embedder.embed(texts), await workers.embedder.embed(texts)];
    let max = 0;
    a.forEach((v, i) => {
      const w = b[i] as Float32Array;
      for (let j = 0; j < v.length; j += 1)
        max = Math.max(max, Math.abs((v[j] as number) - (w[j] as number)));
    });
    expect(max).toBeLessThan(1e-5);
    await (workers.embedder as { close?: () => Promise<void> }).close?.();
  });
});
