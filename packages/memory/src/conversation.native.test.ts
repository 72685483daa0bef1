/**
 * What framework adapters build on, over a real file: the context blocks (the core block stays byte-identical
 * while the facts do), the model-facing tools including corrections, and a session's logged messages.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemory } from './memory.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'engram-memory-conversation-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('context', () => {
  it('gives a core block that stays byte-identical until a fact changes, and a recall block per query', async () => {
    const memory = await createMemory({ path: join(dir, 'context.db'), embedder: 'deterministic' });
    try {
      await memory.add('The user prefers answers in French');
      await memory.add([
        { role: 'user', content: 'The staging server was rebooted after the kernel update' },
      ]);
      const first = await memory.context('what happened to the staging server?');
      const second = await memory.context('something else entirely: kernel');
      expect(first.core).toContain('The user prefers answers in French');
      expect(second.core).toBe(first.core);
      expect(first.recall).toContain('staging server was rebooted');
      expect((await memory.context(null)).recall).toBe('');
      await memory.add('The user lives in Lyon');
      expect((await memory.context(null)).core).not.toBe(first.core);
    } finally {
      await memory.close();
    }
  });
});

describe('recall without a model', () => {
  it('says no extraction ran, and recall never echoes the question or the entries the prompt holds', async () => {
    const memory = await createMemory({ path: join(dir, 'echo.db'), embedder: 'deterministic' });
    try {
      const old = await memory.add(
        [
          { role: 'user', content: 'I like the Helix editor more than Vim' },
          { role: 'assistant', content: 'Noted: Helix it is.' },
        ],
        { sessionId: 'monday' },
      );
      expect(old.extraction).toBe('noModel');
      const question = 'Which editor do I like?';
      await memory.add(
        [
          { role: 'user', content: question },
          { role: 'assistant', content: 'Let me check which editor you like.' },
        ],
        { sessionId: 'tuesday' },
      );
      const context = await memory.context(question, { sessionId: 'tuesday' });
      expect(context.recall).toContain('Helix editor');
      expect(context.recall).not.toContain(question);
      expect(context.recall).not.toContain('Let me check');
      // With the session's entries counted out of the prompt, they may be recalled again.
      const all = await memory.context(question, { sessionId: 'tuesday', recentMessages: 0 });
      expect(all.recall).toContain('Let me check');
      expect(all.recall).not.toContain(JSON.stringify(question));
    } finally {
      await memory.close();
    }
  });
});

describe('tools', () => {
  it('offers search, remember, get, update, forget and the skills, and runs them for the agent', async () => {
    const memory = await createMemory({
      path: join(dir, 'tools.db'),
      embedder: 'deterministic',
      agentId: 'bot',
    });
    try {
      expect(memory.toolDefinitions.map((t) => t.name)).toEqual(
        expect.arrayContaining([
          'memory_search',
          'memory_remember',
          'memory_update',
          'memory_forget',
          'skill_write',
        ]),
      );
      const remembered = await memory.callTool('memory_remember', {
        content: 'Releases are tagged on Thursdays',
      });
      expect(remembered.ok).toBe(true);
      const [fact] = await memory.list();
      const updated = await memory.callTool('memory_update', {
        id: fact?.id,
        content: 'Releases are tagged on Fridays',
      });
      expect(updated.ok).toBe(true);
      const found = await memory.callTool('memory_search', { query: 'when are releases tagged?' });
      expect(found.text).toContain('Fridays');
      expect(found.text).not.toContain('Thursdays');
      const [current] = await memory.list();
      expect((await memory.callTool('memory_forget', { id: current?.id })).ok).toBe(true);
      expect(await memory.list()).toEqual([]);
      const bad = await memory.callTool('memory_update', { id: 'x' });
      expect(bad.ok).toBe(false);
      expect(bad.text).toMatch(/^Invalid arguments for memory_update/);
      expect((await memory.callTool('memory_forget', { id: 'no-such' })).ok).toBe(false);
    } finally {
      await memory.close();
    }
  });
});

describe('messages', () => {
  it('reads a session back in order, each message once however often the history was resent', async () => {
    const memory = await createMemory({ path: join(dir, 'messages.db'), embedder: 'deterministic' });
    try {
      const history = [
        { role: 'user', content: 'hello' },
        { role: 'assistant', content: 'hi, how can I help?' },
      ] as const;
      await memory.add(history, { sessionId: 'chat-1' });
      await memory.add([...history, { role: 'user', content: 'book a table' }], { sessionId: 'chat-1' });
      const logged = await memory.messages({ sessionId: 'chat-1' });
      expect(logged.map((m) => [m.seq, m.role, m.content])).toEqual([
        [1, 'user', 'hello'],
        [2, 'assistant', 'hi, how can I help?'],
        [3, 'user', 'book a table'],
      ]);
      expect(await memory.messages({ sessionId: 'other' })).toEqual([]);
      expect((await memory.messages({ sessionId: 'chat-1', limit: 1 })).map((m) => m.content)).toEqual([
        'book a table',
      ]);
      // Appended as given: the same message twice in a row is two messages.
      await memory.add([{ role: 'user', content: 'book a table' }], {
        sessionId: 'chat-1',
        skipLogged: false,
      });
      expect((await memory.messages({ sessionId: 'chat-1' })).map((m) => m.content).slice(-2)).toEqual([
        'book a table',
        'book a table',
      ]);
    } finally {
      await memory.close();
    }
  });
});

describe('tool calls and results in the log', () => {
  it('logs them as tool_call and tool_result events with the tool name, each id once however often resent', async () => {
    const memory = await createMemory({ path: join(dir, 'tools.db'), embedder: 'deterministic' });
    try {
      const call = {
        role: 'assistant',
        type: 'tool_call',
        toolName: 'read_file',
        id: 'call-1',
        content: '{"path":"src/app.ts"}',
      } as const;
      const result = {
        role: 'tool',
        type: 'tool_result',
        toolName: 'read_file',
        id: 'call-1',
        content: 'export const port = 8080;',
      } as const;
      const turn = [{ role: 'user', content: 'which port does the app use?' } as const, call, result];
      expect((await memory.add(turn, { sessionId: 's' })).events).toBe(3);
      // A retry that sends the call and its result again, after another message: nothing is logged twice.
      await memory.add([{ role: 'assistant', content: 'Port 8080.' }], { sessionId: 's' });
      expect((await memory.add([call, result], { sessionId: 's', skipLogged: false })).events).toBe(0);
      const logged = await memory.messages({ sessionId: 's' });
      expect(logged.map((m) => [m.type, m.role, m.toolName, m.id])).toEqual([
        ['message', 'user', null, null],
        ['tool_call', 'assistant', 'read_file', 'call-1'],
        ['tool_result', 'tool', 'read_file', 'call-1'],
        ['message', 'assistant', null, null],
      ]);
      expect(logged[1]?.content).toBe('{"path":"src/app.ts"}');
      // The call is remembered as `tool <name> <arguments>`, tagged with the path it names.
      const [remembered] = await memory.list({
        kinds: ['event'],
        tags: ['tool:read_file', 'type:tool_call'],
      });
      expect(remembered?.content).toBe('tool read_file {"path":"src/app.ts"}');
      expect(remembered?.tags).toContain('file:src/app.ts');
    } finally {
      await memory.close();
    }
  });
});

describe('clearMessages', () => {
  it('empties the history that messages() reads; new messages follow; the log and its memories stay', async () => {
    const memory = await createMemory({ path: join(dir, 'clear.db'), embedder: 'deterministic' });
    try {
      const history = [
        { role: 'user', content: 'the invoice number is 4471' },
        { role: 'assistant', content: 'noted' },
      ] as const;
      await memory.add(history, { sessionId: 'c' });
      await memory.clearMessages({ sessionId: 'c' });
      await memory.clearMessages({ sessionId: 'c' });
      expect(await memory.messages({ sessionId: 'c' })).toEqual([]);
      // A resent history after the clear is a new history: it is logged again, once.
      await memory.add(history, { sessionId: 'c' });
      await memory.add(history, { sessionId: 'c' });
      expect((await memory.messages({ sessionId: 'c' })).map((m) => [m.seq, m.content])).toEqual([
        [4, 'the invoice number is 4471'],
        [5, 'noted'],
      ]);
      const found = (await memory.search('invoice number 4471', { kinds: ['event'] })).map((h) => h.content);
      // Both logged copies stay and come first; the reply logged next to each follows as its neighbour in the
      // conversation (the retriever's conversation scoring).
      expect(found.slice(0, 2)).toEqual(['the invoice number is 4471', 'the invoice number is 4471']);
      expect(found.slice(2)).toEqual(['noted', 'noted']);
      // Another session and an empty one are untouched.
      await memory.clearMessages({ sessionId: 'never-used' });
      expect(await memory.messages({ sessionId: 'never-used' })).toEqual([]);
    } finally {
      await memory.close();
    }
  });
});
