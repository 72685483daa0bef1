/**
 * The adapter through the AI SDK itself: `generateText` with a model wrapped by `engramMiddleware`, driven by the
 * SDK's own mock language model (`ai/test`). The assertions are on what the model received.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMemory, type Memory } from '@engram/memory';
import { generateText, stepCountIs, streamText, wrapLanguageModel } from 'ai';
import { convertArrayToReadableStream, MockLanguageModelV3 } from 'ai/test';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { engramMiddleware } from './middleware.js';
import { messageText, type Prompt } from './prompt.js';
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
});
