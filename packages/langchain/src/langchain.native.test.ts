/**
 * The adapter through LangChain's own interfaces: `retriever.invoke`, a `RunnableWithMessageHistory` whose
 * history lives in Engram, and the tools' `invoke`. The model is a runnable that records what it received.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMemory, type Memory } from '@engram/memory';
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import { ChatPromptTemplate, MessagesPlaceholder } from '@langchain/core/prompts';
import { RunnableLambda, RunnableWithMessageHistory } from '@langchain/core/runnables';
import { ToolInputParsingException } from '@langchain/core/tools';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { EngramChatMessageHistory } from './history.js';
import { EngramRetriever } from './retriever.js';
import { engramTools } from './tools.js';

let dir: string;
let path: string;
let memory: Memory;
let n = 0;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'engram-langchain-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});
beforeEach(async () => {
  n += 1;
  path = join(dir, `m${n}.db`);
  memory = await createMemory({ path, embedder: 'deterministic', agentId: 'helper' });
});
afterEach(async () => {
  await memory.close();
});

describe('EngramRetriever', () => {
  it('retriever.invoke returns the best memories as Documents with the explanation in their metadata', async () => {
    await memory.add('The API server listens on port 8080');
    await memory.add('Deploys go out on Fridays');
    const retriever = new EngramRetriever({ memory, limit: 1 });
    const docs = await retriever.invoke('which port does the API server use?');
    expect(docs.map((d) => d.pageContent)).toEqual(['The API server listens on port 8080']);
    expect(docs[0]?.metadata).toMatchObject({ kind: 'fact', agentId: 'helper' });
    expect(docs[0]?.metadata.explanation.arms).toContain('lexical');
    expect(typeof docs[0]?.metadata.score).toBe('number');
  });
});

describe('EngramChatMessageHistory', () => {
  it('a RunnableWithMessageHistory keeps the conversation in Engram and feeds it back to the model', async () => {
    const received: BaseMessage[][] = [];
    const model = RunnableLambda.from(async (prompt: { toChatMessages(): BaseMessage[] }) => {
      const messages = prompt.toChatMessages();
      received.push(messages);
      return new AIMessage(`You said: ${messages.at(-1)?.content}`);
    });
    const prompt = ChatPromptTemplate.fromMessages([
      ['system', 'You are a helpful assistant.'],
      new MessagesPlaceholder('history'),
      ['human', '{input}'],
    ]);
    const chat = new RunnableWithMessageHistory({
      runnable: prompt.pipe(model),
      getMessageHistory: (sessionId: string) => new EngramChatMessageHistory({ memory, sessionId }),
      inputMessagesKey: 'input',
      historyMessagesKey: 'history',
    });
    const config = { configurable: { sessionId: 'ada' } };
    await chat.invoke({ input: 'My name is Ada' }, config);
    const second = await chat.invoke({ input: 'What is my name?' }, config);
    expect(second.content).toBe('You said: What is my name?');
    expect(received[1]?.map((m) => [m.getType(), m.content])).toEqual([
      ['system', 'You are a helpful assistant.'],
      ['human', 'My name is Ada'],
      ['ai', 'You said: My name is Ada'],
      ['human', 'What is my name?'],
    ]);
    // The history outlives the process: a new memory on the same file reads it back.
    await memory.close();
    memory = await createMemory({ path, agentId: 'helper' });
    const reread = await new EngramChatMessageHistory({ memory, sessionId: 'ada' }).getMessages();
    expect(reread.map((m) => m.content)).toEqual([
      'My name is Ada',
      'You said: My name is Ada',
      'What is my name?',
      'You said: What is my name?',
    ]);
    expect((await memory.search('my name is Ada'))[0]?.content).toBe('My name is Ada');
  });
});

describe('EngramChatMessageHistory with tool calls, and clear()', () => {
  const setup = () => {
    const received: BaseMessage[][] = [];
    const replies: BaseMessage[] = [];
    const model = RunnableLambda.from(async (prompt: { toChatMessages(): BaseMessage[] }) => {
      const messages = prompt.toChatMessages();
      received.push(messages);
      return replies.shift() ?? new AIMessage('ok');
    });
    const prompt = ChatPromptTemplate.fromMessages([
      ['system', 'You are a weather assistant.'],
      new MessagesPlaceholder('history'),
      new MessagesPlaceholder('input'),
    ]);
    const chat = new RunnableWithMessageHistory({
      runnable: prompt.pipe(model),
      getMessageHistory: (sessionId: string) => new EngramChatMessageHistory({ memory, sessionId }),
      inputMessagesKey: 'input',
      historyMessagesKey: 'history',
    });
    return { chat, received, replies, config: { configurable: { sessionId: 'weather' } } };
  };
  const call = { type: 'tool_call' as const, id: 'call-1', name: 'get_weather', args: { city: 'Oslo' } };

  it('an AIMessage with tool calls and its ToolMessage come back as such, in a later turn and a later process', async () => {
    const { chat, received, replies, config } = setup();
    replies.push(new AIMessage({ content: '', id: 'ai-1', tool_calls: [call] }));
    await chat.invoke({ input: [new HumanMessage('Weather in Oslo?')] }, config);
    replies.push(new AIMessage('It is sunny in Oslo.'));
    await chat.invoke(
      { input: [new ToolMessage({ content: 'Sunny, 18 °C', tool_call_id: 'call-1' })] },
      config,
    );
    await chat.invoke({ input: [new HumanMessage('Thanks')] }, config);
    const seen = received[2] ?? [];
    expect(seen.map((m) => m.getType())).toEqual(['system', 'human', 'ai', 'tool', 'ai', 'human']);
    const asked = seen[2] as AIMessage;
    expect(asked).toBeInstanceOf(AIMessage);
    expect(asked.id).toBe('ai-1');
    expect(asked.tool_calls).toEqual([call]);
    const answered = seen[3] as ToolMessage;
    expect(answered).toBeInstanceOf(ToolMessage);
    expect([answered.tool_call_id, answered.name, answered.content]).toEqual([
      'call-1',
      'get_weather',
      'Sunny, 18 °C',
    ]);
    // In the log: tool_call and tool_result events with the tool's name and the call id.
    expect(
      (await memory.messages({ sessionId: 'weather' })).map((m) => [m.type, m.role, m.toolName, m.id]),
    ).toEqual([
      ['message', 'user', null, null],
      ['message', 'assistant', null, 'ai-1'],
      ['tool_call', 'assistant', 'get_weather', 'call-1'],
      ['tool_result', 'tool', 'get_weather', 'call-1'],
      ['message', 'assistant', null, null],
      ['message', 'user', null, null],
      ['message', 'assistant', null, null],
    ]);
    // Added again (a retry), the call and its result are known by id: nothing is recorded twice.
    const history = new EngramChatMessageHistory({ memory, sessionId: 'weather' });
    await history.addMessages([asked, answered]);
    expect(await memory.messages({ sessionId: 'weather' })).toHaveLength(7);
    // Another process reads the same messages back.
    await memory.close();
    memory = await createMemory({ path, agentId: 'helper' });
    const reread = await new EngramChatMessageHistory({ memory, sessionId: 'weather' }).getMessages();
    expect(reread.map((m) => m.getType())).toEqual(['human', 'ai', 'tool', 'ai', 'human', 'ai']);
    expect((reread[1] as AIMessage).tool_calls).toEqual([call]);
    expect((reread[2] as ToolMessage).tool_call_id).toBe('call-1');
  });

  it('clear() empties the history the chain reads; new turns follow; the old messages stay searchable', async () => {
    const { chat, received, config } = setup();
    await chat.invoke({ input: [new HumanMessage('My locker code is 5521')] }, config);
    await chat.invoke({ input: [new HumanMessage('And my desk is B4')] }, config);
    const history = new EngramChatMessageHistory({ memory, sessionId: 'weather' });
    await history.clear();
    expect(await history.getMessages()).toEqual([]);
    await chat.invoke({ input: [new HumanMessage('Start over')] }, config);
    expect(received[2]?.map((m) => [m.getType(), m.content])).toEqual([
      ['system', 'You are a weather assistant.'],
      ['human', 'Start over'],
    ]);
    expect((await history.getMessages()).map((m) => m.content)).toEqual(['Start over', 'ok']);
    expect((await memory.search('locker code 5521'))[0]?.content).toBe('My locker code is 5521');
  });
});

describe('what leaves the process', () => {
  it('neither the health figures nor an error of the history carry what was said', async () => {
    const secret = 'my passport number is X1234567';
    const history = new EngramChatMessageHistory({ memory, sessionId: 'private' });
    await new EngramRetriever({ memory }).invoke(secret);
    await history.addMessages([new HumanMessage(secret), new AIMessage(`Noted: ${secret}`)]);
    const health = JSON.stringify(await memory.health());
    expect(health).not.toContain('passport');
    expect(health).not.toContain('X1234567');
    // A tool call id the log cannot hold (too long) is refused with a typed error that does not repeat it.
    const error = await history
      .addMessages([
        new AIMessage({
          content: secret,
          tool_calls: [{ type: 'tool_call', id: secret.repeat(20), name: 'lookup', args: { q: secret } }],
        }),
      ])
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'ENGRAM_MEMORY_INVALID_INPUT' });
    expect(`${(error as Error).message} ${JSON.stringify(error)}`).not.toContain('X1234567');
    expect(await history.getMessages()).toHaveLength(2);
  });
});

describe('engramTools', () => {
  it('the memory tools run through tool.invoke, for the agent: remember, search, forget', async () => {
    const tools = engramTools(memory);
    expect(tools.map((t) => t.name)).toEqual(
      expect.arrayContaining(['memory_search', 'memory_remember', 'memory_forget']),
    );
    const remember = tools.find((t) => t.name === 'memory_remember');
    expect(await remember?.invoke({ content: 'The office closes at 6pm on Fridays' })).toMatch(
      /^Remembered as fact /,
    );
    const search = tools.find((t) => t.name === 'memory_search');
    expect(await search?.invoke({ query: 'when does the office close?' })).toContain('6pm');
    const [fact] = await memory.list();
    const forget = tools.find((t) => t.name === 'memory_forget');
    expect(await forget?.invoke({ id: fact?.id })).toMatch(new RegExp(`^Forgot memory ${fact?.id}\\.`));
    expect(await memory.list()).toEqual([]);
  });

  it('each tool has a zod schema from the one definition; a malformed call is refused by LangChain, not run', async () => {
    const tools = engramTools(memory);
    expect(tools.map((t) => t.name)).toEqual(memory.toolDefinitions.map((d) => d.name));
    for (const t of tools) expect(t.schema).toBeInstanceOf(z.ZodType);
    const search = tools.find((t) => t.name === 'memory_search');
    const schema = search?.schema as z.ZodType;
    expect(schema.safeParse({ query: 'office hours' }).success).toBe(true);
    expect(schema.safeParse({ limit: 3 }).success).toBe(false);
    await expect(search?.invoke({ limit: 3 })).rejects.toBeInstanceOf(ToolInputParsingException);
    const remember = tools.find((t) => t.name === 'memory_remember');
    await expect(remember?.invoke({ content: '' })).rejects.toBeInstanceOf(ToolInputParsingException);
    expect(await memory.list()).toEqual([]);
  });
});
