/**
 * Between the AI SDK's language-model prompt and Engram: the latest user text (the recall query), the prompt
 * with the memory blocks put in, and the exchange as chat messages to record. Pure: no I/O.
 */
import type { ChatMessage } from '@engram/memory';
import type { LanguageModelMiddleware } from 'ai';

/** The call options a middleware sees (the AI SDK's language-model call options). */
export type CallOptions = Parameters<NonNullable<LanguageModelMiddleware['transformParams']>>[0]['params'];
/** The prompt of a call: system, user, assistant and tool messages. */
export type Prompt = CallOptions['prompt'];
/** One prompt message. */
export type PromptMessage = Prompt[number];
/** What a generate call answered. */
export type GenerateResult = Awaited<ReturnType<NonNullable<LanguageModelMiddleware['wrapGenerate']>>>;

function json(value: unknown): string {
  try {
    return JSON.stringify(value) ?? '';
  } catch {
    return '';
  }
}

/** The text of a message: system content, or its text parts joined, tool calls and results rendered in brackets. */
export function messageText(message: PromptMessage): string {
  if (message.role === 'system') return message.content;
  const pieces: string[] = [];
  for (const part of message.content) {
    if (part.type === 'text') pieces.push(part.text);
    else if (part.type === 'tool-call') pieces.push(`[tool call ${part.toolName}] ${json(part.input)}`);
    else if (part.type === 'tool-result') {
      const output = part.output;
      const value =
        output.type === 'text' ? output.value : output.type === 'json' ? json(output.value) : output.type;
      pieces.push(`[tool result ${part.toolName}] ${value}`);
    }
  }
  return pieces.join('\n');
}

/** The text of the latest user message, or null when there is none (or it has no text). */
export function latestUserText(prompt: Prompt): string | null {
  for (let i = prompt.length - 1; i >= 0; i -= 1) {
    const message = prompt[i];
    if (message?.role !== 'user') continue;
    const text = messageText(message).trim();
    return text === '' ? null : text;
  }
  return null;
}

/**
 * The prompt with the memory put in: the core block as the first system message (its bytes change only when the
 * facts do, so a provider's prompt cache keeps hitting), and the recall block as a text part in front of the
 * latest user message (it changes every turn, so it goes last; every provider accepts it there).
 */
export function withMemory(prompt: Prompt, core: string, recall: string): Prompt {
  const out: PromptMessage[] = core === '' ? [] : [{ role: 'system', content: core }];
  let lastUser = -1;
  for (let i = prompt.length - 1; i >= 0 && lastUser < 0; i -= 1)
    if (prompt[i]?.role === 'user') lastUser = i;
  prompt.forEach((message, i) => {
    if (i === lastUser && recall !== '' && message.role === 'user') {
      out.push({ ...message, content: [{ type: 'text', text: recall }, ...message.content] });
    } else out.push(message);
  });
  return out;
}

/** The conversation to record: every user, assistant and tool message of the prompt (system ones are not kept). */
export function conversationOf(prompt: Prompt): ChatMessage[] {
  const messages: ChatMessage[] = [];
  for (const message of prompt) {
    if (message.role === 'system') continue;
    const content = messageText(message);
    if (content.trim() !== '') messages.push({ role: message.role, content });
  }
  return messages;
}

/** The assistant's answer of a generate call as a chat message (text and tool calls), or null when empty. */
export function replyOf(content: GenerateResult['content']): ChatMessage | null {
  const pieces: string[] = [];
  for (const part of content) {
    if (part.type === 'text') pieces.push(part.text);
    else if (part.type === 'tool-call') pieces.push(`[tool call ${part.toolName}] ${part.input}`);
  }
  const text = pieces.join('\n');
  return text.trim() === '' ? null : { role: 'assistant', content: text };
}
