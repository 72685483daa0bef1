/**
 * The adapter through LangChain's own interfaces: `retriever.invoke`, a `RunnableWithMessageHistory` whose
 * history lives in Engram, and the tools' `invoke`. The model is a runnable that records what it received.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMemory, type Memory } from '@engram/memory';
import { AIMessage, type BaseMessage } from '@langchain/core/messages';
import { ChatPromptTemplate, MessagesPlaceholder } from '@langchain/core/prompts';
import { RunnableLambda, RunnableWithMessageHistory } from '@langchain/core/runnables';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
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
});
