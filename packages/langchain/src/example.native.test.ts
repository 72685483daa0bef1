/**
 * examples/langchain-rag runs as a user runs it — a Node process importing the built packages by name — with the
 * scripted model: each question is answered from the runbook passage that means the same thing.
 */
import { fileURLToPath } from 'node:url';
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
  expectedChatContent,
  startLoopbackOpenAIServer,
} from '../../provider-openai/src/test-support/openai-loopback-server.js';

const packageDir = fileURLToPath(new URL('..', import.meta.url));
const root = fileURLToPath(new URL('../../..', import.meta.url));

describe('examples/langchain-rag', () => {
  it('answers each question from the runbook passage that means the same, found by meaning', async () => {
    const run = await runRepositoryExample(packageDir, 'langchain-rag/rag.mjs');
    expect(run.stderr).toBe('');
    expect(run.stdout).toBe(
      [
        '> How do I undo a bad release?',
        'According to the runbook: To roll back a deploy, run `deploy rollback --to previous` and watch the error rate for ten minutes.',
        '> When is someone paged?',
        'According to the runbook: The on-call engineer is paged when the checkout error rate stays above 2% for five minutes.',
        '',
      ].join('\n'),
    );
    expect(run.code).toBe(0);
  });
});

describe('examples/langchain-rag with an OpenAI-compatible endpoint', () => {
  it('drives the endpoint through the chat model package it declares, with the retrieved passage in the prompt', async () => {
    const server = await startLoopbackOpenAIServer({ embeddingDimensions: 8 });
    try {
      await runExampleOnEndpoint('langchain-rag/rag.mjs', server.baseUrl, async (run) => {
        expect(run.stderr).toBe('');
        // The loopback endpoint's default answer counts the messages it was sent: the one prompt.
        const answer = expectedChatContent(1);
        expect(run.stdout).toBe(
          ['> How do I undo a bad release?', answer, '> When is someone paged?', answer, ''].join('\n'),
        );
        expect(run.code).toBe(0);
        expect(server.requests.map((r) => r.path)).toEqual([CHAT_PATH, CHAT_PATH]);
        expect(server.requests[0]?.headers.authorization).toBe(`Bearer ${EXAMPLE_ENDPOINT.apiKey}`);
        const prompts = server.requests.map((r) =>
          JSON.stringify((r.body as { messages: unknown }).messages),
        );
        expect(prompts[0]).toContain('deploy rollback --to previous');
        expect(prompts[1]).toContain('The on-call engineer is paged');
      });
    } finally {
      await server.close();
    }
  });
});

describe('the README example', () => {
  it('is five lines, the same in the repository README and this package README, and it runs', async () => {
    const snippet = await readmeSnippet(`${root}/README.md`, '**LangChain.js**');
    expect(snippet.trimEnd().split('\n')).toHaveLength(5);
    expect(await readmeSnippet(`${packageDir}/README.md`)).toBe(snippet);
    const before = "import { HumanMessage } from '@langchain/core/messages';";
    const after = `await memory.add('We deploy with \`make ship\` from the main branch');
console.log((await new EngramRetriever({ memory, limit: 5 }).invoke('how do we deploy?')).map((d) => d.pageContent));
await history('s').addMessages([new HumanMessage('hello')]);
console.log(docs.length, (await history('s').getMessages()).length, engramTools(memory).length > 0);
await memory.close();`;
    const run = await runReadmeSnippet(packageDir, snippet, { before, after });
    expect(run.stderr).toBe('');
    expect(run.stdout).toBe("[ 'We deploy with `make ship` from the main branch' ]\n0 1 true\n");
    expect(run.code).toBe(0);
  });
});
