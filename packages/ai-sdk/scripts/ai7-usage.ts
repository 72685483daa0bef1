/**
 * What a user of AI SDK 7 writes with this adapter, type-checked by `pnpm check:ai7` against the published `ai`
 * 7.x declarations (never run: AI SDK 7 needs Node 22). Each line must compile with 7's own types.
 */
import type { Memory } from '@engram/memory';
import {
  generateText,
  type LanguageModel,
  type LanguageModelMiddleware,
  streamText,
  type ToolSet,
  wrapLanguageModel,
} from 'ai';
import { engramMiddleware, engramTools } from '../src/index.js';

declare const memory: Memory;
declare const model: Exclude<LanguageModel, string>;

const middleware: LanguageModelMiddleware = engramMiddleware(memory, { sessionId: 'chat' });
const wrapped = wrapLanguageModel({ model, middleware });
const tools: ToolSet = engramTools(memory);
export const generated: Promise<{ readonly text: string }> = generateText({
  model: wrapped,
  tools,
  prompt: 'Where do I live?',
});
export const streamed: { readonly text: PromiseLike<string> } = streamText({
  model: wrapped,
  tools,
  prompt: 'Hi',
});
// The middleware's hooks are the ones AI SDK 7 calls.
export const hooks: readonly unknown[] = [
  middleware.transformParams,
  middleware.wrapGenerate,
  middleware.wrapStream,
];
