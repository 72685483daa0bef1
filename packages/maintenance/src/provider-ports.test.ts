/**
 * The OpenAI-compatible adapters satisfy maintenance's embedder and model ports. The test lives with the
 * ports (the consumer owns them): a drift in either package fails the typecheck here.
 */
import {
  configFromEnv,
  createOpenAICompatibleChatModel,
  createOpenAICompatibleEmbedder,
} from '@engram/provider-openai';
import { describe, expect, it } from 'vitest';
import type { EmbedderPort, ModelPort } from './ports.js';

describe('ports', () => {
  it('the adapters built from configFromEnv satisfy the embedder and model ports', () => {
    const { embedder, chat } = configFromEnv({
      ENGRAM_OPENAI_BASE_URL: 'http://127.0.0.1:1234/v1',
      ENGRAM_OPENAI_CHAT_MODEL: 'local-chat',
      ENGRAM_OPENAI_EMBEDDING_MODEL: 'local-embed',
      ENGRAM_OPENAI_EMBEDDING_DIMENSIONS: '384',
    });
    if (embedder === null || chat === null) throw new Error('expected both parts');
    const embedderPort: EmbedderPort = createOpenAICompatibleEmbedder(embedder);
    const modelPort: ModelPort = createOpenAICompatibleChatModel(chat);
    expect(embedderPort.profile).toEqual({ id: 'openai-compatible:local-embed', dimensions: 384 });
    expect(modelPort.id).toBe('openai-compatible:local-chat');
  });
});
