/**
 * `engramMiddleware`: Engram as an AI SDK language-model middleware (`wrapLanguageModel`). Before each call it
 * puts the agent's core block and a recall block for the latest user message into the prompt, within a token
 * budget; after each call it records the exchange in the session's log: messages, and tool calls and results as
 * `tool_call` / `tool_result` events with the tool's name, keyed by the call id — a resent history or a retried
 * call is recorded once. Each entry is cut to {@link MAX_RECORDED_CHARS}, so a long message or tool output never
 * fails a call.
 */
import type { ChatMessage, Memory } from '@engram/memory';
import type { LanguageModelMiddleware } from 'ai';
import {
  type CallOptions,
  conversationOf,
  latestUserText,
  MAX_RECORDED_CHARS,
  type Prompt,
  replyOf,
  type StreamPart,
  streamedReply,
  withMemory,
} from './prompt.js';

/** Options of {@link engramMiddleware}. */
export interface EngramMiddlewareOptions {
  /** The agent whose memory is used (default: the memory's). */
  readonly agentId?: string;
  /** The session the exchange is recorded in (default `'default'`). */
  readonly sessionId?: string;
  /** Token budget of both memory blocks (default 2,000). */
  readonly budgetTokens?: number;
  /** Most recalled memories (default 8). */
  readonly recallLimit?: number;
  /** Record each exchange in the session's log (default true). */
  readonly record?: boolean;
}

/** Creates the middleware for `wrapLanguageModel({ model, middleware })`. */
export function engramMiddleware(
  memory: Memory,
  options: EngramMiddlewareOptions = {},
): LanguageModelMiddleware {
  const scope = options.agentId === undefined ? {} : { agentId: options.agentId };
  const session = {
    ...scope,
    sessionId: options.sessionId ?? 'default',
    maxContentChars: MAX_RECORDED_CHARS,
  };
  // The caller's prompt of each transformed call, to record what the user said rather than what was injected.
  const originals = new WeakMap<CallOptions, Prompt>();

  async function record(prompt: Prompt | undefined, reply: readonly ChatMessage[]) {
    if (options.record === false || prompt === undefined) return;
    const entries = [...conversationOf(prompt), ...reply];
    if (entries.length > 0) await memory.add(entries, session);
  }

  return {
    specificationVersion: 'v3',
    async transformParams({ params }) {
      const query = latestUserText(params.prompt);
      const context = await memory.context(query, {
        ...scope,
        sessionId: session.sessionId,
        ...(options.budgetTokens === undefined ? {} : { budgetTokens: options.budgetTokens }),
        ...(options.recallLimit === undefined ? {} : { recallLimit: options.recallLimit }),
        ...(params.abortSignal === undefined ? {} : { signal: params.abortSignal }),
      });
      const transformed: CallOptions = {
        ...params,
        prompt: withMemory(params.prompt, context.core, context.recall),
      };
      originals.set(transformed, params.prompt);
      return transformed;
    },
    async wrapGenerate({ doGenerate, params }) {
      const result = await doGenerate();
      await record(originals.get(params), replyOf(result.content));
      return result;
    },
    async wrapStream({ doStream, params }) {
      const result = await doStream();
      const prompt = originals.get(params);
      const reply = streamedReply();
      const tee = new TransformStream<StreamPart, StreamPart>({
        transform(part, controller) {
          reply.add(part);
          controller.enqueue(part);
        },
        async flush() {
          await record(prompt, reply.done());
        },
      });
      return { ...result, stream: result.stream.pipeThrough(tee) };
    },
  };
}
