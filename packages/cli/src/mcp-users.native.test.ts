/**
 * `engram mcp --agent A --user U` as an MCP client sees it: the official SDK's `Client` over
 * `StdioClientTransport`, driving the built CLI on a real SQLite file that holds Alice's memories. A server
 * started for Bob never returns Alice's memory (search, get by id and by pointer), cannot update or forget it,
 * and no argument of a tool call (`userId`, `user_id`, `agentId`, `__proto__`) widens its scope.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runNode } from '@engram/test-support';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
/** Each test talks to server processes: a stated budget, not vitest's default. */
const CALLS = { timeout: 120_000 };

const ALICE_FACT = 'Alice stores the spare key under the green flowerpot';
const AGENT_FACT = 'The studio wifi network is called lighthouse';

let dir: string;
let db: string;
let aliceId: string;
let bob: Client;
let alice: Client;

function childEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !key.startsWith('ENGRAM_OPENAI_') && key !== 'ENGRAM_KEY') env[key] = value;
  }
  return { ...env, ENGRAM_EMBEDDER: 'deterministic', NO_COLOR: '1' };
}

async function cli(args: readonly string[]): Promise<unknown> {
  const run = await runNode(CLI, [...args, '--db', db, '--json'], { cwd: dir, env: childEnv() });
  expect(run.code, run.stderr).toBe(0);
  return JSON.parse(run.stdout);
}

async function serverFor(user: string): Promise<Client> {
  const client = new Client({ name: `engram-users-${user}`, version: '0.0.0' });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [CLI, 'mcp', '--db', db, '--agent', 'assistant', '--user', user],
      env: childEnv(),
      stderr: 'ignore',
    }),
  );
  return client;
}

interface Answer {
  isError: boolean;
  text: string;
  structured: Record<string, unknown>;
}

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<Answer> {
  const result = await client.callTool({ name, arguments: args });
  const content = result.content as { type: string; text: string }[];
  return {
    isError: result.isError === true,
    text: content.map((c) => c.text).join('\n'),
    structured: (result.structuredContent ?? {}) as Record<string, unknown>,
  };
}

/** Nothing of Alice's memory or events in an answer. */
function expectNothingOfAlice(answer: Answer): void {
  const all = `${answer.text}\n${JSON.stringify(answer.structured)}`;
  expect(all).not.toContain(aliceId);
  expect(all).not.toContain('flowerpot');
  expect(all).not.toContain('8812');
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'engram-mcp-users-'));
  db = join(dir, 'memory.db');
  aliceId = (
    (await cli(['remember', ALICE_FACT, '--agent', 'assistant', '--user', 'alice'])) as { id: string }
  ).id;
  await cli(['remember', AGENT_FACT, '--agent', 'assistant']);
  const events = join(dir, 'alice.jsonl');
  await writeFile(
    events,
    `${[
      { seq: 1, type: 'message', role: 'user', content: 'My gym locker code is 8812' },
      { seq: 2, type: 'message', role: 'assistant', content: 'I will remember the locker code.' },
    ]
      .map((e) => JSON.stringify(e))
      .join('\n')}\n`,
  );
  await cli(['ingest', events, '--agent', 'assistant', '--user', 'alice', '--session', 'chat-a']);
  [bob, alice] = await Promise.all([serverFor('bob'), serverFor('alice')]);
}, 180_000);

afterAll(async () => {
  await Promise.all([bob?.close(), alice?.close()]);
  await rm(dir, { recursive: true, force: true });
});

describe('engram mcp --user: the scope is fixed by the server', () => {
  it('marks each tool truthfully: reads are read-only, remember is not destructive', CALLS, async () => {
    const { tools } = await bob.listTools();
    const hints = Object.fromEntries(
      tools.map((t) => [
        t.name,
        [t.annotations?.readOnlyHint, t.annotations?.destructiveHint, t.annotations?.idempotentHint],
      ]),
    );
    expect(hints).toEqual({
      memory_search: [true, false, true],
      memory_get: [true, false, true],
      skill_list: [true, false, true],
      memory_remember: [false, false, true],
      memory_update: [false, true, true],
      memory_forget: [false, true, true],
      skill_write: [false, true, true],
      skill_delete: [false, true, true],
    });
    const get = tools.find((t) => t.name === 'memory_get');
    expect(Object.keys((get?.inputSchema.properties ?? {}) as object)).toEqual(
      expect.arrayContaining(['id', 'pointer']),
    );
  });

  it("memory_search as Bob never returns Alice's memory or events; as Alice it does", CALLS, async () => {
    for (const query of ['spare key green flowerpot', 'gym locker code']) {
      const asBob = await call(bob, 'memory_search', { query });
      expect(asBob.isError).toBe(false);
      expectNothingOfAlice(asBob);
    }
    const asAlice = await call(alice, 'memory_search', { query: 'spare key green flowerpot' });
    expect((asAlice.structured.results as { id: string }[]).map((r) => r.id)).toContain(aliceId);
    const shared = await call(bob, 'memory_search', { query: 'studio wifi network' });
    expect(shared.text).toContain('lighthouse');
  });

  it(
    "memory_get as Bob: Alice's memory by id, by memory pointer and her session are not found",
    CALLS,
    async () => {
      for (const args of [
        { id: aliceId },
        { pointer: `memory/${aliceId}#0-10` },
        { pointer: 'session/chat-a#1-2' },
      ]) {
        const asBob = await call(bob, 'memory_get', args);
        expect(asBob.isError, JSON.stringify(args)).toBe(true);
        expectNothingOfAlice(asBob);
      }
      const byId = await call(alice, 'memory_get', { id: aliceId });
      expect(byId.isError).toBe(false);
      expect(byId.text).toContain('flowerpot');
      const session = await call(alice, 'memory_get', { pointer: 'session/chat-a#1-2' });
      expect(session.text).toContain('8812');
    },
  );

  it("memory_update and memory_forget as Bob cannot touch Alice's memory", CALLS, async () => {
    const update = await call(bob, 'memory_update', {
      id: aliceId,
      content: 'The key is gone',
      reason: 'Bob',
    });
    expect(update.isError).toBe(true);
    const forget = await call(bob, 'memory_forget', { id: aliceId, reason: 'Bob' });
    expect(forget.isError).toBe(true);
    const still = await call(alice, 'memory_get', { id: aliceId });
    expect(still.isError).toBe(false);
    expect(still.text).toContain(ALICE_FACT);
  });

  it('refuses arguments that name a user or an agent, and never widens the scope', CALLS, async () => {
    const widen: Record<string, unknown>[] = [
      { query: 'spare key green flowerpot', userId: 'alice' },
      { query: 'spare key green flowerpot', user_id: 'alice' },
      { query: 'spare key green flowerpot', agentId: 'assistant' },
      JSON.parse('{"query":"spare key green flowerpot","__proto__":{"userId":"alice"}}') as Record<
        string,
        unknown
      >,
    ];
    for (const args of widen) {
      const answer = await call(bob, 'memory_search', args);
      expectNothingOfAlice(answer);
    }
    for (const key of ['userId', 'user_id', 'agentId']) {
      const answer = await call(bob, 'memory_search', { query: 'spare key', [key]: 'alice' });
      expect(answer.isError, key).toBe(true);
    }
    const byArgs = await call(bob, 'memory_get', { id: aliceId, userId: 'alice' });
    expect(byArgs.isError).toBe(true);
    expectNothingOfAlice(byArgs);
    const write = await call(bob, 'memory_remember', {
      content: 'Planted by Bob for Alice',
      userId: 'alice',
    });
    expect(write.isError).toBe(true);
    const seen = await call(alice, 'memory_search', { query: 'Planted by Bob for Alice' });
    expect(seen.text).not.toContain('Planted by Bob');
  });

  it(
    "what Bob remembers is Bob's: Alice never sees it, and he cannot change shared skills",
    CALLS,
    async () => {
      const remembered = await call(bob, 'memory_remember', { content: 'Bob takes his coffee black' });
      expect(remembered.structured).toMatchObject({ ok: true, action: 'remembered' });
      const id = remembered.structured.id as string;
      const stored = (await cli(['get', id, '--agent', 'assistant', '--user', 'bob'])) as { userId: string };
      expect(stored.userId).toBe('bob');
      const asAlice = await call(alice, 'memory_get', { id });
      expect(asAlice.isError).toBe(true);
      const skill = await call(bob, 'skill_write', { name: 'brew', description: 'Brewing.', content: 'x' });
      expect(skill.isError).toBe(true);
    },
  );

  it("serves each user the core block of the agent's facts and that user's only", CALLS, async () => {
    const text = async (client: Client): Promise<string> =>
      ((await client.readResource({ uri: 'engram://core' })).contents[0] as { text: string }).text;
    const bobCore = await text(bob);
    expect(bobCore).toContain('lighthouse');
    expect(bobCore).not.toContain('flowerpot');
    const aliceCore = await text(alice);
    expect(aliceCore).toContain('lighthouse');
    expect(aliceCore).toContain('flowerpot');
    expect(aliceCore).not.toContain('coffee black');
  });
});
