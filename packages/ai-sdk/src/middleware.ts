/**
 * `engramMiddleware`: Engram as an AI SDK language-model middleware (`wrapLanguageModel`). Before each call it
 * puts the agent's core block and a recall block for the latest user message into the prompt, within a token
 * budget; after each call it records the exchange in the session's log — a resent history is recorded once.
 */
import type { Memory } from '@engram/memory';
import type { LanguageModelMiddleware } from 'ai';
import {
  type CallOptions,
  conversationOf,
  latestUserText,
  type Prompt,
  replyOf,
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

type StreamResult = Awaited<ReturnType<NonNullable<LanguageModelMiddleware['wrapStream']>>>;
type StreamPart = StreamResult['stream'] extends ReadableStream<infer P> ? P : never;

/** Creates the middleware for `wrapLanguageModel({ model, middleware })`. */
export function engramMiddleware(
  memory: Memory,
  options: EngramMiddlewareOptions = {},
): LanguageModelMiddleware {
  const scope = options.agentId === undefined ? {} : { agentId: options.agentId };
  const session = { ...scope, sessionId: options.sessionId ?? 'default' };
  // The caller's prompt of each transformed call, to record what the user said rather than what was injected.
  const originals = new WeakMap<CallOptions, Prompt>();

  async function record(prompt: Prompt | undefined, reply: { role: 'assistant'; content: string } | null) {
    if (options.record === false || prompt === undefined) return;
    const messages = conversationOf(prompt);
    if (reply !== null) messages.push(reply);
    if (messages.length > 0) await memory.add(messages, session);
  }

  return {
    specificationVersion: 'v3',
    async transformParams({ params }) {
      const query = latestUserText(params.prompt);
      const context = await memory.context(query, {
        ...scope,
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
      const reply = replyOf(result.content);
      await record(
        originals.get(params),
        reply === null ? null : { role: 'assistant', content: reply.content },
      );
      return result;
    },
    async wrapStream({ doStream, params }) {
      const result = await doStream();
      const prompt = originals.get(params);
      const text: string[] = [];
      const tee = new TransformStream<StreamPart, StreamPart>({
        transform(part, controller) {
          if (part.type === 'text-delta') text.push(part.delta);
          else if (part.type === 'tool-call') text.push(`\n[tool call ${part.toolName}] ${part.input}`);
          controller.enqueue(part);
        },
        async flush() {
          const content = text.join('').trim();
          await record(prompt, content === '' ? null : { role: 'assistant', content });
        },
      });
      return { ...result, stream: result.stream.pipeThrough(tee) };
    },
  };
}
