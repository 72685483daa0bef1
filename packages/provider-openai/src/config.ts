import { z } from 'zod';
import type { OpenAICompatibleChatModelConfig, OpenAICompatibleJsonMode } from './chat.js';
import type { OpenAICompatibleEmbedderConfig } from './embedder.js';
import { EngramProviderError } from './errors.js';
import { parseBaseUrl } from './transport.js';

/** The base URL used when `ENGRAM_OPENAI_BASE_URL` is not set (OpenAI itself, which needs an API key). */
export const OPENAI_DEFAULT_BASE_URL: 'https://api.openai.com/v1' = 'https://api.openai.com/v1';

/** The environment variables {@link configFromEnv} reads. */
export const ENGRAM_OPENAI_ENV_VARS = [
  'ENGRAM_OPENAI_BASE_URL',
  'ENGRAM_OPENAI_API_KEY',
  'ENGRAM_OPENAI_CHAT_MODEL',
  'ENGRAM_OPENAI_EMBEDDING_MODEL',
  'ENGRAM_OPENAI_EMBEDDING_DIMENSIONS',
  'ENGRAM_OPENAI_EMBEDDING_SEND_DIMENSIONS',
  'ENGRAM_OPENAI_JSON_MODE',
  'ENGRAM_OPENAI_TIMEOUT_MS',
] as const;

/** What the environment configures: each part is `null` when its model variable is not set. */
export interface OpenAICompatibleEnvConfig {
  /** Settings for `createOpenAICompatibleEmbedder`, or `null` without `ENGRAM_OPENAI_EMBEDDING_MODEL`. */
  readonly embedder: OpenAICompatibleEmbedderConfig | null;
  /** Settings for `createOpenAICompatibleChatModel`, or `null` without `ENGRAM_OPENAI_CHAT_MODEL`. */
  readonly chat: OpenAICompatibleChatModelConfig | null;
}

/** An environment-like record (`process.env` or a plain object in tests). */
export type EnvSource = Readonly<Record<string, string | undefined>>;

function invalid(variable: string, reason: string): EngramProviderError {
  return new EngramProviderError('ENGRAM_PROVIDER_CONFIG', `${variable} ${reason}.`, {
    operation: 'config',
    setting: variable,
  });
}

const positiveIntText = z.string().regex(/^[1-9]\d{0,8}$/);
const booleanText = z.enum(['1', '0', 'true', 'false', 'yes', 'no']);
const jsonModeText = z.enum(['json_schema', 'json_object']);

function read(env: EnvSource, name: string): string | undefined {
  const value = env[name];
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  return trimmed === '' ? undefined : trimmed;
}

function positiveInt(env: EnvSource, name: string): number | undefined {
  const value = read(env, name);
  if (value === undefined) return undefined;
  if (!positiveIntText.safeParse(value).success) throw invalid(name, 'must be a positive integer');
  return Number(value);
}

/**
 * Reads the OpenAI-compatible provider settings from environment variables, validated with zod.
 *
 * `ENGRAM_OPENAI_BASE_URL` (default `https://api.openai.com/v1`), `ENGRAM_OPENAI_API_KEY`, `ENGRAM_OPENAI_CHAT_MODEL`,
 * `ENGRAM_OPENAI_EMBEDDING_MODEL` with `ENGRAM_OPENAI_EMBEDDING_DIMENSIONS`, and the optional
 * `ENGRAM_OPENAI_EMBEDDING_SEND_DIMENSIONS`, `ENGRAM_OPENAI_JSON_MODE`, `ENGRAM_OPENAI_TIMEOUT_MS`. Empty values count as
 * unset. Returns `{ embedder: null, chat: null }` when no model is configured; throws `ENGRAM_PROVIDER_CONFIG` (naming
 * the variable, never its value) when a value is invalid or a required companion is missing.
 */
export function configFromEnv(env: EnvSource): OpenAICompatibleEnvConfig {
  const chatModel = read(env, 'ENGRAM_OPENAI_CHAT_MODEL');
  const embeddingModel = read(env, 'ENGRAM_OPENAI_EMBEDDING_MODEL');
  const explicitBaseUrl = read(env, 'ENGRAM_OPENAI_BASE_URL');
  const apiKey = read(env, 'ENGRAM_OPENAI_API_KEY');
  const dimensions = positiveInt(env, 'ENGRAM_OPENAI_EMBEDDING_DIMENSIONS');
  const timeoutMs = positiveInt(env, 'ENGRAM_OPENAI_TIMEOUT_MS');

  const sendDimensionsText = read(env, 'ENGRAM_OPENAI_EMBEDDING_SEND_DIMENSIONS');
  let sendDimensions: boolean | undefined;
  if (sendDimensionsText !== undefined) {
    const parsed = booleanText.safeParse(sendDimensionsText.toLowerCase());
    if (!parsed.success) throw invalid('ENGRAM_OPENAI_EMBEDDING_SEND_DIMENSIONS', 'must be true or false');
    sendDimensions = parsed.data === '1' || parsed.data === 'true' || parsed.data === 'yes';
  }

  const jsonModeValue = read(env, 'ENGRAM_OPENAI_JSON_MODE');
  let jsonMode: OpenAICompatibleJsonMode | undefined;
  if (jsonModeValue !== undefined) {
    const parsed = jsonModeText.safeParse(jsonModeValue);
    if (!parsed.success) throw invalid('ENGRAM_OPENAI_JSON_MODE', 'must be json_schema or json_object');
    jsonMode = parsed.data;
  }

  if (explicitBaseUrl !== undefined) parseBaseUrl(explicitBaseUrl, 'ENGRAM_OPENAI_BASE_URL', 'environment');
  if (chatModel === undefined && embeddingModel === undefined) return { embedder: null, chat: null };
  if (explicitBaseUrl === undefined && apiKey === undefined) {
    throw invalid(
      'ENGRAM_OPENAI_BASE_URL',
      'is not set and neither is ENGRAM_OPENAI_API_KEY: set a base URL for a local server or an API key for OpenAI',
    );
  }
  const baseUrl = explicitBaseUrl ?? OPENAI_DEFAULT_BASE_URL;
  const common = {
    baseUrl,
    ...(apiKey === undefined ? {} : { apiKey }),
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
  };

  let embedder: OpenAICompatibleEmbedderConfig | null = null;
  if (embeddingModel !== undefined) {
    if (dimensions === undefined) {
      throw invalid(
        'ENGRAM_OPENAI_EMBEDDING_DIMENSIONS',
        'is required when ENGRAM_OPENAI_EMBEDDING_MODEL is set',
      );
    }
    embedder = {
      ...common,
      model: embeddingModel,
      dimensions,
      ...(sendDimensions === undefined ? {} : { sendDimensions }),
    };
  }
  const chat: OpenAICompatibleChatModelConfig | null =
    chatModel === undefined
      ? null
      : { ...common, model: chatModel, ...(jsonMode === undefined ? {} : { jsonMode }) };
  return { embedder, chat };
}
