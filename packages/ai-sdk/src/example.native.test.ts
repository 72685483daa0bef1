/**
 * examples/ai-sdk-chat runs as a user runs it — a Node process importing the built packages by name — with the
 * scripted model: the second question is answered from the memory the first one wrote.
 */
import { fileURLToPath } from 'node:url';
import { createMemory } from '@engram/memory';
import {
  EXAMPLE_ENDPOINT,
  readmeSnippet,
  runExampleOnEndpoint,
  runReadmeSnippet,
  runRepositoryExample,
} from '@engram/test-support';
import { describe, expect, it } from 'vitest';
import {
  CHAT_PATH,
  startLoopbackOpenAIServer,
} from '../../provider-openai/src/test-support/openai-loopback-server.js';

const packageDir = fileURLToPath(new URL('..', import.meta.url));
const root = fileURLToPath(new URL('../../..', import.meta.url));

describe('examples/ai-sdk-chat', () => {
  it('remembers through the tool, then answers from what the middleware injected', async () => {
    const run = await runRepositoryExample(packageDir, 'ai-sdk-chat/chat.mjs');
    expect(run.stderr).toBe('');
    expect(run.stdout).toBe(
      [
        '> Please remember that my favourite editor is Helix.',
        'Noted.',
        '> Which editor do I like?',
        "From memory: The user's favourite editor is Helix.",
        '',
      ].join('\n'),
    );
    expect(run.code).toBe(0);
  });
});

const completion = (message: Record<string, unknown>, finish: string) => ({
  kind: 'json' as const,
  body: {
    id: 'chatcmpl-loopback',
    object: 'chat.completion',
    created: 0,
    model: 'loopback-chat',
    choices: [{ index: 0, message: { role: 'assistant', ...message }, finish_reason: finish }],
    usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
  },
});

describe('examples/ai-sdk-chat with an OpenAI-compatible endpoint', () => {
  it('drives the endpoint through the provider package it declares: the tool call is remembered and recalled', async () => {
    const server = await startLoopbackOpenAIServer({ embeddingDimensions: 8 });
    try {
      const fact = "The user's favourite editor is Helix";
      const call = { id: 'call_1', type: 'function', function: { name: 'memory_remember', arguments: '' } };
      call.function.arguments = JSON.stringify({ content: fact });
      server.enqueue(
        CHAT_PATH,
        completion({ content: null, tool_calls: [call] }, 'tool_calls'),
        completion({ content: 'Noted.' }, 'stop'),
        completion({ content: 'Helix.' }, 'stop'),
      );
      await runExampleOnEndpoint('ai-sdk-chat/chat.mjs', server.baseUrl, async (run, database) => {
        expect(run.stderr).toBe('');
        expect(run.stdout).toBe(
          [
            '> Please remember that my favourite editor is Helix.',
            'Noted.',
            '> Which editor do I like?',
            'Helix.',
            '',
          ].join('\n'),
        );
        expect(run.code).toBe(0);

        const bodies = server.requests.map(
          (r) => r.body as { model: string; tools?: unknown[]; messages: unknown[] },
        );
        expect(server.requests.map((r) => r.path)).toEqual([CHAT_PATH, CHAT_PATH, CHAT_PATH]);
        expect(server.requests[0]?.headers.authorization).toBe(`Bearer ${EXAMPLE_ENDPOINT.apiKey}`);
        expect(bodies[0]?.model).toBe(EXAMPLE_ENDPOINT.chatModel);
        // The tools' zod schemas reach the endpoint as JSON Schema: memory_search requires its query.
        expect(bodies[0]?.tools).toContainEqual({
          type: 'function',
          function: expect.objectContaining({
            name: 'memory_search',
            parameters: expect.objectContaining({ required: ['query'] }),
          }),
        });
        // The second question reaches the endpoint with the remembered fact in the injected memory.
        expect(JSON.stringify(bodies[2]?.messages)).toContain(fact);
        const memory = await createMemory({ path: database });
        expect((await memory.list({ kinds: ['fact'] })).map((m) => m.content)).toEqual([fact]);
        await memory.close();
      });
    } finally {
      await server.close();
    }
  });
});

describe('the README example', () => {
  it('is five lines, the same in the repository README and this package README, and it runs', async () => {
    const snippet = await readmeSnippet(`${root}/README.md`, '**Vercel AI SDK**');
    expect(snippet.trimEnd().split('\n')).toHaveLength(5);
    expect(await readmeSnippet(`${packageDir}/README.md`)).toBe(snippet);
    // What the README leaves to the reader: the model (a scripted one that calls a tool first) and printing.
    const before = `import { MockLanguageModelV3 } from 'ai/test';
const usage = { inputTokens: { total: 1 }, outputTokens: { total: 1 } };
const answer = (content, unified) => ({ content, finishReason: { unified, raw: unified }, usage, warnings: [] });
const model = new MockLanguageModelV3({ doGenerate: [
  answer([{ type: 'tool-call', toolCallId: 'c1', toolName: 'memory_remember', input: '{"content":"The user lives in Oslo"}' }], 'tool-calls'),
  answer([{ type: 'text', text: 'You live in Oslo.' }], 'stop'),
] });`;
    const run = await runReadmeSnippet(packageDir, snippet, {
      before,
      after:
        "console.log(text, (await memory.list({ kinds: ['fact'] })).map((m) => m.content));\nawait memory.close();",
    });
    expect(run.stderr).toBe('');
    expect(run.stdout).toBe("You live in Oslo. [ 'The user lives in Oslo' ]\n");
    expect(run.code).toBe(0);
  });
});
