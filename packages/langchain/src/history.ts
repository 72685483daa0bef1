/**
 * `EngramChatMessageHistory`: a LangChain chat message history kept in Engram's event log — one session per
 * history. The messages are searchable memories too (by words at once, by meaning once embedded).
 */
import type { ChatMessage, Memory } from '@engram/memory';
import { BaseListChatMessageHistory } from '@langchain/core/chat_history';
import {
  AIMessage,
  type BaseMessage,
  HumanMessage,
  SystemMessage,
  ToolMessage,
} from '@langchain/core/messages';

/** Options of {@link EngramChatMessageHistory}. */
export interface EngramChatMessageHistoryInput {
  readonly memory: Memory;
  /** The session this history is (its event log). */
  readonly sessionId: string;
  /** The agent it belongs to (default: the memory's). */
  readonly agentId?: string;
  /** Messages read back at most (the last ones; default 1,000). */
  readonly limit?: number;
}

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

/** A history for `RunnableWithMessageHistory`: `getMessageHistory: (id) => new EngramChatMessageHistory(...)`. */
export class EngramChatMessageHistory extends BaseListChatMessageHistory {
  lc_namespace: string[] = ['engram', 'chat_history'];
  readonly #input: EngramChatMessageHistoryInput;

  constructor(input: EngramChatMessageHistoryInput) {
    super();
    this.#input = input;
  }

  #scope(): { readonly agentId?: string; readonly sessionId: string } {
    const { agentId, sessionId } = this.#input;
    return agentId === undefined ? { sessionId } : { agentId, sessionId };
  }

  async getMessages(): Promise<BaseMessage[]> {
    const logged = await this.#input.memory.messages({ ...this.#scope(), limit: this.#input.limit ?? 1000 });
    return logged.map((m) => {
      if (m.role === 'user') return new HumanMessage(m.content);
      if (m.role === 'assistant') return new AIMessage(m.content);
      if (m.role === 'system') return new SystemMessage(m.content);
      return new ToolMessage({ content: m.content, tool_call_id: `seq-${m.seq}` });
    });
  }

  async addMessage(message: BaseMessage): Promise<void> {
    await this.addMessages([message]);
  }

  override async addMessages(messages: BaseMessage[]): Promise<void> {
    const chat = messages.map((m) => ({ role: roleOf(m), content: textOf(m) }));
    // Appended as given: a history adds each message once, and the same words twice are two messages.
    if (chat.length > 0) await this.#input.memory.add(chat, { ...this.#scope(), skipLogged: false });
  }

  /** The event log is append-only: a history is not cleared; start a new `sessionId` instead. */
  override async clear(): Promise<void> {
    throw new Error(
      'EngramChatMessageHistory cannot be cleared: the event log is append-only; use a new sessionId',
    );
  }
}
