/**
 * Users and sessions are boundaries: one agent serves many end users through one middleware, each in many
 * sessions. Driven through `generateText` with the SDK's own mock language model (`ai/test`) on a real memory
 * file; the assertions are on what the model received and what the memory recorded.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createMemory, type Memory } from '@engram/memory';
import { readmeSnippet, runReadmeSnippet } from '@engram/test-support';
import { generateText, stepCountIs, streamText, wrapLanguageModel } from 'ai';
import { convertArrayToReadableStream, MockLanguageModelV3 } from 'ai/test';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type EngramMiddlewareOptions, type EngramScopeFunction, engramMiddleware } from './middleware.js';
import { messageText, type Prompt } from './prompt.js';
import type { EngramScope } from './scope.js';
import { engramTools } from './tools.js';

let dir: string;
let memory: Memory;
let n = 0;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'engram-ai-sdk-scope-'));
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
const ACCOUNT = 'My bank account number is 4711-0815-2342.';

/** A model that answers with the account number when its prompt holds one, and records every prompt. */
const accountModel = () =>
  new MockLanguageModelV3({
    doGenerate: async ({ prompt }) => {
      const number = /\d{4}-\d{4}-\d{4}/.exec(promptText(prompt))?.[0];
      return text(number === undefined ? 'I do not know it.' : `It is ${number}.`);
    },
  });

/** The scope a web handler passes with each call: `providerOptions: { engram: { userId, sessionId } }`. */
const perRequest: EngramScopeFunction = ({ providerOptions }) => providerOptions?.engram as EngramScope;
const as = (userId: string, sessionId: string) => ({ providerOptions: { engram: { userId, sessionId } } });

describe('engramMiddleware scope', () => {
  it('a middleware scoped to a user records the exchange under that user and session', async () => {
    const model = new MockLanguageModelV3({ doGenerate: async () => text('Noted.') });
    const middleware = engramMiddleware(memory, { scope: { userId: 'alice', sessionId: 'a1' } });
    await generateText({ model: wrapLanguageModel({ model, middleware }), prompt: ACCOUNT });
    const logged = await memory.messages({ userId: 'alice', sessionId: 'a1' });
    expect(logged.map((m) => [m.role, m.userId, m.content])).toEqual([
      ['user', 'alice', ACCOUNT],
      ['assistant', 'alice', 'Noted.'],
    ]);
    expect((await memory.list({ kinds: ['event'] })).map((m) => [m.userId, m.sessionId])).toEqual([
      ['alice', 'a1'],
      ['alice', 'a1'],
    ]);
    // Bob does not see it, not even in the same session.
    expect(await memory.messages({ userId: 'bob', sessionId: 'a1' })).toEqual([]);
  });

  it("one middleware serves Alice and Bob: Bob's prompt holds nothing of Alice's, Alice's next session recalls it", async () => {
    const model = accountModel();
    const wrapped = wrapLanguageModel({ model, middleware: engramMiddleware(memory, { scope: perRequest }) });
    await generateText({ model: wrapped, prompt: ACCOUNT, ...as('alice', 'a1') });

    const bob = await generateText({
      model: wrapped,
      prompt: 'What is my bank account number?',
      ...as('bob', 'b1'),
    });
    const bobSaw = promptText(model.doGenerateCalls[1]?.prompt ?? []);
    expect(bobSaw).toContain('What is my bank account number?');
    expect(bobSaw).not.toContain('4711');
    expect(bobSaw).not.toContain('bank account number is');
    expect(bob.text).toBe('I do not know it.');

    const alice = await generateText({
      model: wrapped,
      prompt: 'What is my bank account number?',
      ...as('alice', 'a2'),
    });
    expect(promptText(model.doGenerateCalls[2]?.prompt ?? [])).toContain(ACCOUNT);
    expect(alice.text).toBe('It is 4711-0815-2342.');
    // Each exchange is recorded in its own user's session.
    expect((await memory.messages({ userId: 'bob', sessionId: 'b1' })).map((m) => m.userId)).toEqual([
      'bob',
      'bob',
    ]);
    expect((await memory.messages({ userId: 'alice', sessionId: 'a2' })).map((m) => m.content)).toEqual([
      'What is my bank account number?',
      'It is 4711-0815-2342.',
    ]);
  });

  it('a streamed call is recorded in the scope its call was given, evaluated once per call', async () => {
    const model = new MockLanguageModelV3({
      doStream: async () => ({
        stream: convertArrayToReadableStream([
          { type: 'text-start' as const, id: 't' },
          { type: 'text-delta' as const, id: 't', delta: 'Noted.' },
          { type: 'text-end' as const, id: 't' },
          { type: 'finish' as const, finishReason: stop, usage },
        ]),
      }),
    });
    const seen: string[] = [];
    const middleware = engramMiddleware(memory, {
      scope: async (call) => {
        const scope = call.providerOptions?.engram as EngramScope;
        seen.push(`${scope.userId}`);
        return scope;
      },
    });
    const wrapped = wrapLanguageModel({ model, middleware });
    const [a, b] = [
      streamText({ model: wrapped, prompt: 'I am Alice', ...as('alice', 'sa') }),
      streamText({ model: wrapped, prompt: 'I am Bob', ...as('bob', 'sb') }),
    ];
    await Promise.all([a.consumeStream(), b.consumeStream()]);
    await expect.poll(async () => (await memory.list({ kinds: ['event'] })).length).toBe(4);
    expect(seen.sort()).toEqual(['alice', 'bob']);
    const events = await memory.list({ kinds: ['event'] });
    expect(events.map((m) => [m.userId, m.sessionId, m.content]).sort()).toEqual([
      ['alice', 'sa', 'I am Alice'],
      ['alice', 'sa', 'Noted.'],
      ['bob', 'sb', 'I am Bob'],
      ['bob', 'sb', 'Noted.'],
    ]);
  });

  it('a scope function that throws or answers an invalid scope fails the call with a typed error; nothing is recorded', async () => {
    const model = new MockLanguageModelV3({ doGenerate: async () => text('Noted.') });
    const call = (scope: EngramScopeFunction) =>
      generateText({
        model: wrapLanguageModel({ model, middleware: engramMiddleware(memory, { scope }) }),
        prompt: ACCOUNT,
      }).catch((e: unknown) => e);
    const thrown = await call(() => {
      throw new Error('no session');
    });
    expect(thrown).toMatchObject({ code: 'ENGRAM_MEMORY_INVALID_INPUT' });
    expect((thrown as Error).message).toBe('engramMiddleware: the scope function threw');
    // A function that lost the user must not act for the whole agent.
    expect(await call(() => ({ userId: undefined }) as unknown as EngramScope)).toMatchObject({
      code: 'ENGRAM_MEMORY_INVALID_INPUT',
      message: expect.stringContaining('userId must be a string'),
    });
    expect(await call(() => ({ user: 'alice' }) as unknown as EngramScope)).toMatchObject({
      code: 'ENGRAM_MEMORY_INVALID_INPUT',
      message: expect.stringContaining('unknown option "user" (did you mean "userId"?)'),
    });
    expect(await call(() => null as unknown as EngramScope)).toMatchObject({
      code: 'ENGRAM_MEMORY_INVALID_INPUT',
    });
    // An id the memory would refuse when recording is refused before the model is called.
    expect(await call(() => ({ userId: ' alice' }))).toMatchObject({
      code: 'ENGRAM_MEMORY_INVALID_INPUT',
      message: expect.stringContaining('userId must not start or end with whitespace'),
    });
    expect(await call(() => ({ userId: 'x'.repeat(300) }))).toMatchObject({
      code: 'ENGRAM_MEMORY_INVALID_INPUT',
    });
    expect(model.doGenerateCalls).toHaveLength(0);
    expect(await memory.list({ kinds: ['event'] })).toEqual([]);
  });

  it('options are strict; agentId and sessionId beside scope still work, as deprecated aliases', async () => {
    const create = (options: unknown) =>
      (() => engramMiddleware(memory, options as EngramMiddlewareOptions)) as () => unknown;
    expect(create({ userId: 'alice' })).toThrow(
      expect.objectContaining({
        code: 'ENGRAM_MEMORY_INVALID_INPUT',
        message: 'engramMiddleware options has an unknown option "userId" (did you mean "scope"?)',
      }),
    );
    expect(create({ scope: { userId: 'alice' }, sessionId: 's' })).toThrow(
      expect.objectContaining({ code: 'ENGRAM_MEMORY_INVALID_INPUT' }),
    );
    expect(create({ scope: { userId: 'alice', thread_id: 't' } })).toThrow(
      expect.objectContaining({ message: expect.stringContaining('did you mean "sessionId"?') }),
    );
    const model = new MockLanguageModelV3({ doGenerate: async () => text('Hi.') });
    const middleware = engramMiddleware(memory, { agentId: 'support', sessionId: 'legacy' });
    await generateText({ model: wrapLanguageModel({ model, middleware }), prompt: 'Hello' });
    const logged = await memory.messages({ agentId: 'support', sessionId: 'legacy' });
    expect(logged.map((m) => [m.role, m.userId])).toEqual([
      ['user', null],
      ['assistant', null],
    ]);
  });
});

describe('engramTools scope', () => {
  it("tools scoped to Bob cannot find Alice's memory; Alice's tools can, and what Bob remembers is his", async () => {
    const remembered = await memory.add(ACCOUNT, { userId: 'alice', kind: 'fact' });
    const id = remembered.added[0]?.id ?? '';
    const bob = engramTools(memory, { userId: 'bob' });
    const alice = engramTools(memory, { userId: 'alice', sessionId: 'a1' });
    const run = async (tools: typeof bob, name: string, input: unknown) => {
      const model = new MockLanguageModelV3({
        doGenerate: [
          {
            content: [{ type: 'tool-call', toolCallId: 'c', toolName: name, input: JSON.stringify(input) }],
            finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
            usage,
            warnings: [],
          },
          text('done'),
        ],
      });
      const result = await generateText({ model, tools, stopWhen: stepCountIs(2), prompt: 'go' });
      return String(result.steps[0]?.toolResults[0]?.output);
    };
    expect(await run(bob, 'memory_search', { query: 'bank account number' })).not.toContain('4711');
    expect(await run(bob, 'memory_get', { id })).not.toContain('4711');
    expect(await run(alice, 'memory_search', { query: 'bank account number' })).toContain('4711');
    expect(await run(bob, 'memory_remember', { content: 'Bob prefers tea' })).toMatch(/^Remembered as fact /);
    const facts = await memory.list({ kinds: ['fact'] });
    expect(facts.map((m) => [m.userId, m.content]).sort()).toEqual([
      ['alice', ACCOUNT],
      ['bob', 'Bob prefers tea'],
    ]);
    expect(() => engramTools(memory, { user_id: 'bob' } as unknown as EngramScope)).toThrow(
      expect.objectContaining({ code: 'ENGRAM_MEMORY_INVALID_INPUT' }),
    );
  });
});

describe('the two-user README example', () => {
  it("runs: Bob is not told Alice's number, Alice's next session is", { timeout: 60_000 }, async () => {
    const packageDir = fileURLToPath(new URL('..', import.meta.url));
    const snippet = await readmeSnippet(`${packageDir}/README.md`, '## One agent, many users');
    expect(snippet.trimEnd().split('\n').length).toBeLessThan(15);
    // What the README leaves to the reader: a model (one that repeats an account number its prompt holds).
    const before = `import { MockLanguageModelV3 } from 'ai/test';
const usage = { inputTokens: { total: 1 }, outputTokens: { total: 1 } };
const model = new MockLanguageModelV3({ doGenerate: async ({ prompt }) => {
  const number = /\\d{4}-\\d{4}-\\d{4}/.exec(JSON.stringify(prompt))?.[0];
  return { content: [{ type: 'text', text: number ?? 'I do not know.' }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] };
} });`;
    const after = `console.log(bob.text, alice.text);
await memory.close();`;
    const run = await runReadmeSnippet(packageDir, snippet, { before, after });
    expect(run.stderr).toBe('');
    expect(run.stdout).toBe('I do not know. 4711-0815-2342\n');
    expect(run.code).toBe(0);
  });
});
