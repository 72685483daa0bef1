/**
 * The vector cache under a real run: the production store and retriever, the real deterministic embedder
 * behind a wrapper that counts the texts it is asked to embed.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createEvalEmbedder, type EvalEmbedder } from './embedders.js';
import type { RetrievalFixture } from './fixture.js';
import { runFixture } from './runner.js';
import { openVectorCache } from './vector-cache.js';

const dir = mkdtempSync(join(tmpdir(), 'engram-eval-vcache-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const fixture: RetrievalFixture = {
  version: 1,
  name: 'cache',
  vectorProfile: { id: 'deterministic-lexicon-v1', dimensions: 128, normalized: true },
  subsets: ['s'],
  corpus: Array.from({ length: 40 }, (_, i) => ({
    id: `m${i}`,
    agentId: i % 2 === 0 ? 'a' : 'b',
    kind: 'fact' as const,
    content: `release ${i} shipped the ${i % 3 === 0 ? 'login' : 'billing'} fix for service ${i}`,
    importance: 0.5,
  })),
  queries: [
    { id: 'q1', agentId: 'a', text: 'service 12 login fix', subsets: ['s'], relevantIds: ['m12'] },
    { id: 'q2', agentId: 'b', text: 'billing fix of service 7', subsets: ['s'], relevantIds: ['m7'] },
  ],
};

async function counting(
  conceptFeatures = true,
): Promise<{ embedder: EvalEmbedder; calls: string[][]; cacheId: string }> {
  const { embedder: inner, cacheId } = await createEvalEmbedder('deterministic', { conceptFeatures });
  const calls: string[][] = [];
  return {
    calls,
    cacheId,
    embedder: {
      profile: inner.profile,
      embed: (texts, options) => {
        calls.push([...texts]);
        return inner.embed(texts, options);
      },
    },
  };
}

describe('runFixture with a vector cache', () => {
  it('embeds every distinct text once, and a second run embeds zero texts with identical figures', async () => {
    const first = await counting();
    const cache = openVectorCache(dir, { id: first.cacheId, dimensions: 128 });
    const a = await runFixture({
      fixture,
      embedder: { name: 'deterministic', embedder: first.embedder },
      vectorCache: cache,
    });
    const embeddedTexts = first.calls.flat();
    expect(embeddedTexts).toHaveLength(42);
    expect(new Set(embeddedTexts).size).toBe(42);
    expect(a.vectors).toEqual({ embedded: 42, fromCache: 0 });
    expect(a.variants.hybrid.queries[0]?.ranked[0]).toBe('m12');

    const second = await counting();
    const reopened = openVectorCache(dir, { id: second.cacheId, dimensions: 128 });
    expect(reopened.loaded).toBe(42);
    const b = await runFixture({
      fixture,
      embedder: { name: 'deterministic', embedder: second.embedder },
      vectorCache: reopened,
    });
    expect(second.calls).toEqual([]);
    expect(b.vectors).toEqual({ embedded: 0, fromCache: 42 });
    expect(b.variants).toEqual(a.variants);
  });

  it('files the ablation (concepts off: same profile id, other vectors) apart from the concept-on vectors', async () => {
    const ablation = await counting(false);
    expect(ablation.cacheId).toBe('deterministic-lexicon-v1+no-concepts');
    const cache = openVectorCache(dir, { id: ablation.cacheId, dimensions: 128 });
    expect(cache.loaded).toBe(0);
    const report = await runFixture({
      fixture,
      embedder: { name: 'deterministic', embedder: ablation.embedder },
      vectorCache: cache,
    });
    expect(ablation.calls.flat()).toHaveLength(42);
    expect(report.vectors).toEqual({ embedded: 42, fromCache: 0 });
  });
});
