export type {
  OpenAICompatibleChatMessage,
  OpenAICompatibleChatModel,
  OpenAICompatibleChatModelConfig,
  OpenAICompatibleGenerateRequest,
  OpenAICompatibleGenerateResult,
  OpenAICompatibleJsonMode,
  OpenAICompatibleMaxTokensField,
} from './chat.js';
export { createOpenAICompatibleChatModel } from './chat.js';
export type { EnvSource, OpenAICompatibleEnvConfig } from './config.js';
export { configFromEnv, ENGRAM_OPENAI_ENV_VARS, OPENAI_DEFAULT_BASE_URL } from './config.js';
export type {
  OpenAICompatibleEmbedder,
  OpenAICompatibleEmbedderConfig,
  OpenAICompatibleEmbeddingProfile,
  OpenAICompatibleEmbedOptions,
} from './embedder.js';
export { createOpenAICompatibleEmbedder } from './embedder.js';
export type { EngramProviderErrorCode, EngramProviderErrorDetails, ProviderOperation } from './errors.js';
export { ENGRAM_PROVIDER_ERROR_CODES, EngramProviderError, isEngramProviderError } from './errors.js';
export { backoffDelayMs, retryAfterDelayMs } from './http.js';
export type {
  HttpReranker,
  HttpRerankerConfig,
  HttpRerankerFlavor,
  HttpRerankOptions,
} from './reranker.js';
export { createHttpReranker } from './reranker.js';
export type { OpenAICompatibleHttpConfig, ProviderSleep, ProviderTimers } from './transport.js';
