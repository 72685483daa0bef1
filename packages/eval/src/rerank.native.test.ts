/**
 * `--rerank`: the runner reranks every retriever variant through the HTTP reranker (here against the loopback
 * server with a deterministic scorer, not a model), names it in the report, and refuses figures a failed rerank
 * would have made.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHttpReranker } from '@engram/provider-openai';
import type { Reranker } from '@engram/retrieval';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeTinyCrossEncoder } from '../../local-onnx/src/test-support/tiny-model.js';
import { type DeterministicRerankServer, startDeterministicRerankServer } from './bench/rerank-server.js';
import { rerankFromFlags } from './cli/common.js';
import { isEngramEvalError } from './errors.js';
import type { RetrievalFixture } from './fixture.js';
import { runFixture } from './runner.js';

const fixture: RetrievalFixture = {
  version: 3,
  name: 'tiny-rerank',
  vectorProfile: { id: 'deterministic-lexicon-v1', dimensions: 128, normalized: true },
  corpus: [
    { id: 'a1', agentId: 'a', kind: 'fact', content: 'pnpm pnpm pnpm', importance: 0.5 },
    {
      id: 'a2',
      agentId: 'a',
      kind: 'fact',
      content: 'The release uses pnpm workspaces for the monorepo.',
      importance: 0.5,
    },
    { id: 'a3', agentId: 'a', kind: 'event', content: 'Deploys run from the main branch.', importance: 0.5 },
  ],
  queries: [
    { id: 'q1', agentId: 'a', text: 'pnpm workspaces monorepo', subsets: ['exact'], relevantIds: ['a2'] },
  ],
};

let server: DeterministicRerankServer;
beforeAll(async () => {
  server = await startDeterministicRerankServer();
});
afterAll(async () => {
  await server.close();
});

describe('runFixture with a rerank stage', () => {
  it('reranks the retriever variants by the deterministic scorer and names the reranker in the report', async () => {
    const model = createHttpReranker({ baseUrl: server.baseUrl, model: 'loopback-deterministic' });
    const report = await runFixture({ fixture, rerank: { name: 'http', model, candidates: 10 } });
    expect(report.rerank).toEqual({ name: 'http', id: 'rerank:loopback-deterministic' });
    // The memory with every query word is first in every reranked variant; BM25 is the plain reference.
    for (const variant of ['fts', 'hybrid'] as const) {
      expect(report.variants[variant].queries[0]?.ranked[0], variant).toBe('a2');
    }
    expect(server.requests()).toBeGreaterThanOrEqual(2);
  }, 60_000);

  it('fails the run when a rerank fails: its figures would measure the fused order', async () => {
    const failing: Reranker = { rerank: () => Promise.reject(new Error('down')) };
    const error = await runFixture({ fixture, rerank: { name: 'http', model: failing } }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(isEngramEvalError(error)).toBe(true);
    expect((error as { code: string }).code).toBe('ENGRAM_EVAL_RETRIEVAL_FAILED');
    expect((error as Error).message).toContain('rerankError');
  }, 60_000);
});

describe('--rerank flags', () => {
  const flags = (entries: [string, string][]) => new Map<string, string | true>(entries);
  it('reads the endpoint from ENGRAM_RERANK_* and the budget from the flags', async () => {
    const env = {
      ENGRAM_RERANK_BASE_URL: server.baseUrl,
      ENGRAM_RERANK_MODEL: 'm',
      ENGRAM_RERANK_FLAVOR: 'tei',
    };
    const rerank = await rerankFromFlags(
      flags([
        ['rerank', 'http'],
        ['rerank-candidates', '30'],
        ['rerank-timeout', '500'],
      ]),
      env,
    );
    expect(rerank).toMatchObject({ name: 'http', candidates: 30, timeoutMs: 500 });
    expect(await rerankFromFlags(flags([]), env)).toBeUndefined();
  });

  it('refuses wrong values with a message, and a missing endpoint with a typed error naming the variables', async () => {
    expect(await rerankFromFlags(flags([['rerank', 'cohere']]), {})).toEqual({
      message: 'unknown reranker; expected one of http, local',
    });
    expect(await rerankFromFlags(flags([['rerank-candidates', '5']]), {})).toHaveProperty('message');
    expect(
      await rerankFromFlags(
        flags([
          ['rerank', 'http'],
          ['rerank-candidates', '0'],
        ]),
        {},
      ),
    ).toHaveProperty('message');
    let thrown: unknown;
    try {
      await rerankFromFlags(flags([['rerank', 'http']]), { ENGRAM_RERANK_API_KEY: 'sk-canary-1' });
    } catch (error) {
      thrown = error;
    }
    expect((thrown as { code: string }).code).toBe('ENGRAM_EVAL_RERANKER_UNAVAILABLE');
    expect((thrown as Error).message).toContain('ENGRAM_RERANK_BASE_URL');
    expect((thrown as Error).message).not.toContain('sk-canary-1');
  });

  it('--rerank local loads the model at once and refuses one found nowhere, naming it and the option', async () => {
    const error = await rerankFromFlags(flags([['rerank', 'local']]), {
      ENGRAM_RERANK_MODEL: 'engram-test/not-downloaded',
    }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(isEngramEvalError(error)).toBe(true);
    expect((error as { code: string }).code).toBe('ENGRAM_EVAL_RERANKER_UNAVAILABLE');
    expect((error as Error).message).toContain('engram-test/not-downloaded');
    expect((error as Error).message).toContain('allowDownload');
  }, 60_000);

  it('--rerank local reads a relative model directory from where the user ran pnpm (INIT_CWD)', async () => {
    const user = mkdtempSync(join(tmpdir(), 'engram-eval-rerank-'));
    try {
      writeTinyCrossEncoder(join(user, 'tiny-reranker'));
      const got = await rerankFromFlags(flags([['rerank', 'local']]), {
        ENGRAM_RERANK_MODEL: './tiny-reranker',
        INIT_CWD: user,
      });
      expect(got !== undefined && 'model' in got && got.name).toBe('local');
    } finally {
      rmSync(user, { recursive: true, force: true });
    }
  }, 60_000);
});
