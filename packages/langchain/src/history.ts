/**
 * `EngramChatMessageHistory`: a LangChain chat message history kept in Engram's event log — one session per
 * history, for one end user when `userId` is given. Messages are `message` events; an `AIMessage`'s tool calls
 * are `tool_call` events and a `ToolMessage` a `tool_result` event, with the tool's name and the call id, and
 * they are read back as such. The messages are searchable memories too (by words at once, by meaning once
 * embedded).
 */
import type { ChatMessage, LoggedMessage, Memory } from '@engram/memory';
import { BaseListChatMessageHistory } from '@langchain/core/chat_history';
import {
  AIMessage,
  type BaseMessage,
  HumanMessage,
  SystemMessage,
  ToolMessage,
} from '@langchain/core/messages';
import { checkOptions, checkScope, invalidInput, memoryScope } from './scope.js';

/** Longest recorded content of one entry in UTF-16 units (the length of the memory an event becomes); more is cut. */
const MAX_RECORDED_CHARS = 16_000;

/** Options of {@link EngramChatMessageHistory}. */
export interface EngramChatMessageHistoryInput {
  readonly memory: Memory;
  /** The session this history is (its event log). */
  readonly sessionId: string;
  /** The agent it belongs to (default: the memory's). */
  readonly agentId?: string;
  /**
   * The end user whose conversation this is (default: the memory's): messages are logged for that user, and
   * `getMessages()` reads that user's view of the session (the agent's own entries and that user's).
   */
  readonly userId?: string;
  /** Log entries read back at most (the last ones; default 1,000). */
  readonly limit?: number;
}

const HISTORY_KEYS: readonly (keyof EngramChatMessageHistoryInput)[] = [
  'memory',
  'sessionId',
  'agentId',
  'userId',
  'limit',
];

type ToolCall = NonNullable<AIMessage['tool_calls']>[number];

function roleOf(message: BaseMessage): ChatMessage['role'] {
  const type = message.getType();
  if (type === 'human') return 'user';
  if (type === 'ai') return 'assistant';
  if (type === 'system') return 'system';
  return 'tool';
}

function textOf(message: BaseMessage): string {
  if (typeof message.content === 'string') return message.content;
  return message.content
    .map((part) => (typeof part === 'object' && part !== null && 'text' in part ? String(part.text) : ''))
    .join('');
}

function argsOf(content: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(content);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}

const withId = (id: string | null | undefined) => (typeof id === 'string' && id !== '' ? { id } : {});

/** A LangChain message as log entries: its text, then (for an `AIMessage`) one entry per tool call. */
function entriesOf(message: BaseMessage, toolNames: Map<string, string>): ChatMessage[] {
  const content = textOf(message);
  if (message instanceof ToolMessage) {
    const toolName = message.name ?? toolNames.get(message.tool_call_id);
    return [
      {
        role: 'tool',
        type: 'tool_result',
        content,
        ...withId(message.tool_call_id),
        ...(toolName === undefined ? {} : { toolName }),
      },
    ];
  }
  const calls = message instanceof AIMessage ? (message.tool_calls ?? []) : [];
  const entries: ChatMessage[] = [];
  // A message that only carries tool calls keeps its id in an empty message entry.
  if (calls.length === 0 || content !== '' || message.id !== undefined) {
    entries.push({ role: roleOf(message), content, ...withId(message.id) });
  }
  for (const call of calls) {
    if (call.id !== undefined) toolNames.set(call.id, call.name);
    entries.push({
      role: 'assistant',
      type: 'tool_call',
      toolName: call.name,
      content: JSON.stringify(call.args ?? {}),
      ...withId(call.id),
    });
  }
  return entries;
}

/** Log entries as LangChain messages: tool calls join the assistant message they follow. */
function messagesOf(logged: readonly LoggedMessage[]): BaseMessage[] {
  const out: BaseMessage[] = [];
  // The assistant message being built: its text, id and tool calls, until another entry ends it.
  let pending: { content: string; id: string | null; calls: ToolCall[] } | null = null;
  const flush = () => {
    if (pending === null) return;
    out.push(
      new AIMessage({
        content: pending.content,
        ...withId(pending.id),
        ...(pending.calls.length === 0 ? {} : { tool_calls: pending.calls }),
      }),
    );
    pending = null;
  };
  for (const m of logged) {
    if (m.type === 'tool_call') {
      pending ??= { content: '', id: null, calls: [] };
      pending.calls.push({
        type: 'tool_call',
        id: m.id ?? `seq-${m.seq}`,
        name: m.toolName ?? 'unknown',
        args: argsOf(m.content),
      });
      continue;
    }
    flush();
    if (m.role === 'assistant') pending = { content: m.content, id: m.id, calls: [] };
    else if (m.role === 'user') out.push(new HumanMessage({ content: m.content, ...withId(m.id) }));
    else if (m.role === 'system') out.push(new SystemMessage({ content: m.content, ...withId(m.id) }));
    else {
      out.push(
        new ToolMessage({
          content: m.content,
          tool_call_id: m.id ?? `seq-${m.seq}`,
          ...(m.toolName === null ? {} : { name: m.toolName }),
        }),
      );
    }
  }
  flush();
  return out;
}

/** A history for `RunnableWithMessageHistory`: `getMessageHistory: (id) => new EngramChatMessageHistory(...)`. */
export class EngramChatMessageHistory extends BaseListChatMessageHistory {
  lc_namespace: string[] = ['engram', 'chat_history'];
  readonly #input: EngramChatMessageHistoryInput;
  readonly #session: { readonly agentId?: string; readonly userId?: string; readonly sessionId: string };

  constructor(input: EngramChatMessageHistoryInput) {
    super();
    checkOptions(input, 'EngramChatMessageHistory input', HISTORY_KEYS);
    const scope = checkScope(input, 'EngramChatMessageHistory input');
    if (scope.sessionId === undefined) {
      throw invalidInput('EngramChatMessageHistory input.sessionId must be a string');
    }
    this.#input = input;
    this.#session = { ...memoryScope(scope), sessionId: scope.sessionId };
  }

  /** The scope of every call: the agent, the user and the session. */
  #scope(): { readonly agentId?: string; readonly userId?: string; readonly sessionId: string } {
    return this.#session;
  }

  /** The messages since the history was last cleared, tool calls and results included. */
  async getMessages(): Promise<BaseMessage[]> {
    const logged = await this.#input.memory.messages({ ...this.#scope(), limit: this.#input.limit ?? 1000 });
    return messagesOf(logged);
  }

  async addMessage(message: BaseMessage): Promise<void> {
    await this.addMessages([message]);
  }

  /**
   * Appends the messages as given (the same words twice are two messages), except those whose id — a message's
   * `id`, a tool call's id — the history logged already: a retried add records nothing twice.
   */
  override async addMessages(messages: BaseMessage[]): Promise<void> {
    const toolNames = new Map<string, string>();
    // A ToolMessage without a name takes its tool's name from the call it answers, logged earlier.
    const unnamed = messages.some((m) => m instanceof ToolMessage && m.name === undefined);
    if (unnamed) {
      const logged = await this.#input.memory.messages({
        ...this.#scope(),
        limit: this.#input.limit ?? 1000,
      });
      for (const m of logged)
        if (m.type === 'tool_call' && m.id !== null && m.toolName !== null) toolNames.set(m.id, m.toolName);
    }
    const entries = messages.flatMap((m) => entriesOf(m, toolNames));
    if (entries.length > 0) {
      await this.#input.memory.add(entries, {
        ...this.#scope(),
        skipLogged: false,
        maxContentChars: MAX_RECORDED_CHARS,
      });
    }
  }

  /**
   * Empties the history: `getMessages` reads only what is added afterwards. Nothing is deleted — the event log
   * keeps every message, still searchable as memories and exported — a marker ends the history instead.
   */
  override async clear(): Promise<void> {
    await this.#input.memory.clearMessages(this.#scope());
  }
}
