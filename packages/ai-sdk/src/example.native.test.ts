/**
 * examples/ai-sdk-chat runs as a user runs it — a Node process importing the built packages by name — with the
 * scripted model: the second question is answered from the memory the first one wrote.
 */
import { fileURLToPath } from 'node:url';
import { readmeSnippet, runReadmeSnippet, runRepositoryExample } from '@engram/test-support';
import { describe, expect, it } from 'vitest';

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
