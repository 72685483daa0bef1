/**
 * `createMemory({ rerank })`: a cross-encoder reorders the fused head of a search; when it fails the fused
 * order stands and health counts the degradation. Its options are strict like every other option.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Reranker } from '@engram/retrieval';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemory } from './memory.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'engram-rerank-'));
}, 120_000);
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const FACTS = [
  'The deploy runs every Friday',
  'The deploy of billing needs the canary flag',
  'Deploy notes: the preferred rollback is a revert of the last release',
];

/** A real reranker of the port: "preferred" scores 2, "canary" 1; it records what it was sent. */
function keywordReranker() {
  const sent: string[][] = [];
  const model: Reranker = {
    rerank(query, documents) {
      sent.push([query, ...documents]);
      return Promise.resolve(
        documents.map((d) => (d.includes('preferred') ? 2 : 0) + (d.includes('canary') ? 1 : 0)),
      );
    },
  };
  return { model, sent };
}

async function refusal(call: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await call;
  } catch (error) {
    const e = error as { code: string; message: string };
    return { code: e.code, message: e.message };
  }
  throw new Error('the call was accepted');
}

describe('createMemory({ rerank })', () => {
  it('reorders search results by the reranker, which sees only the query and the memories’ text', async () => {
    const reranker = keywordReranker();
    const memory = await createMemory({
      path: join(dir, 'ordered.db'),
      embedder: 'deterministic',
      rerank: { model: reranker.model, candidates: 10 },
    });
    try {
      for (const fact of FACTS)
        await memory.add(fact, { metadata: { secret: 'tok-123' }, tags: ['team:ops'] });
      const results = await memory.search('deploy');
      expect(results.map((r) => r.content)).toEqual([FACTS[2], FACTS[1], FACTS[0]]);
      expect(results[0]?.explanation.rerank).toMatchObject({ score: 2, rank: 1 });
      const sent = reranker.sent.flat().join('\n');
      expect(sent).not.toContain('tok-123');
      expect(sent).not.toContain('team:ops');
      expect(reranker.sent[0]?.[0]).toBe('deploy');
    } finally {
      await memory.close();
    }
  });

  it('keeps the fused order when the reranker fails, and health counts rerankError', async () => {
    const failing: Reranker = { rerank: () => Promise.reject(new Error('provider down')) };
    const plainPath = join(dir, 'failing.db');
    const memory = await createMemory({
      path: plainPath,
      embedder: 'deterministic',
      rerank: { model: failing },
    });
    let fusedOrder: string[];
    try {
      for (const fact of FACTS) await memory.add(fact);
      const results = await memory.search('deploy');
      expect(results).toHaveLength(3);
      expect(results.every((r) => r.explanation.rerank === undefined)).toBe(true);
      fusedOrder = results.map((r) => r.content);
      const health = await memory.health({ agentId: 'default' });
      expect(health.runtime.agent.retrieval.search.degradations.rerankError).toBe(1);
    } finally {
      await memory.close();
    }
    const plain = await createMemory({ path: plainPath });
    try {
      expect((await plain.search('deploy')).map((r) => r.content)).toEqual(fusedOrder);
    } finally {
      await plain.close();
    }
  });

  it('refuses an unknown rerank option and an invalid budget with typed errors', async () => {
    const { model } = keywordReranker();
    const unknown = await refusal(
      createMemory({ path: join(dir, 'bad.db'), rerank: { model, topN: 5 } as never }),
    );
    expect(unknown.code).toBe('ENGRAM_MEMORY_INVALID_INPUT');
    expect(unknown.message).toContain('"topN"');
    const invalid = await refusal(
      createMemory({
        path: join(dir, 'bad.db'),
        embedder: 'deterministic',
        rerank: { model, candidates: 0 },
      }),
    );
    expect(invalid.code).toBe('ENGRAM_MEMORY_INVALID_CONFIG');
    expect(invalid.message).toContain('rerank.candidates');
  });
});
