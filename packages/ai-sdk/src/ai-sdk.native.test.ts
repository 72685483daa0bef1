/**
 * The adapter through the AI SDK itself: `generateText` with a model wrapped by `engramMiddleware`, driven by the
 * SDK's own mock language model (`ai/test`). The assertions are on what the model received.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMemory, type Memory } from '@engram/memory';
import {
  generateText,
  InvalidToolInputError,
  jsonSchema,
  type ModelMessage,
  stepCountIs,
  streamText,
  tool,
  wrapLanguageModel,
} from 'ai';
import { convertArrayToReadableStream, MockLanguageModelV3 } from 'ai/test';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { engramMiddleware } from './middleware.js';
import { MAX_RECORDED_CHARS, messageText, type Prompt } from './prompt.js';
import { engramTools } from './tools.js';

let dir: string;
let memory: Memory;
let n = 0;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'engram-ai-sdk-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});
beforeEach(async () => {
  n += 1;
  memory = await createMemory({
    path: join(dir, `m${n}.db`),
    embedder: 'deterministic',
    agentId: 'assistant',
  });
});
afterEach(async () => {
  await memory.close();
});

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 5, text: 5, reasoning: 0 },
};
const stop = { unified: 'stop', raw: 'stop' } as const;
const text = (value: string) => ({
  content: [{ type: 'text' as const, text: value }],
  finishReason: stop,
  usage,
  warnings: [],
});
const promptText = (prompt: Prompt): string => prompt.map(messageText).join('\n');
const calls = (...list: [id: string, name: string, input: unknown][]) => ({
  content: list.map(([toolCallId, toolName, input]) => ({
    type: 'tool-call' as const,
    toolCallId,
    toolName,
    input: JSON.stringify(input),
  })),
  finishReason: { unified: 'tool-calls', raw: 'tool_calls' } as const,
  usage,
  warnings: [],
});
const weather = tool({
  description: 'The weather in a city',
  inputSchema: jsonSchema<{ city: string }>({
    type: 'object',
    properties: { city: { type: 'string' } },
    required: ['city'],
  }),
  execute: async ({ city }) => `Sunny in ${city}, 18 °C`,
});
const entries = async (sessionId: string) =>
  (await memory.messages({ sessionId })).map((m) => [m.type, m.role, m.toolName, m.id, m.content]);

describe('engramMiddleware and engramTools with generateText', () => {
  it('the model remembers through memory_remember, then a later turn answers from what the middleware injected', async () => {
    const model = new MockLanguageModelV3({
      doGenerate: async ({ prompt }) => {
        const seen = promptText(prompt);
        // What the user typed is the last part of the last message (the recall block is put in front of it).
        const last = prompt.at(-1);
        const typed = last?.role === 'user' ? last.content.at(-1) : undefined;
        if (typed?.type === 'text' && typed.text === 'My dog is called Biscuit.') {
          return {
            content: [
              {
                type: 'tool-call' as const,
                toolCallId: 'call-1',
                toolName: 'memory_remember',
                input: JSON.stringify({ content: "The user's dog is named Biscuit" }),
              },
            ],
            finishReason: { unified: 'tool-calls', raw: 'tool_calls' } as const,
            usage,
            warnings: [],
          };
        }
        const fact = /The user's dog is named (\w+)/.exec(seen)?.[1];
        return text(fact === undefined ? 'I do not know.' : `Your dog is ${fact}.`);
      },
    });
    const wrapped = wrapLanguageModel({ model, middleware: engramMiddleware(memory, { sessionId: 'chat' }) });
    const tools = engramTools(memory);

    const first = await generateText({
      model: wrapped,
      tools,
      stopWhen: stepCountIs(3),
      messages: [{ role: 'user', content: 'My dog is called Biscuit.' }],
    });
    expect(first.steps[0]?.toolResults[0]?.output).toMatch(/^Remembered as fact /);

    const second = await generateText({
      model: wrapped,
      messages: [{ role: 'user', content: "What is my dog's name?" }],
    });
    expect(second.text).toBe('Your dog is Biscuit.');
    const received = model.doGenerateCalls.at(-1)?.prompt ?? [];
    expect(received[0]).toEqual({
      role: 'system',
      content: expect.stringContaining("The user's dog is named Biscuit"),
    });
    expect(received.at(-1)?.role).toBe('user');
    expect(messageText(received.at(-1) as Prompt[number])).toContain("What is my dog's name?");
  });

  it('each tool has a zod input schema from the one definition; a malformed call is refused by the SDK, not run', async () => {
    const tools = engramTools(memory);
    expect(Object.keys(tools)).toEqual(memory.toolDefinitions.map((d) => d.name));
    for (const t of Object.values(tools)) expect(t.inputSchema).toBeInstanceOf(z.ZodType);
    const search = tools.memory_search?.inputSchema as z.ZodType;
    expect(search.safeParse({ query: 'editor' })).toEqual({
      success: true,
      data: { query: 'editor', limit: 5, maxChars: 4000 },
    });
    expect(search.safeParse({ limit: 3 }).success).toBe(false);
    expect(search.safeParse({ query: 'editor', unknown: 1 }).success).toBe(false);

    const model = new MockLanguageModelV3({
      doGenerate: async ({ prompt }) =>
        prompt.at(-1)?.role === 'tool' ? text('done') : calls(['c1', 'memory_search', { limit: 3 }]),
    });
    const result = await generateText({ model, tools, stopWhen: stepCountIs(2), prompt: 'Find it' });
    const [failed] = result.steps[0]?.content.filter((part) => part.type === 'tool-error') ?? [];
    expect(failed?.toolName).toBe('memory_search');
    const call = result.steps[0]?.toolCalls[0];
    expect(call?.invalid).toBe(true);
    expect(InvalidToolInputError.isInstance(call?.error)).toBe(true);
    expect(String(failed?.error)).toMatch(/^Invalid input for tool memory_search: Type validation failed/);
    expect(result.steps[0]?.toolResults).toEqual([]);
    expect(result.text).toBe('done');
  });

  it('two consecutive calls send a byte-identical system prefix while the facts are unchanged', async () => {
    await memory.add('The user prefers metric units');
    await memory.add('The user lives in Oslo');
    const model = new MockLanguageModelV3({ doGenerate: async () => text('ok') });
    const wrapped = wrapLanguageModel({ model, middleware: engramMiddleware(memory) });
    await generateText({ model: wrapped, messages: [{ role: 'user', content: 'How warm is it in Oslo?' }] });
    await generateText({ model: wrapped, messages: [{ role: 'user', content: 'Convert 5 miles for me' }] });
    const [a, b] = model.doGenerateCalls.map((call) => call.prompt[0]);
    expect(a?.role).toBe('system');
    expect(JSON.stringify(b)).toBe(JSON.stringify(a));
    expect(messageText(a as Prompt[number])).toContain('The user prefers metric units');
  });

  it('records each exchange once, however often the chat resends its history', async () => {
    const model = new MockLanguageModelV3({
      doGenerate: [text('Hello! How can I help?'), text('Sure, Tuesday at 10.')],
    });
    const wrapped = wrapLanguageModel({ model, middleware: engramMiddleware(memory, { sessionId: 's-1' }) });
    const history: { role: 'user' | 'assistant'; content: string }[] = [
      { role: 'user', content: 'Hi there' },
    ];
    const first = await generateText({ model: wrapped, messages: history });
    history.push({ role: 'assistant', content: first.text }, { role: 'user', content: 'Book the dentist' });
    await generateText({ model: wrapped, messages: history });
    const logged = await memory.messages({ sessionId: 's-1' });
    expect(logged.map((m) => [m.role, m.content])).toEqual([
      ['user', 'Hi there'],
      ['assistant', 'Hello! How can I help?'],
      ['user', 'Book the dentist'],
      ['assistant', 'Sure, Tuesday at 10.'],
    ]);
  });

  it('streams pass through unchanged and are recorded when they finish', async () => {
    const model = new MockLanguageModelV3({
      doStream: async () => ({
        stream: convertArrayToReadableStream([
          { type: 'text-start' as const, id: 't' },
          { type: 'text-delta' as const, id: 't', delta: 'Deploys ' },
          { type: 'text-delta' as const, id: 't', delta: 'run at noon.' },
          { type: 'text-end' as const, id: 't' },
          { type: 'finish' as const, finishReason: stop, usage },
        ]),
      }),
    });
    const wrapped = wrapLanguageModel({
      model,
      middleware: engramMiddleware(memory, { sessionId: 'stream' }),
    });
    const result = streamText({
      model: wrapped,
      messages: [{ role: 'user', content: 'When do deploys run?' }],
    });
    expect(await result.text).toBe('Deploys run at noon.');
    await expect.poll(async () => (await memory.messages({ sessionId: 'stream' })).length).toBe(2);
    expect((await memory.messages({ sessionId: 'stream' }))[1]?.content).toBe('Deploys run at noon.');
  });

  it('records tool calls and results as tool_call / tool_result events with the tool name, once per call id', async () => {
    const model = new MockLanguageModelV3({
      doGenerate: [
        {
          ...calls(['c1', 'get_weather', { city: 'Oslo' }]),
          content: [
            { type: 'text' as const, text: 'Checking.' },
            ...calls(['c1', 'get_weather', { city: 'Oslo' }]).content,
          ],
        },
        calls(['c2', 'memory_remember', { content: 'The user asked about the weather in Oslo' }]),
        text('It is sunny in Oslo.'),
        text('You are welcome.'),
        text('Noted.'),
      ],
    });
    const wrapped = wrapLanguageModel({ model, middleware: engramMiddleware(memory, { sessionId: 'w' }) });
    const tools = { ...engramTools(memory), get_weather: weather };
    const question: ModelMessage = { role: 'user', content: 'What is the weather in Oslo?' };
    const first = await generateText({
      model: wrapped,
      tools,
      stopWhen: stepCountIs(5),
      messages: [question],
    });
    expect(first.text).toBe('It is sunny in Oslo.');
    const afterFirst = [
      ['message', 'user', null, null, 'What is the weather in Oslo?'],
      ['message', 'assistant', null, null, 'Checking.'],
      ['tool_call', 'assistant', 'get_weather', 'c1', '{"city":"Oslo"}'],
      ['tool_result', 'tool', 'get_weather', 'c1', 'Sunny in Oslo, 18 °C'],
      [
        'tool_call',
        'assistant',
        'memory_remember',
        'c2',
        '{"content":"The user asked about the weather in Oslo"}',
      ],
      ['tool_result', 'tool', 'memory_remember', 'c2', expect.stringMatching(/^Remembered as fact /)],
      ['message', 'assistant', null, null, 'It is sunny in Oslo.'],
    ];
    expect(await entries('w')).toEqual(afterFirst);

    // The next turn resends the whole exchange, tool calls and results included: only the new turn is recorded.
    const history: ModelMessage[] = [question, ...first.response.messages];
    await generateText({ model: wrapped, messages: [...history, { role: 'user', content: 'Thanks!' }] });
    const afterSecond = [
      ...afterFirst,
      ['message', 'user', null, null, 'Thanks!'],
      ['message', 'assistant', null, null, 'You are welcome.'],
    ];
    expect(await entries('w')).toEqual(afterSecond);

    // An application that trims its history sends the tool exchange again out of place: the calls are known by id.
    await generateText({
      model: wrapped,
      messages: [
        {
          role: 'assistant',
          content: [
            { type: 'tool-call', toolCallId: 'c1', toolName: 'get_weather', input: { city: 'Oslo' } },
          ],
        },
        first.response.messages[1] as ModelMessage,
        { role: 'user', content: 'Remember that.' },
      ],
    });
    expect(await entries('w')).toEqual([
      ...afterSecond,
      ['message', 'user', null, null, 'Remember that.'],
      ['message', 'assistant', null, null, 'Noted.'],
    ]);
    // The calls are memories too, tagged with their tool.
    const remembered = await memory.list({ kinds: ['event'], tags: ['tool:get_weather'] });
    expect(remembered.map((m) => m.content).sort()).toEqual([
      'Sunny in Oslo, 18 °C',
      'tool get_weather {"city":"Oslo"}',
    ]);
  });

  it('a message id given by the application records that message once, wherever it is resent', async () => {
    const model = new MockLanguageModelV3({ doGenerate: [text('Hi!'), text('Hi again!')] });
    const wrapped = wrapLanguageModel({ model, middleware: engramMiddleware(memory, { sessionId: 'ids' }) });
    const hello: ModelMessage = {
      role: 'user',
      content: 'Hello',
      providerOptions: { engram: { messageId: 'm-1' } },
    };
    await generateText({ model: wrapped, messages: [hello] });
    await generateText({ model: wrapped, messages: [{ role: 'user', content: 'Earlier:' }, hello] });
    expect((await entries('ids')).map(([, role, , id, content]) => [role, id, content])).toEqual([
      ['user', 'm-1', 'Hello'],
      ['assistant', null, 'Hi!'],
      ['user', null, 'Earlier:'],
      ['assistant', null, 'Hi again!'],
    ]);
  });

  it('a streamed tool call is recorded as a tool_call event, and a long tool output is cut, not refused', async () => {
    const model = new MockLanguageModelV3({
      doStream: async () => ({
        stream: convertArrayToReadableStream([
          { type: 'text-start' as const, id: 't' },
          { type: 'text-delta' as const, id: 't', delta: 'Searching.' },
          { type: 'text-end' as const, id: 't' },
          {
            type: 'tool-call' as const,
            toolCallId: 's1',
            toolName: 'get_weather',
            input: '{"city":"Bergen"}',
          },
          { type: 'finish' as const, finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage },
        ]),
      }),
    });
    const wrapped = wrapLanguageModel({
      model,
      middleware: engramMiddleware(memory, { sessionId: 'stream-tools' }),
    });
    const long = 'x'.repeat(100_000);
    const result = streamText({
      model: wrapped,
      tools: { get_weather: weather },
      messages: [
        { role: 'user', content: 'Earlier output:' },
        {
          role: 'assistant',
          content: [
            { type: 'tool-call', toolCallId: 'old', toolName: 'get_weather', input: { city: 'Oslo' } },
          ],
        },
        {
          role: 'tool',
          content: [
            {
              type: 'tool-result',
              toolCallId: 'old',
              toolName: 'get_weather',
              output: { type: 'text', value: long },
            },
          ],
        },
        { role: 'user', content: 'And Bergen?' },
      ],
    });
    await result.consumeStream();
    await expect.poll(async () => (await memory.messages({ sessionId: 'stream-tools' })).length).toBe(6);
    const logged = await entries('stream-tools');
    expect(logged.map(([type, , name, id]) => [type, name, id])).toEqual([
      ['message', null, null],
      ['tool_call', 'get_weather', 'old'],
      ['tool_result', 'get_weather', 'old'],
      ['message', null, null],
      ['message', null, null],
      ['tool_call', 'get_weather', 's1'],
    ]);
    expect(logged[2]?.[4]).toBe('x'.repeat(MAX_RECORDED_CHARS));
    expect(logged[5]?.[4]).toBe('{"city":"Bergen"}');
  });

  it('neither the health figures nor a recording error carry what was said', async () => {
    const secret = 'my passport number is X1234567';
    const model = new MockLanguageModelV3({
      doGenerate: [text('Stored.'), calls(['c9', `${secret} `.repeat(20), {}])],
    });
    const wrapped = wrapLanguageModel({ model, middleware: engramMiddleware(memory, { sessionId: 'p' }) });
    await generateText({ model: wrapped, messages: [{ role: 'user', content: secret }] });
    const health = JSON.stringify(await memory.health());
    expect(health).not.toContain('passport');
    expect(health).not.toContain('X1234567');
    // A model that answers with a malformed tool name (too long) fails the call with a typed error, without the text.
    const error = await generateText({
      model: wrapped,
      messages: [{ role: 'user', content: secret }],
    }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'ENGRAM_MEMORY_INVALID_INPUT' });
    expect(String((error as Error).message)).not.toContain('X1234567');
    expect(JSON.stringify(error)).not.toContain('X1234567');
  });
});
