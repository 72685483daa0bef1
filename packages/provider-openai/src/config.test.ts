import { describe, expect, it } from 'vitest';
import {
  backoffDelayMs,
  configFromEnv,
  ENGRAM_PROVIDER_ERROR_CODES,
  EngramProviderError,
  isEngramProviderError,
  OPENAI_DEFAULT_BASE_URL,
  retryAfterDelayMs,
} from './index.js';

const KEY = 'sk-env-canary-0b9d';

function configError(env: Record<string, string>): EngramProviderError {
  try {
    configFromEnv(env);
  } catch (error) {
    if (isEngramProviderError(error)) return error;
    throw error;
  }
  throw new Error('expected configFromEnv to throw');
}

describe('configFromEnv', () => {
  it('returns null parts when nothing is configured (empty values count as unset)', () => {
    expect(configFromEnv({})).toEqual({ embedder: null, chat: null });
    expect(configFromEnv({ ENGRAM_OPENAI_CHAT_MODEL: '  ', ENGRAM_OPENAI_API_KEY: KEY })).toEqual({
      embedder: null,
      chat: null,
    });
  });

  it('configures a local Ollama server without a key', () => {
    const config = configFromEnv({
      ENGRAM_OPENAI_BASE_URL: 'http://127.0.0.1:11434/v1',
      ENGRAM_OPENAI_CHAT_MODEL: 'qwen2.5:7b-instruct',
      ENGRAM_OPENAI_EMBEDDING_MODEL: 'nomic-embed-text',
      ENGRAM_OPENAI_EMBEDDING_DIMENSIONS: '768',
      ENGRAM_OPENAI_JSON_MODE: 'json_object',
    });
    expect(config).toEqual({
      embedder: { baseUrl: 'http://127.0.0.1:11434/v1', model: 'nomic-embed-text', dimensions: 768 },
      chat: { baseUrl: 'http://127.0.0.1:11434/v1', model: 'qwen2.5:7b-instruct', jsonMode: 'json_object' },
    });
  });

  it('defaults to OpenAI when only a key is given, and reads the optional settings', () => {
    const config = configFromEnv({
      ENGRAM_OPENAI_API_KEY: KEY,
      ENGRAM_OPENAI_EMBEDDING_MODEL: 'text-embedding-3-small',
      ENGRAM_OPENAI_EMBEDDING_DIMENSIONS: '512',
      ENGRAM_OPENAI_EMBEDDING_SEND_DIMENSIONS: 'TRUE',
      ENGRAM_OPENAI_TIMEOUT_MS: '15000',
    });
    expect(config.chat).toBeNull();
    expect(config.embedder).toEqual({
      baseUrl: OPENAI_DEFAULT_BASE_URL,
      apiKey: KEY,
      timeoutMs: 15_000,
      model: 'text-embedding-3-small',
      dimensions: 512,
      sendDimensions: true,
    });
  });

  it('throws a typed error naming the variable, never the value', () => {
    const cases: [Record<string, string>, string][] = [
      [
        { ENGRAM_OPENAI_BASE_URL: 'http://127.0.0.1:1/v1', ENGRAM_OPENAI_EMBEDDING_MODEL: 'm' },
        'ENGRAM_OPENAI_EMBEDDING_DIMENSIONS',
      ],
      [{ ENGRAM_OPENAI_EMBEDDING_DIMENSIONS: `0${KEY}` }, 'ENGRAM_OPENAI_EMBEDDING_DIMENSIONS'],
      [{ ENGRAM_OPENAI_EMBEDDING_DIMENSIONS: '-3' }, 'ENGRAM_OPENAI_EMBEDDING_DIMENSIONS'],
      [{ ENGRAM_OPENAI_BASE_URL: KEY }, 'ENGRAM_OPENAI_BASE_URL'],
      [{ ENGRAM_OPENAI_BASE_URL: `http://${KEY}@127.0.0.1/v1` }, 'ENGRAM_OPENAI_BASE_URL'],
      [{ ENGRAM_OPENAI_CHAT_MODEL: 'gpt-4o-mini' }, 'ENGRAM_OPENAI_BASE_URL'],
      [{ ENGRAM_OPENAI_JSON_MODE: KEY }, 'ENGRAM_OPENAI_JSON_MODE'],
      [{ ENGRAM_OPENAI_EMBEDDING_SEND_DIMENSIONS: 'maybe' }, 'ENGRAM_OPENAI_EMBEDDING_SEND_DIMENSIONS'],
      [{ ENGRAM_OPENAI_TIMEOUT_MS: '1.5' }, 'ENGRAM_OPENAI_TIMEOUT_MS'],
    ];
    for (const [env, variable] of cases) {
      const error = configError(env);
      expect(error.code).toBe('ENGRAM_PROVIDER_CONFIG');
      expect(error.setting).toBe(variable);
      expect(error.message).toContain(variable);
      expect(`${String(error)} ${JSON.stringify(error)}`).not.toContain(KEY);
    }
  });
});

describe('retry policy helpers', () => {
  it('reads retry-after-ms, Retry-After seconds and HTTP dates, capped', () => {
    const now = Date.parse('2025-01-01T00:00:00Z');
    const at = (init: Record<string, string>) => retryAfterDelayMs(new Headers(init), now, 30_000);
    expect(at({})).toBeUndefined();
    expect(at({ 'retry-after': '0' })).toBe(0);
    expect(at({ 'retry-after': '2.5' })).toBe(2_500);
    expect(at({ 'retry-after': '120' })).toBe(30_000);
    expect(at({ 'retry-after-ms': '40', 'retry-after': '9' })).toBe(40);
    expect(at({ 'retry-after': 'Wed, 01 Jan 2025 00:00:07 GMT' })).toBe(7_000);
    expect(at({ 'retry-after': 'Tue, 31 Dec 2024 23:59:00 GMT' })).toBe(0);
    expect(at({ 'retry-after': 'soon' })).toBeUndefined();
  });

  it('backs off exponentially up to the maximum, with jitter between half and the full delay', () => {
    expect([1, 2, 3, 4, 5].map((n) => backoffDelayMs(n, 500, 4_000, 1))).toEqual([
      500, 1_000, 2_000, 4_000, 4_000,
    ]);
    expect([1, 2, 3].map((n) => backoffDelayMs(n, 500, 4_000, 0))).toEqual([250, 500, 1_000]);
  });
});

describe('EngramProviderError', () => {
  it('has stable codes, a guard on code and name, and an AbortError name only for caller aborts', () => {
    const http = new EngramProviderError('ENGRAM_PROVIDER_HTTP', 'HTTP 418.', {
      operation: 'embeddings',
      status: 418,
    });
    const aborted = new EngramProviderError('ENGRAM_PROVIDER_ABORTED', 'aborted', {
      operation: 'chat.completions',
    });
    expect(ENGRAM_PROVIDER_ERROR_CODES).toHaveLength(8);
    expect(http.name).toBe('EngramProviderError');
    expect(http.status).toBe(418);
    expect(aborted.name).toBe('AbortError');
    expect(isEngramProviderError(http)).toBe(true);
    expect(isEngramProviderError(aborted)).toBe(true);
    expect(isEngramProviderError({ code: 'ENGRAM_PROVIDER_HTTP', name: 'EngramProviderError' })).toBe(true);
    expect(isEngramProviderError({ code: 'ENGRAM_STORE_BUSY', name: 'EngramProviderError' })).toBe(false);
    expect(isEngramProviderError(new Error('x'))).toBe(false);
    expect(isEngramProviderError(null)).toBe(false);
  });
});
