/**
 * `engramMiddleware`: Engram as an AI SDK language-model middleware (`wrapLanguageModel`). Before each call it
 * puts the agent's core block and a recall block for the latest user message into the prompt, within a token
 * budget; after each call it records the exchange in the session's log: messages, and tool calls and results as
 * `tool_call` / `tool_result` events with the tool's name, keyed by the call id — a resent history or a retried
 * call is recorded once. Each entry is cut to {@link MAX_RECORDED_CHARS}, so a long message or tool output never
 * fails a call.
 *
 * Each call runs in one scope (`{ agentId, userId, sessionId }`): the middleware's `scope`, or what its scope
 * function answers for that call, evaluated once and used for both the recall before the call and the record
 * after it — so one middleware serves many end users, each seeing only the agent's memories and their own.
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
import { checkKeys, checkScope, type EngramScope, invalidInput, memoryScope } from './scope.js';

/** A scope computed for each call from the call's options (`providerOptions`, `headers`, `prompt`, …). */
export type EngramScopeFunction = (call: CallOptions) => EngramScope | PromiseLike<EngramScope>;

/** Options of {@link engramMiddleware}. */
export interface EngramMiddlewareOptions {
  /**
   * Who each call is for: a scope (`{ agentId?, userId?, sessionId? }`), or a function of the call that returns
   * one — evaluated once per call, so one middleware serves many users. Recall (`context`) and the record of the
   * exchange (`add`) of a call both run in that call's scope. Default: the memory's agent and user, session
   * `'default'`.
   */
  readonly scope?: EngramScope | EngramScopeFunction;
  /** @deprecated Use `scope: { agentId }`. The agent whose memory is used (default: the memory's). */
  readonly agentId?: string;
  /** @deprecated Use `scope: { sessionId }`. The session the exchange is recorded in (default `'default'`). */
  readonly sessionId?: string;
  /** Token budget of both memory blocks (default 2,000). */
  readonly budgetTokens?: number;
  /** Most recalled memories (default 8). */
  readonly recallLimit?: number;
  /** Record each exchange in the session's log (default true). */
  readonly record?: boolean;
}

const OPTION_KEYS: readonly (keyof EngramMiddlewareOptions)[] = [
  'scope',
  'agentId',
  'sessionId',
  'budgetTokens',
  'recallLimit',
  'record',
];
const OPTION_ALIASES: Readonly<Record<string, string>> = {
  userid: 'scope',
  user_id: 'scope',
  user: 'scope',
  session: 'scope',
  thread_id: 'scope',
};

/** What a transformed call carries to its record: the caller's prompt and the call's scope. */
interface CallState {
  readonly prompt: Prompt;
  readonly scope: EngramScope;
}

/** The scope of a call: the static one, or the scope function's answer for it, checked. */
async function scopeOf(scope: EngramScope | EngramScopeFunction, call: CallOptions): Promise<EngramScope> {
  if (typeof scope !== 'function') return scope;
  let answer: unknown;
  try {
    answer = await scope(call);
  } catch (cause) {
    throw invalidInput('engramMiddleware: the scope function threw', cause);
  }
  return checkScope(answer, 'the answer of the scope function');
}

/** Creates the middleware for `wrapLanguageModel({ model, middleware })`. */
export function engramMiddleware(
  memory: Memory,
  options: EngramMiddlewareOptions = {},
): LanguageModelMiddleware {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw invalidInput('engramMiddleware options must be an object');
  }
  checkKeys(options, 'engramMiddleware options', OPTION_KEYS, OPTION_ALIASES);
  const legacy = {
    ...(options.agentId === undefined ? {} : { agentId: options.agentId }),
    ...(options.sessionId === undefined ? {} : { sessionId: options.sessionId }),
  };
  if (options.scope !== undefined && Object.keys(legacy).length > 0) {
    throw invalidInput('engramMiddleware takes agentId and sessionId inside scope, not beside it');
  }
  const scopeOption: EngramScope | EngramScopeFunction =
    options.scope === undefined
      ? checkScope(legacy, 'engramMiddleware options')
      : typeof options.scope === 'function'
        ? options.scope
        : checkScope(options.scope, 'engramMiddleware options.scope');
  // Each transformed call's state (keyed by the transformed params the SDK hands to wrapGenerate / wrapStream):
  // the caller's prompt, to record what the user said rather than what was injected, and the call's scope.
  const calls = new WeakMap<CallOptions, CallState>();

  async function record(state: CallState | undefined, reply: readonly ChatMessage[]) {
    if (options.record === false || state === undefined) return;
    const entries = [...conversationOf(state.prompt), ...reply];
    if (entries.length === 0) return;
    await memory.add(entries, {
      ...memoryScope(state.scope),
      sessionId: state.scope.sessionId ?? 'default',
      maxContentChars: MAX_RECORDED_CHARS,
    });
  }

  return {
    specificationVersion: 'v3',
    async transformParams({ params }) {
      const scope = await scopeOf(scopeOption, params);
      const query = latestUserText(params.prompt);
      const context = await memory.context(query, {
        ...memoryScope(scope),
        sessionId: scope.sessionId ?? 'default',
        ...(options.budgetTokens === undefined ? {} : { budgetTokens: options.budgetTokens }),
        ...(options.recallLimit === undefined ? {} : { recallLimit: options.recallLimit }),
        ...(params.abortSignal === undefined ? {} : { signal: params.abortSignal }),
      });
      const transformed: CallOptions = {
        ...params,
        prompt: withMemory(params.prompt, context.core, context.recall),
      };
      calls.set(transformed, { prompt: params.prompt, scope });
      return transformed;
    },
    async wrapGenerate({ doGenerate, params }) {
      const result = await doGenerate();
      await record(calls.get(params), replyOf(result.content));
      return result;
    },
    async wrapStream({ doStream, params }) {
      const result = await doStream();
      const state = calls.get(params);
      const reply = streamedReply();
      const tee = new TransformStream<StreamPart, StreamPart>({
        transform(part, controller) {
          reply.add(part);
          controller.enqueue(part);
        },
        async flush() {
          await record(state, reply.done());
        },
      });
      return { ...result, stream: result.stream.pipeThrough(tee) };
    },
  };
}
