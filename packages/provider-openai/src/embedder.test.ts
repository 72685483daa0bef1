import { inspect } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  createOpenAICompatibleEmbedder,
  type EngramProviderError,
  isEngramProviderError,
  type OpenAICompatibleEmbedderConfig,
} from './index.js';
import { leakedSurfaces } from './test-support/leaks.js';
import { createManualTimers } from './test-support/manual-timers.js';
import {
  EMBEDDINGS_PATH,
  expectedVector,
  type LoopbackOpenAIServer,
  startLoopbackOpenAIServer,
} from './test-support/openai-loopback-server.js';

const DIMENSIONS = 8;
const API_KEY = 'sk-engram-canary-key-5d1f0c';
const QUERY_SECRET = 'canary-query-91be';
const CONTENT_SECRET = 'canary-content-3a7e';
const SECRETS = [API_KEY, QUERY_SECRET, CONTENT_SECRET];

let server: LoopbackOpenAIServer;
let sleeps: number[];

beforeAll(async () => {
  server = await startLoopbackOpenAIServer({ embeddingDimensions: DIMENSIONS });
});

afterEach(() => {
  server.reset();
});

afterAll(async () => {
  await server.close();
});

function embedder(overrides: Partial<OpenAICompatibleEmbedderConfig> = {}) {
  sleeps = [];
  return createOpenAICompatibleEmbedder({
    baseUrl: server.baseUrl,
    apiKey: API_KEY,
    model: 'loopback-embed',
    dimensions: DIMENSIONS,
    maxRetries: 2,
    random: () => 0.5,
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    ...overrides,
  });
}

/** Awaits a rejection and returns the provider error, failing the test on a resolution or a foreign error. */
async function failure(promise: Promise<unknown>): Promise<EngramProviderError> {
  const error: unknown = await promise.then(
    () => new Error('expected a rejection'),
    (e: unknown) => e,
  );
  if (!isEngramProviderError(error)) throw new Error(`expected an EngramProviderError, got ${String(error)}`);
  expect(leakedSurfaces(error, SECRETS)).toEqual([]);
  return error;
}

function vectorOf(text: string, dimensions = DIMENSIONS): Float32Array {
  return Float32Array.from(expectedVector(text, dimensions));
}

describe('createOpenAICompatibleEmbedder against a loopback OpenAI-compatible server', () => {
  it('embeds texts in input order, sorting by index, and sends the key as a bearer token', async () => {
    const timers = createManualTimers();
    const vectors = await embedder({ timers }).embed(['alpha', 'beta', 'gamma']);
    // One deadline per attempt (the default 30 s), cleared once the answer is in.
    expect(timers.armed).toEqual([30_000]);
    expect(timers.pending()).toBe(0);

    expect(vectors).toHaveLength(3);
    expect(vectors.every((v) => v instanceof Float32Array && v.length === DIMENSIONS)).toBe(true);
    // The server answers in reverse order; the vectors still follow the input.
    expect(vectors).toEqual([vectorOf('alpha'), vectorOf('beta'), vectorOf('gamma')]);
    expect(server.requests).toHaveLength(1);
    const [request] = server.requests;
    expect(request?.method).toBe('POST');
    expect(request?.path).toBe(EMBEDDINGS_PATH);
    expect(request?.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(request?.headers['content-type']).toBe('application/json');
    // `dimensions` is only sent when configured to.
    expect(request?.body).toEqual({ model: 'loopback-embed', input: ['alpha', 'beta', 'gamma'] });
  });

  it('exposes a profile with the default id and never exposes the API key on the adapter', () => {
    const adapter = embedder();
    expect(adapter.profile).toEqual({ id: 'openai-compatible:loopback-embed', dimensions: DIMENSIONS });
    expect(embedder({ profileId: 'custom-v2' }).profile.id).toBe('custom-v2');
    expect(JSON.stringify(adapter)).not.toContain(API_KEY);
    expect(inspect(adapter, { showHidden: true, depth: 8 })).not.toContain(API_KEY);
  });

  it('sends no Authorization header without a key (local servers)', async () => {
    await createOpenAICompatibleEmbedder({
      baseUrl: server.baseUrl,
      model: 'm',
      dimensions: DIMENSIONS,
    }).embed(['x']);
    expect(server.requests[0]?.headers.authorization).toBeUndefined();
  });

  it('sends dimensions when configured to and the server shortens the vectors', async () => {
    const vectors = await embedder({ dimensions: 4, sendDimensions: true }).embed(['alpha']);
    expect(server.requests[0]?.body).toEqual({ model: 'loopback-embed', input: ['alpha'], dimensions: 4 });
    expect(vectors).toEqual([vectorOf('alpha', 4)]);
  });

  it('splits large inputs into sequential batches and keeps the order across them', async () => {
    const texts = ['a1', 'a2', 'a3', 'a4', 'a5'];
    const vectors = await embedder({ batchSize: 2 }).embed(texts);

    expect(server.requests.map((r) => (r.body as { input: string[] }).input)).toEqual([
      ['a1', 'a2'],
      ['a3', 'a4'],
      ['a5'],
    ]);
    expect(vectors).toEqual(texts.map((t) => vectorOf(t)));
  });

  it('answers an empty input without a request', async () => {
    expect(await embedder().embed([])).toEqual([]);
    expect(server.requests).toHaveLength(0);
  });

  it('keeps a query of the base URL (e.g. api-version) on the request but out of errors', async () => {
    const adapter = embedder({ baseUrl: `${server.baseUrl}/?api-version=${QUERY_SECRET}`, maxRetries: 0 });
    await adapter.embed(['alpha']);
    expect(server.requests[0]?.path).toBe(EMBEDDINGS_PATH);
    expect(server.requests[0]?.query).toBe(`?api-version=${QUERY_SECRET}`);

    server.enqueue(EMBEDDINGS_PATH, {
      kind: 'json',
      status: 404,
      body: { error: { message: QUERY_SECRET } },
    });
    const error = await failure(adapter.embed(['alpha']));
    expect(error.code).toBe('ENGRAM_PROVIDER_HTTP');
  });

  it('retries a 429 after the Retry-After delay and then succeeds', async () => {
    server.enqueue(EMBEDDINGS_PATH, {
      kind: 'json',
      status: 429,
      headers: { 'retry-after': '0' },
      body: { error: { message: 'slow down', type: 'rate_limit_exceeded' } },
    });
    const vectors = await embedder().embed(['alpha']);

    expect(vectors).toEqual([vectorOf('alpha')]);
    expect(server.requests).toHaveLength(2);
    expect(server.requests.every((r) => r.headers.authorization === `Bearer ${API_KEY}`)).toBe(true);
    expect(sleeps).toEqual([0]);
  });

  it('honours Retry-After in seconds, capped by retryAfterCapMs', async () => {
    server.enqueue(
      EMBEDDINGS_PATH,
      { kind: 'json', status: 429, headers: { 'retry-after': '3' }, body: {} },
      { kind: 'json', status: 503, headers: { 'retry-after': '3600' }, body: {} },
    );
    await embedder({ retryAfterCapMs: 10_000 }).embed(['alpha']);
    expect(sleeps).toEqual([3_000, 10_000]);
    expect(server.requests).toHaveLength(3);
  });

  it('gives up on a persistent 500 after maxRetries with exponential, jittered backoff', async () => {
    server.enqueue(
      EMBEDDINGS_PATH,
      ...Array.from({ length: 5 }, () => ({
        kind: 'raw' as const,
        status: 500,
        body: `boom ${CONTENT_SECRET}`,
      })),
    );
    const error = await failure(
      embedder({ maxRetries: 3, retryBaseDelayMs: 100, retryMaxDelayMs: 300 }).embed([CONTENT_SECRET]),
    );

    expect(error.code).toBe('ENGRAM_PROVIDER_UNAVAILABLE');
    expect(error.status).toBe(500);
    expect(error.attempts).toBe(4);
    expect(error.retryable).toBe(true);
    expect(error.name).toBe('EngramProviderError');
    expect(server.requests).toHaveLength(4);
    // min(300, 100 · 2^(n-1)) · (0.5 + 0.5 · 0.5)
    expect(sleeps).toEqual([75, 150, 225]);
  });

  it('reports ENGRAM_PROVIDER_RATE_LIMITED when 429 outlasts the retries', async () => {
    server.enqueue(
      EMBEDDINGS_PATH,
      ...Array.from({ length: 3 }, () => ({ kind: 'json' as const, status: 429, body: {} })),
    );
    const error = await failure(embedder().embed(['alpha']));
    expect(error.code).toBe('ENGRAM_PROVIDER_RATE_LIMITED');
    expect(error.status).toBe(429);
    expect(error.attempts).toBe(3);
    expect(server.requests).toHaveLength(3);
  });

  it('does not retry other client errors and keeps the status as a number', async () => {
    server.enqueue(EMBEDDINGS_PATH, {
      kind: 'json',
      status: 401,
      body: { error: { message: `Incorrect API key provided: ${API_KEY}`, code: 'invalid_api_key' } },
    });
    const error = await failure(embedder().embed([CONTENT_SECRET]));
    expect(error.code).toBe('ENGRAM_PROVIDER_HTTP');
    expect(error.status).toBe(401);
    expect(error.retryable).toBe(false);
    expect(error.message).toContain('API key');
    expect(server.requests).toHaveLength(1);
  });

  it('rejects a body that is not JSON without retrying or quoting it', async () => {
    server.enqueue(EMBEDDINGS_PATH, { kind: 'raw', body: `{"data": [ ${CONTENT_SECRET} ${API_KEY}` });
    const error = await failure(embedder().embed(['alpha']));
    expect(error.code).toBe('ENGRAM_PROVIDER_MALFORMED_RESPONSE');
    expect(server.requests).toHaveLength(1);
  });

  it('rejects JSON of the wrong shape, a wrong count and duplicated indexes', async () => {
    server.enqueue(
      EMBEDDINGS_PATH,
      { kind: 'json', body: { data: [{ index: 0, embedding: CONTENT_SECRET }] } },
      { kind: 'json', body: { data: [{ index: 0, embedding: Array(DIMENSIONS).fill(0.1) }] } },
      {
        kind: 'json',
        body: {
          data: [
            { index: 0, embedding: Array(DIMENSIONS).fill(0.1) },
            { index: 0, embedding: Array(DIMENSIONS).fill(0.2) },
          ],
        },
      },
      {
        kind: 'json',
        body: { data: [{ index: 0, embedding: [...Array(DIMENSIONS - 1).fill(0.1), 1e300] }] },
      },
    );
    const adapter = embedder();
    const shape = await failure(adapter.embed(['alpha']));
    const count = await failure(adapter.embed(['alpha', 'beta']));
    const duplicate = await failure(adapter.embed(['alpha', 'beta']));
    const overflow = await failure(adapter.embed(['alpha']));
    for (const error of [shape, count, duplicate, overflow]) {
      expect(error.code).toBe('ENGRAM_PROVIDER_MALFORMED_RESPONSE');
      expect(error.attempts).toBe(1);
    }
    expect(server.requests).toHaveLength(4);
  });

  it('rejects vectors of the wrong dimensions with ENGRAM_PROVIDER_DIMENSIONS', async () => {
    server.enqueue(EMBEDDINGS_PATH, {
      kind: 'json',
      body: { data: [{ index: 0, embedding: Array(DIMENSIONS + 4).fill(0.1) }] },
    });
    const error = await failure(embedder().embed(['alpha']));
    expect(error.code).toBe('ENGRAM_PROVIDER_DIMENSIONS');
    expect(error.expectedDimensions).toBe(DIMENSIONS);
    expect(error.receivedDimensions).toBe(DIMENSIONS + 4);
    expect(error.retryable).toBe(false);
  });

  it('rejects a response body over maxResponseBytes', async () => {
    const error = await failure(embedder({ maxResponseBytes: 64 }).embed(['alpha']));
    expect(error.code).toBe('ENGRAM_PROVIDER_MALFORMED_RESPONSE');
    expect(error.message).toContain('larger than 64 bytes');
  });

  it('times out a response the server holds past the deadline, without retrying it', async () => {
    server.enqueue(EMBEDDINGS_PATH, { kind: 'hold' });
    const timers = createManualTimers();
    const pending = embedder({ timeoutMs: 50, timers }).embed(['alpha']);
    await server.waitForRequests(1);
    // The server holds the response; the attempt's deadline (50 ms on the injected timers) fires now.
    expect(timers.armed).toEqual([50]);
    timers.fireAll();
    const error = await failure(pending);

    expect(error.code).toBe('ENGRAM_PROVIDER_TIMEOUT');
    expect(error.message).toContain('50 ms');
    expect(error.name).toBe('EngramProviderError');
    expect(error.retryable).toBe(true);
    expect(error.attempts).toBe(1);
    expect(server.requests).toHaveLength(1);
    expect(sleeps).toEqual([]);
  });

  it('distinguishes a caller abort during the request from a provider failure', async () => {
    server.enqueue(EMBEDDINGS_PATH, { kind: 'hold' });
    const controller = new AbortController();
    const pending = embedder({ timeoutMs: 60_000 }).embed(['alpha'], { signal: controller.signal });
    await server.waitForRequests(1);
    const reason = new Error('user cancelled');
    controller.abort(reason);
    const error = await failure(pending);

    expect(error.code).toBe('ENGRAM_PROVIDER_ABORTED');
    expect(error.name).toBe('AbortError');
    expect(error.retryable).toBe(false);
    expect(error.cause).toBe(reason);
    expect(server.requests).toHaveLength(1);
  });

  it('sends nothing for an already aborted signal and stops retrying when aborted during backoff', async () => {
    const aborted = new AbortController();
    aborted.abort();
    const before = await failure(embedder().embed(['alpha'], { signal: aborted.signal }));
    expect(before.code).toBe('ENGRAM_PROVIDER_ABORTED');
    expect(before.attempts).toBe(0);
    expect(server.requests).toHaveLength(0);

    server.enqueue(EMBEDDINGS_PATH, { kind: 'json', status: 500, body: {} });
    const controller = new AbortController();
    const adapter = embedder({
      sleep: async (ms) => {
        sleeps.push(ms);
        controller.abort();
      },
    });
    const during = await failure(adapter.embed(['alpha'], { signal: controller.signal }));
    expect(during.code).toBe('ENGRAM_PROVIDER_ABORTED');
    expect(during.attempts).toBe(1);
    expect(server.requests).toHaveLength(1);
  });

  it('retries a dropped connection and reports a content-free network error when it persists', async () => {
    server.enqueue(EMBEDDINGS_PATH, { kind: 'destroy' });
    expect(await embedder().embed(['alpha'])).toEqual([vectorOf('alpha')]);
    expect(server.requests).toHaveLength(2);

    server.reset();
    server.enqueue(EMBEDDINGS_PATH, { kind: 'destroy' }, { kind: 'destroy' });
    const error = await failure(embedder({ maxRetries: 1 }).embed([CONTENT_SECRET]));
    expect(error.code).toBe('ENGRAM_PROVIDER_UNAVAILABLE');
    expect(error.status).toBeUndefined();
    expect(error.attempts).toBe(2);
    expect(String(error.cause)).toMatch(/^Error: Network error/);
    expect(server.requests).toHaveLength(2);
  });
});

describe('embedder configuration', () => {
  it('rejects invalid settings with ENGRAM_PROVIDER_CONFIG naming the setting, never the value', () => {
    const cases: [Partial<OpenAICompatibleEmbedderConfig>, string][] = [
      [{ dimensions: 0 }, 'dimensions'],
      [{ dimensions: 1.5 }, 'dimensions'],
      [{ model: ' ' }, 'model'],
      [{ batchSize: 0 }, 'batchSize'],
      [{ timeoutMs: -1 }, 'timeoutMs'],
      [{ maxRetries: 11 }, 'maxRetries'],
      [{ baseUrl: `ftp://127.0.0.1/${QUERY_SECRET}` }, 'baseUrl'],
      [{ baseUrl: `not a url ${API_KEY}` }, 'baseUrl'],
      [{ baseUrl: `http://user:${API_KEY}@127.0.0.1/v1` }, 'baseUrl'],
      [{ apiKey: '' }, 'apiKey'],
      [{ timers: { setTimeout: () => 0 } as never }, 'timers'],
    ];
    for (const [overrides, setting] of cases) {
      let caught: unknown;
      try {
        embedder(overrides);
      } catch (error) {
        caught = error;
      }
      expect(isEngramProviderError(caught)).toBe(true);
      const error = caught as EngramProviderError;
      expect(error.code).toBe('ENGRAM_PROVIDER_CONFIG');
      expect(error.setting).toBe(setting);
      expect(error.message).toContain(setting);
      expect(leakedSurfaces(error, SECRETS)).toEqual([]);
    }
  });
});
