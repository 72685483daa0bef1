/**
 * Between the AI SDK's language-model prompt and Engram: the latest user text (the recall query), the prompt
 * with the memory blocks put in, and the exchange as entries to record (messages, tool calls, tool results).
 * Pure: no I/O.
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
type StreamResult = Awaited<ReturnType<NonNullable<LanguageModelMiddleware['wrapStream']>>>;
/** One part of a streamed answer. */
export type StreamPart = StreamResult['stream'] extends ReadableStream<infer P> ? P : never;

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
    else if (part.type === 'tool-result')
      pieces.push(`[tool result ${part.toolName}] ${outputText(part.output)}`);
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

/** Longest recorded content of one entry in UTF-16 units (the length of the memory an event becomes); more is cut. */
export const MAX_RECORDED_CHARS = 16_000;

/** Tool-call arguments as compact JSON (a string from the model is parsed first, so both spellings agree). */
function argumentsJson(input: unknown): string {
  if (typeof input !== 'string') return json(input ?? {});
  try {
    return json(JSON.parse(input));
  } catch {
    return input;
  }
}

/** A tool's output as text. */
function outputText(output: ToolOutput): string {
  switch (output.type) {
    case 'text':
    case 'error-text':
      return output.value;
    case 'json':
    case 'error-json':
      return json(output.value);
    case 'content':
      return output.value.map((part) => (part.type === 'text' ? part.text : `[${part.type}]`)).join('\n');
    case 'execution-denied':
      return output.reason === undefined ? 'execution denied' : `execution denied: ${output.reason}`;
  }
}

type ToolOutput = Extract<
  Extract<PromptMessage, { role: 'tool' }>['content'][number],
  { type: 'tool-result' }
>['output'];

/**
 * Builds the entries to record from a message's parts in order: consecutive text parts are one message (joined by
 * line breaks; a streamed text block is one part), each tool call and each tool result an entry of its own, keyed
 * by its call id.
 */
class Entries {
  readonly out: ChatMessage[] = [];
  #text: string[] = [];
  constructor(
    private readonly role: 'user' | 'assistant' | 'tool',
    private readonly id?: string,
  ) {}

  /** A text part (a new piece: pieces are joined by line breaks, as `messageText` joins them). */
  text(value: string): void {
    this.#text.push(value);
  }

  /** More text of the current piece (a streamed delta). */
  delta(value: string): void {
    if (this.#text.length === 0) this.#text.push(value);
    else this.#text[this.#text.length - 1] += value;
  }

  call(toolCallId: string, toolName: string, input: unknown): void {
    this.#flush();
    this.out.push({
      role: 'assistant',
      type: 'tool_call',
      toolName,
      id: toolCallId,
      content: argumentsJson(input),
    });
  }

  result(toolCallId: string, toolName: string, text: string): void {
    this.#flush();
    this.out.push({ role: 'tool', type: 'tool_result', toolName, id: toolCallId, content: text });
  }

  #flush(): void {
    const content = this.#text.filter((piece) => piece !== '').join('\n');
    this.#text = [];
    if (content.trim() === '') return;
    const first = this.out.every((e) => e.type !== undefined && e.type !== 'message');
    this.out.push({
      role: this.role,
      content,
      ...(this.id !== undefined && first ? { id: this.id } : {}),
    });
  }

  done(): ChatMessage[] {
    this.#flush();
    return this.out;
  }
}

/** The id a prompt message was given by the application (`providerOptions: { engram: { messageId } }`), if any. */
function messageIdOf(message: PromptMessage): string | undefined {
  const id = message.providerOptions?.engram?.messageId;
  return typeof id === 'string' && id.trim() !== '' ? id : undefined;
}

/**
 * The conversation to record: every user, assistant and tool message of the prompt (system ones are not kept),
 * text as messages, tool calls and results as entries of their own with the tool's name and the call id.
 */
export function conversationOf(prompt: Prompt): ChatMessage[] {
  const entries: ChatMessage[] = [];
  for (const message of prompt) {
    if (message.role === 'system') continue;
    const builder = new Entries(message.role, messageIdOf(message));
    for (const part of message.content) {
      if (part.type === 'text') builder.text(part.text);
      else if (part.type === 'tool-call') builder.call(part.toolCallId, part.toolName, part.input);
      else if (part.type === 'tool-result')
        builder.result(part.toolCallId, part.toolName, outputText(part.output));
    }
    entries.push(...builder.done());
  }
  return entries;
}

/** What a generate call answered, as entries to record: its text, tool calls and provider-run tool results. */
export function replyOf(content: GenerateResult['content']): ChatMessage[] {
  const builder = new Entries('assistant');
  for (const part of content) {
    if (part.type === 'text') builder.text(part.text);
    else if (part.type === 'tool-call') builder.call(part.toolCallId, part.toolName, part.input);
    else if (part.type === 'tool-result') builder.result(part.toolCallId, part.toolName, json(part.result));
  }
  return builder.done();
}

/** Collects a streamed answer's entries part by part. */
export function streamedReply(): {
  readonly add: (part: StreamPart) => void;
  readonly done: () => ChatMessage[];
} {
  const builder = new Entries('assistant');
  return {
    add(part) {
      if (part.type === 'text-start') builder.text('');
      else if (part.type === 'text-delta') builder.delta(part.delta);
      else if (part.type === 'tool-call') builder.call(part.toolCallId, part.toolName, part.input);
      else if (part.type === 'tool-result') builder.result(part.toolCallId, part.toolName, json(part.result));
    },
    done: () => builder.done(),
  };
}
