import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  createOpenAICompatibleChatModel,
  type EngramProviderError,
  isEngramProviderError,
  type OpenAICompatibleChatModelConfig,
  type OpenAICompatibleGenerateRequest,
} from './index.js';
import { leakedSurfaces } from './test-support/leaks.js';
import { createManualTimers } from './test-support/manual-timers.js';
import {
  CHAT_PATH,
  expectedChatContent,
  type LoopbackOpenAIServer,
  startLoopbackOpenAIServer,
} from './test-support/openai-loopback-server.js';

const API_KEY = 'sk-engram-canary-chat-8c2b47';
const CONTENT_SECRET = 'canary-prompt-e51d';
const SECRETS = [API_KEY, CONTENT_SECRET];

const DECISION_SCHEMA = {
  type: 'object',
  properties: { decision: { type: 'string', enum: ['ADD', 'NOOP'] } },
  required: ['decision'],
  additionalProperties: false,
} as const;

const REQUEST: OpenAICompatibleGenerateRequest = {
  messages: [
    { role: 'system', content: 'You decide about memories.' },
    { role: 'user', content: `Remember: ${CONTENT_SECRET}` },
  ],
  jsonSchema: { name: 'memory_decision', schema: DECISION_SCHEMA },
};

let server: LoopbackOpenAIServer;
let sleeps: number[];

beforeAll(async () => {
  server = await startLoopbackOpenAIServer({ embeddingDimensions: 4 });
});

afterEach(() => {
  server.reset();
});

afterAll(async () => {
  await server.close();
});

function model(overrides: Partial<OpenAICompatibleChatModelConfig> = {}) {
  sleeps = [];
  return createOpenAICompatibleChatModel({
    baseUrl: server.baseUrl,
    apiKey: API_KEY,
    model: 'loopback-chat',
    maxRetries: 2,
    random: () => 0.5,
    sleep: async (ms) => {
      sleeps.push(ms);
    },
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

function completion(content: string | null, extra: Record<string, unknown> = {}, finishReason = 'stop') {
  return {
    kind: 'json' as const,
    body: {
      object: 'chat.completion',
      choices: [{ index: 0, message: { role: 'assistant', content, ...extra }, finish_reason: finishReason }],
    },
  };
}

describe('createOpenAICompatibleChatModel against a loopback OpenAI-compatible server', () => {
  it('requests JSON Schema output and returns the content with its usage', async () => {
    const result = await model({ temperature: 0 }).generate({ ...REQUEST, maxOutputTokens: 256 });

    const content = expectedChatContent(2);
    const promptChars = REQUEST.messages.reduce((sum, m) => sum + m.content.length, 0);
    expect(result).toEqual({
      text: content,
      usage: { inputTokens: promptChars, outputTokens: content.length },
    });
    expect(server.requests).toHaveLength(1);
    const [request] = server.requests;
    expect(request?.path).toBe(CHAT_PATH);
    expect(request?.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(request?.body).toEqual({
      model: 'loopback-chat',
      messages: REQUEST.messages,
      response_format: {
        type: 'json_schema',
        json_schema: { name: 'memory_decision', schema: DECISION_SCHEMA, strict: true },
      },
      temperature: 0,
      max_tokens: 256,
    });
  });

  it('has a default id, sanitises the schema name and can put the limit in max_completion_tokens', async () => {
    const adapter = model({ maxTokensField: 'max_completion_tokens', strictSchema: false });
    expect(adapter.id).toBe('openai-compatible:loopback-chat');
    expect(model({ id: 'extractor' }).id).toBe('extractor');
    await adapter.generate({
      ...REQUEST,
      jsonSchema: { name: 'memory decision!', schema: DECISION_SCHEMA },
      maxOutputTokens: 64,
    });
    const body = server.requests[0]?.body as Record<string, unknown>;
    expect(body.response_format).toEqual({
      type: 'json_schema',
      json_schema: { name: 'memory_decision_', schema: DECISION_SCHEMA, strict: false },
    });
    expect(body.max_completion_tokens).toBe(64);
    expect(body).not.toHaveProperty('max_tokens');
    expect(body).not.toHaveProperty('temperature');
  });

  it('in json_object mode asks for a JSON object and puts the schema into the system prompt', async () => {
    const adapter = model({ jsonMode: 'json_object' });
    await adapter.generate(REQUEST);
    await adapter.generate({ ...REQUEST, messages: REQUEST.messages.slice(1) });

    const [merged, prepended] = server.requests.map(
      (r) => r.body as { messages: unknown[]; response_format: unknown },
    );
    expect(merged?.response_format).toEqual({ type: 'json_object' });
    expect(merged?.messages).toHaveLength(2);
    const system = merged?.messages[0] as { role: string; content: string };
    expect(system.role).toBe('system');
    expect(system.content.startsWith('You decide about memories.\n\n')).toBe(true);
    expect(system.content).toContain(JSON.stringify(DECISION_SCHEMA));
    expect(system.content).toContain('JSON');
    expect(merged?.messages[1]).toEqual(REQUEST.messages[1]);

    expect(prepended?.messages).toHaveLength(2);
    expect(prepended?.messages[0]).toMatchObject({ role: 'system' });
    expect(prepended?.messages[1]).toEqual(REQUEST.messages[1]);
  });

  it('returns no usage when the server reports none', async () => {
    server.enqueue(CHAT_PATH, completion('{"decision":"ADD"}'));
    const result = await model().generate(REQUEST);
    expect(result).toEqual({ text: '{"decision":"ADD"}' });
    expect(result).not.toHaveProperty('usage');
  });

  it('retries a 429 after Retry-After: 0 and then succeeds', async () => {
    server.enqueue(CHAT_PATH, { kind: 'json', status: 429, headers: { 'retry-after': '0' }, body: {} });
    const result = await model().generate(REQUEST);
    expect(result.text).toBe(expectedChatContent(2));
    expect(server.requests).toHaveLength(2);
    expect(sleeps).toEqual([0]);
  });

  it('gives up on a persistent 503 after the retries', async () => {
    server.enqueue(
      CHAT_PATH,
      ...Array.from({ length: 3 }, () => ({ kind: 'raw' as const, status: 503, body: `down ${API_KEY}` })),
    );
    const error = await failure(model({ retryBaseDelayMs: 10 }).generate(REQUEST));
    expect(error.code).toBe('ENGRAM_PROVIDER_UNAVAILABLE');
    expect(error.operation).toBe('chat.completions');
    expect(error.status).toBe(503);
    expect(error.attempts).toBe(3);
    expect(server.requests).toHaveLength(3);
    expect(sleeps).toEqual([8, 15]);
  });

  it('reports a 400 as ENGRAM_PROVIDER_HTTP with a hint about json_object mode', async () => {
    server.enqueue(CHAT_PATH, {
      kind: 'json',
      status: 400,
      body: { error: { message: `response_format not supported for ${CONTENT_SECRET}` } },
    });
    const error = await failure(model().generate(REQUEST));
    expect(error.code).toBe('ENGRAM_PROVIDER_HTTP');
    expect(error.status).toBe(400);
    expect(error.message).toContain('json_object');
    expect(server.requests).toHaveLength(1);
  });

  it('rejects malformed answers: not JSON, no choices, empty content, a refusal, a truncated output', async () => {
    server.enqueue(
      CHAT_PATH,
      { kind: 'raw', body: `not json ${CONTENT_SECRET}` },
      { kind: 'json', body: { choices: [] } },
      completion(null),
      completion(null, { refusal: `I will not store ${CONTENT_SECRET}` }),
      completion(`{"decision":"AD`, {}, 'length'),
    );
    const adapter = model();
    const messages: string[] = [];
    for (let i = 0; i < 5; i += 1) {
      const error = await failure(adapter.generate(REQUEST));
      expect(error.code).toBe('ENGRAM_PROVIDER_MALFORMED_RESPONSE');
      messages.push(error.message);
    }
    expect(messages[3]).toContain('refusal');
    expect(messages[4]).toContain('token limit');
    expect(server.requests).toHaveLength(5);
  });

  it('times out a held response at the deadline and tells a caller abort apart', async () => {
    server.enqueue(CHAT_PATH, { kind: 'hold' }, { kind: 'hold' });
    const timers = createManualTimers();
    const late = model({ timeoutMs: 50, timers }).generate(REQUEST);
    await server.waitForRequests(1);
    timers.fireAll();
    const timeout = await failure(late);
    expect(timeout.code).toBe('ENGRAM_PROVIDER_TIMEOUT');
    expect(timers.pending()).toBe(0);
    expect(timeout.attempts).toBe(1);

    const controller = new AbortController();
    const pending = model({ timeoutMs: 60_000 }).generate({ ...REQUEST, signal: controller.signal });
    await server.waitForRequests(2);
    controller.abort();
    const aborted = await failure(pending);
    expect(aborted.code).toBe('ENGRAM_PROVIDER_ABORTED');
    expect(aborted.name).toBe('AbortError');
    expect(server.requests).toHaveLength(2);
  });

  it('rejects invalid settings with ENGRAM_PROVIDER_CONFIG', () => {
    const cases: [Partial<OpenAICompatibleChatModelConfig>, string][] = [
      [{ model: '' }, 'model'],
      [{ temperature: 3 }, 'temperature'],
      [{ jsonMode: 'xml' as 'json_object' }, 'jsonMode'],
      [{ baseUrl: `http://127.0.0.1/v1#${API_KEY}` }, 'baseUrl'],
      [{ fetch: 'nope' as unknown as typeof fetch }, 'fetch'],
    ];
    for (const [overrides, setting] of cases) {
      let caught: unknown;
      try {
        model(overrides);
      } catch (error) {
        caught = error;
      }
      expect(isEngramProviderError(caught)).toBe(true);
      expect((caught as EngramProviderError).code).toBe('ENGRAM_PROVIDER_CONFIG');
      expect((caught as EngramProviderError).setting).toBe(setting);
      expect(leakedSurfaces(caught, SECRETS)).toEqual([]);
    }
  });
});
