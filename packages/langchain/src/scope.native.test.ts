/**
 * Users are boundaries in LangChain too: one agent serves Alice and Bob through the retriever, the message
 * history and the tools, each scoped by `userId`, on a real memory file. The assertions are on what each user's
 * retriever returns, what each history logs and reads, and what each user's tools find.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createMemory, type Memory } from '@engram/memory';
import { readmeSnippet, runReadmeSnippet } from '@engram/test-support';
import { AIMessage, HumanMessage } from '@langchain/core/messages';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { EngramChatMessageHistory, type EngramChatMessageHistoryInput } from './history.js';
import { EngramRetriever, type EngramRetrieverInput } from './retriever.js';
import type { EngramScope } from './scope.js';
import { engramTools } from './tools.js';

let dir: string;
let memory: Memory;
let n = 0;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'engram-langchain-scope-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});
beforeEach(async () => {
  n += 1;
  memory = await createMemory({ path: join(dir, `m${n}.db`), embedder: 'deterministic', agentId: 'helper' });
});
afterEach(async () => {
  await memory.close();
});

const ACCOUNT = 'My bank account number is 4711-0815-2342.';

describe('userId in the retriever, the history and the tools', () => {
  it("Bob's retriever never returns Alice's documents; Alice's finds hers, and the agent's own serve both", async () => {
    await memory.add(ACCOUNT, { userId: 'alice', kind: 'fact' });
    await memory.add('The bank support line opens at 8am', { kind: 'fact' });
    const bob = new EngramRetriever({ memory, userId: 'bob', limit: 5 });
    const alice = new EngramRetriever({ memory, userId: 'alice', limit: 5 });
    const bobDocs = await bob.invoke('what is my bank account number?');
    expect(bobDocs.map((d) => d.pageContent)).toEqual(['The bank support line opens at 8am']);
    expect(JSON.stringify(bobDocs)).not.toContain('4711');
    const aliceDocs = await alice.invoke('what is my bank account number?');
    expect(aliceDocs.map((d) => d.pageContent)).toContain(ACCOUNT);
    expect(aliceDocs.find((d) => d.pageContent === ACCOUNT)?.metadata.userId).toBe('alice');
  });

  it("Bob's history logs under bob and reads Bob's view of the session; Alice's messages never reach it", async () => {
    const alice = new EngramChatMessageHistory({ memory, userId: 'alice', sessionId: 'support' });
    const bob = new EngramChatMessageHistory({ memory, userId: 'bob', sessionId: 'support' });
    await alice.addMessages([new HumanMessage(ACCOUNT), new AIMessage('Noted.')]);
    await bob.addMessages([
      new HumanMessage('What is my bank account number?'),
      new AIMessage('I do not know.'),
    ]);
    const logged = await memory.messages({ userId: 'bob', sessionId: 'support' });
    expect(logged.map((m) => [m.userId, m.content])).toEqual([
      ['bob', 'What is my bank account number?'],
      ['bob', 'I do not know.'],
    ]);
    expect((await bob.getMessages()).map((m) => m.content)).toEqual([
      'What is my bank account number?',
      'I do not know.',
    ]);
    expect((await alice.getMessages()).map((m) => m.content)).toEqual([ACCOUNT, 'Noted.']);
    // Bob's clear() ends Bob's history, not Alice's.
    await bob.clear();
    expect(await bob.getMessages()).toEqual([]);
    expect(await alice.getMessages()).toHaveLength(2);
    // Alice's messages are her memories: her retriever recalls them, Bob's does not.
    const query = 'bank account number';
    expect(JSON.stringify(await new EngramRetriever({ memory, userId: 'bob' }).invoke(query))).not.toContain(
      '4711',
    );
    expect(JSON.stringify(await new EngramRetriever({ memory, userId: 'alice' }).invoke(query))).toContain(
      '4711',
    );
  });

  it("tools scoped to Bob cannot find Alice's memory, and what they remember is Bob's", async () => {
    const added = await memory.add(ACCOUNT, { userId: 'alice', kind: 'fact' });
    const id = added.added[0]?.id;
    const tool = (scope: EngramScope, name: string) =>
      engramTools(memory, scope).find((t) => t.name === name);
    expect(
      await tool({ userId: 'bob' }, 'memory_search')?.invoke({ query: 'bank account number' }),
    ).not.toContain('4711');
    expect(await tool({ userId: 'bob' }, 'memory_get')?.invoke({ id })).not.toContain('4711');
    expect(
      await tool({ userId: 'alice' }, 'memory_search')?.invoke({ query: 'bank account number' }),
    ).toContain('4711');
    await tool({ userId: 'bob' }, 'memory_remember')?.invoke({ content: 'Bob prefers tea' });
    expect((await memory.list({ kinds: ['fact'] })).map((m) => [m.userId, m.content]).sort()).toEqual([
      ['alice', ACCOUNT],
      ['bob', 'Bob prefers tea'],
    ]);
  });

  it('options are strict: a misspelt or non-string scope key is a typed error naming the key', () => {
    const refused = (make: () => unknown, message: string) =>
      expect(make).toThrow(expect.objectContaining({ code: 'ENGRAM_MEMORY_INVALID_INPUT', message }));
    refused(
      () => new EngramRetriever({ memory, user_id: 'bob' } as unknown as EngramRetrieverInput),
      'EngramRetriever input has an unknown option "user_id" (did you mean "userId"?)',
    );
    refused(
      () => new EngramRetriever({ memory, sessionId: 's' } as unknown as EngramRetrieverInput),
      'EngramRetriever input has an unknown option "sessionId"',
    );
    refused(
      () => new EngramRetriever({ memory, userId: undefined } as unknown as EngramRetrieverInput),
      'EngramRetriever input.userId must be a string (leave the key out for the default)',
    );
    refused(
      () =>
        new EngramChatMessageHistory({
          memory,
          sessionId: 's',
          user: 'bob',
        } as unknown as EngramChatMessageHistoryInput),
      'EngramChatMessageHistory input has an unknown option "user" (did you mean "userId"?)',
    );
    refused(
      () => engramTools(memory, { userID: 'bob' } as unknown as EngramScope),
      'engramTools scope has an unknown option "userID" (did you mean "userId"?)',
    );
  });
});

describe('the two-user README example', () => {
  it("runs: Bob's retriever finds none of Alice's words, Alice's finds them", {
    timeout: 60_000,
  }, async () => {
    const packageDir = fileURLToPath(new URL('..', import.meta.url));
    const snippet = await readmeSnippet(`${packageDir}/README.md`, '## One agent, many users');
    expect(snippet.trimEnd().split('\n').length).toBeLessThan(15);
    const after = `console.log(bobDocs.map((d) => d.pageContent), aliceDocs.map((d) => d.pageContent));
await memory.close();`;
    const run = await runReadmeSnippet(packageDir, snippet, { after });
    expect(run.stderr).toBe('');
    expect(run.stdout).toBe("[] [ 'My bank account number is 4711-0815-2342.' ]\n");
    expect(run.code).toBe(0);
  });
});
