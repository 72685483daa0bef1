import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  createHttpReranker,
  type EngramProviderError,
  type HttpRerankerConfig,
  isEngramProviderError,
} from './index.js';
import { leakedSurfaces } from './test-support/leaks.js';
import { createManualTimers } from './test-support/manual-timers.js';
import {
  expectedRerankScore,
  type LoopbackOpenAIServer,
  RERANK_PATH,
  startLoopbackOpenAIServer,
} from './test-support/openai-loopback-server.js';

const API_KEY = 'sk-engram-canary-key-77aa01';
const QUERY_SECRET = 'canary-query-c0ffee';
const CONTENT_SECRET = 'canary-content-beef42';
const SECRETS = [API_KEY, QUERY_SECRET, CONTENT_SECRET];

let server: LoopbackOpenAIServer;

beforeAll(async () => {
  server = await startLoopbackOpenAIServer({ embeddingDimensions: 4 });
});

afterEach(() => {
  server.reset();
});

afterAll(async () => {
  await server.close();
});

function reranker(overrides: Partial<HttpRerankerConfig> = {}) {
  return createHttpReranker({
    baseUrl: server.baseUrl,
    apiKey: API_KEY,
    model: 'loopback-rerank',
    maxRetries: 1,
    random: () => 0.5,
    sleep: async () => {},
    ...overrides,
  });
}

async function failure(promise: Promise<unknown>): Promise<EngramProviderError> {
  const error: unknown = await promise.then(
    () => new Error('expected a rejection'),
    (e: unknown) => e,
  );
  if (!isEngramProviderError(error)) throw new Error(`expected an EngramProviderError, got ${String(error)}`);
  expect(leakedSurfaces(error, SECRETS)).toEqual([]);
  return error;
}

const DOCS = ['the deploy runs on friday', 'lunch is at noon', 'friday deploy needs the canary flag'];

describe('createHttpReranker against a loopback /rerank server', () => {
  it('sends the Cohere shape with the key as a bearer token and returns scores in document order', async () => {
    const scores = await reranker().rerank('friday deploy canary', DOCS);
    // The server answers best first; the scores still follow the documents.
    expect(scores).toEqual(DOCS.map((d) => expectedRerankScore('friday deploy canary', d)));
    expect(scores[2]).toBeGreaterThan(scores[0] as number);
    expect(server.requests).toHaveLength(1);
    const [request] = server.requests;
    expect(request?.path).toBe(RERANK_PATH);
    expect(request?.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(request?.body).toEqual({
      model: 'loopback-rerank',
      query: 'friday deploy canary',
      documents: DOCS,
      top_n: 3,
    });
    expect(reranker().id).toBe('rerank:loopback-rerank');
  });

  it('speaks the TEI and Voyage request shapes and reads a bare array, `data` and `score`', async () => {
    server.enqueue(RERANK_PATH, {
      kind: 'json',
      body: [
        { index: 1, score: -2.5 },
        { index: 0, score: 4.25 },
      ],
    });
    expect(await reranker({ flavor: 'tei' }).rerank('q', ['a', 'b'])).toEqual([4.25, -2.5]);
    expect(server.requests[0]?.body).toEqual({ query: 'q', texts: ['a', 'b'] });

    server.enqueue(RERANK_PATH, {
      kind: 'json',
      body: {
        object: 'list',
        data: [
          { index: 0, relevance_score: 0.1 },
          { index: 1, relevance_score: 0.9 },
        ],
      },
    });
    expect(await reranker({ flavor: 'voyage' }).rerank('q', ['a', 'b'])).toEqual([0.1, 0.9]);
    expect(server.requests[1]?.body).toEqual({
      model: 'loopback-rerank',
      query: 'q',
      documents: ['a', 'b'],
      top_k: 2,
    });
  });

  it('splits a long list into batches and takes a custom endpoint', async () => {
    const docs = ['a x', 'b', 'c x', 'd', 'e x'];
    const scores = await reranker({ batchSize: 2 }).rerank('x', docs);
    expect(scores).toEqual([1, 0, 1, 0, 1]);
    expect(server.requests.map((r) => (r.body as { documents: string[] }).documents)).toEqual([
      ['a x', 'b'],
      ['c x', 'd'],
      ['e x'],
    ]);
    expect(await reranker({ endpoint: 'rerank' }).rerank('q', [])).toEqual([]);
    // An empty input sends nothing.
    expect(server.requests).toHaveLength(3);
  });

  it('refuses answers with missing, duplicated or non-numeric scores, naming neither query nor documents', async () => {
    const docs = [`${CONTENT_SECRET} one`, `${CONTENT_SECRET} two`];
    const bodies: unknown[] = [
      { results: [{ index: 0, relevance_score: 1 }] },
      {
        results: [
          { index: 0, relevance_score: 1 },
          { index: 0, relevance_score: 2 },
        ],
      },
      { results: [{ index: 0 }, { index: 1 }] },
      { results: [{ index: 5, relevance_score: 1 }] },
      { unexpected: QUERY_SECRET },
    ];
    for (const body of bodies) {
      server.enqueue(RERANK_PATH, { kind: 'json', body });
      const error = await failure(reranker().rerank(QUERY_SECRET, docs));
      expect(error.code).toBe('ENGRAM_PROVIDER_MALFORMED_RESPONSE');
      expect(error.operation).toBe('rerank');
    }
  });

  it('retries a 503, then fails typed on a 401 with a hint and no secret', async () => {
    server.enqueue(RERANK_PATH, { kind: 'json', status: 503, body: {} });
    expect(await reranker().rerank('deploy', ['deploy'])).toEqual([1]);
    expect(server.requests).toHaveLength(2);

    server.enqueue(RERANK_PATH, { kind: 'json', status: 401, body: { message: QUERY_SECRET } });
    const error = await failure(reranker().rerank(QUERY_SECRET, [CONTENT_SECRET]));
    expect(error.code).toBe('ENGRAM_PROVIDER_HTTP');
    expect(error.status).toBe(401);
    expect(error.message).toContain('rerank endpoint');
  });

  it('times out a held response and aborts on the caller signal as an AbortError', async () => {
    const timers = createManualTimers();
    server.enqueue(RERANK_PATH, { kind: 'hold' });
    const pending = failure(reranker({ timers, timeoutMs: 50 }).rerank(QUERY_SECRET, [CONTENT_SECRET]));
    await server.waitForRequests(1);
    timers.fireAll();
    const timeout = await pending;
    expect(timeout.code).toBe('ENGRAM_PROVIDER_TIMEOUT');
    expect(timeout.message).toContain('50 ms');

    server.enqueue(RERANK_PATH, { kind: 'hold' });
    const controller = new AbortController();
    const aborted = failure(reranker().rerank(QUERY_SECRET, [CONTENT_SECRET], { signal: controller.signal }));
    await server.waitForRequests(2);
    controller.abort();
    const error = await aborted;
    expect(error.code).toBe('ENGRAM_PROVIDER_ABORTED');
    expect(error.name).toBe('AbortError');
  });

  it('refuses invalid settings with ENGRAM_PROVIDER_CONFIG naming the setting, never the value', () => {
    const cases: [Partial<HttpRerankerConfig>, string][] = [
      [{ model: ' ' }, 'model'],
      [{ flavor: 'openai' as never }, 'flavor'],
      [{ endpoint: '../admin' }, 'endpoint'],
      [{ batchSize: 0 }, 'batchSize'],
      [{ baseUrl: `https://user:${API_KEY}@example.test/v1` }, 'baseUrl'],
    ];
    for (const [overrides, setting] of cases) {
      let thrown: unknown;
      try {
        reranker(overrides);
      } catch (error) {
        thrown = error;
      }
      expect(isEngramProviderError(thrown)).toBe(true);
      expect((thrown as EngramProviderError).code).toBe('ENGRAM_PROVIDER_CONFIG');
      expect((thrown as EngramProviderError).setting).toBe(setting);
      expect(leakedSurfaces(thrown, SECRETS)).toEqual([]);
    }
  });
});
