/**
 * Users are boundaries, as a user of the built `engram` CLI sees them: one agent, two users (Alice and Bob) in
 * one real SQLite file, each command run as a child process. Bob never sees, changes or forgets Alice's
 * memory; `list`, `update`, `forget` and `history` round-trip a memory through its versions and tombstone.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type ChildRun, runNode } from '@engram/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
/** Spawning the CLI loads its package graph: each test states its own budget. */
const SPAWNS = { timeout: 120_000 };

const ALICE_FACT = 'Alice keeps her sourdough starter in the blue jar';
const AGENT_FACT = 'The bakery opens at seven every morning';

let dir: string;
let db: string;
let aliceId: string;
let agentId: string;

function cli(args: readonly string[]): Promise<ChildRun> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !key.startsWith('ENGRAM_OPENAI_') && key !== 'ENGRAM_KEY') env[key] = value;
  }
  return runNode(CLI, [...args, '--db', db], {
    cwd: dir,
    env: { ...env, ENGRAM_EMBEDDER: 'deterministic', NO_COLOR: '1' },
  });
}

async function json<T>(args: readonly string[]): Promise<T> {
  const run = await cli([...args, '--json']);
  expect(run.stderr).toBe('');
  expect(run.code).toBe(0);
  return JSON.parse(run.stdout) as T;
}

interface Listed {
  agent: string;
  user: string | null;
  memories: { id: string; content: string; userId: string | null; lifecycle: string }[];
  next: string | null;
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'engram-cli-users-'));
  db = join(dir, 'users.db');
  aliceId = (await json<{ id: string }>(['remember', ALICE_FACT, '--agent', 'baker', '--user', 'alice'])).id;
  agentId = (await json<{ id: string }>(['remember', AGENT_FACT, '--agent', 'baker'])).id;
}, 120_000);

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('engram with --user: Bob never sees Alice', () => {
  it('remember --user writes the user; --json says whose it is', SPAWNS, async () => {
    const again = await json<{ agent: string; user: string; action: string; id: string }>([
      'remember',
      ALICE_FACT,
      '--agent',
      'baker',
      '--user',
      'alice',
    ]);
    expect(again).toMatchObject({ agent: 'baker', user: 'alice', action: 'duplicate', id: aliceId });
    const got = await json<{ userId: string | null; content: string }>([
      'get',
      aliceId,
      '--agent',
      'baker',
      '--user',
      'alice',
    ]);
    expect(got).toMatchObject({ userId: 'alice', content: ALICE_FACT });
  });

  it(
    "search --user finds the agent's own memories and the user's, never another user's",
    SPAWNS,
    async () => {
      type Found = { user: string | null; results: { id: string }[] };
      const bob = await json<Found>([
        'search',
        'sourdough starter blue jar',
        '--agent',
        'baker',
        '--user',
        'bob',
      ]);
      expect(bob.user).toBe('bob');
      expect(bob.results.map((r) => r.id)).not.toContain(aliceId);
      const alice = await json<Found>([
        'search',
        'sourdough starter blue jar',
        '--agent',
        'baker',
        '--user',
        'alice',
      ]);
      expect(alice.results.map((r) => r.id)).toContain(aliceId);
      const bobShared = await json<Found>([
        'search',
        'bakery opens seven',
        '--agent',
        'baker',
        '--user',
        'bob',
      ]);
      expect(bobShared.results.map((r) => r.id)).toContain(agentId);
    },
  );

  it('list --user lists the scope; without it, the whole agent', SPAWNS, async () => {
    const bob = await json<Listed>(['list', '--agent', 'baker', '--user', 'bob']);
    expect(bob).toMatchObject({ agent: 'baker', user: 'bob', next: null });
    expect(bob.memories.map((m) => m.id)).toEqual([agentId]);
    const alice = await json<Listed>(['list', '--agent', 'baker', '--user', 'alice']);
    expect(alice.memories.map((m) => m.id).sort()).toEqual([aliceId, agentId].sort());
    const all = await json<Listed>(['list', '--agent', 'baker']);
    expect(all.memories.map((m) => m.id).sort()).toEqual([aliceId, agentId].sort());
  });

  it(
    "get, update, forget and history of Alice's memory as Bob: not found, exit 1, nothing changed",
    SPAWNS,
    async () => {
      for (const args of [
        ['get', aliceId],
        ['update', aliceId, 'Bob was here'],
        ['forget', aliceId, '--reason', 'Bob says so'],
        ['history', aliceId],
      ]) {
        const run = await cli([...args, '--agent', 'baker', '--user', 'bob']);
        expect(run.code, args[0]).toBe(1);
        expect(run.stdout, args[0]).toBe('');
        expect(run.stderr, args[0]).toMatch(
          new RegExp(`^engram ${args[0]}: .*\\(ENGRAM_CLI_NOT_FOUND\\)\\n$`),
        );
        expect(run.stderr, args[0]).not.toContain('sourdough');
      }
      const still = await json<{ content: string; lifecycle: string }>([
        'get',
        aliceId,
        '--agent',
        'baker',
        '--user',
        'alice',
      ]);
      expect(still).toMatchObject({ content: ALICE_FACT, lifecycle: 'active' });
    },
  );

  it("get <pointer> --user hides another user's archived events", SPAWNS, async () => {
    const events = join(dir, 'alice-chat.jsonl');
    await writeFile(
      events,
      `${[
        { seq: 1, type: 'message', role: 'user', content: 'My locker code is 4417' },
        { seq: 2, type: 'message', role: 'assistant', content: 'Noted.' },
      ]
        .map((e) => JSON.stringify(e))
        .join('\n')}\n`,
    );
    const ingested = await json<{ user: string; totals: { appended: number } }>([
      'ingest',
      events,
      '--agent',
      'baker',
      '--user',
      'alice',
      '--session',
      'chat-1',
    ]);
    expect(ingested).toMatchObject({ user: 'alice', totals: { appended: 2 } });
    const asAlice = await json<{ content: string; userId: string }[]>([
      'get',
      'session/chat-1#1-2',
      '--agent',
      'baker',
      '--user',
      'alice',
    ]);
    expect(asAlice.map((e) => [e.content, e.userId])).toEqual([
      ['My locker code is 4417', 'alice'],
      ['Noted.', 'alice'],
    ]);
    const asBob = await cli(['get', 'session/chat-1#1-2', '--agent', 'baker', '--user', 'bob']);
    expect(asBob.code).toBe(1);
    expect(asBob.stderr).toMatch(/\(ENGRAM_CLI_NOT_FOUND\)\n$/);
    expect(asBob.stdout).toBe('');
    const bobSearch = await json<{ results: { content: string }[] }>([
      'search',
      'locker code',
      '--agent',
      'baker',
      '--user',
      'bob',
    ]);
    expect(JSON.stringify(bobSearch.results)).not.toContain('4417');
  });

  it(
    "export --user carries the agent's own memories and the user's, never another user's",
    SPAWNS,
    async () => {
      const run = await cli(['export', '--agent', 'baker', '--user', 'bob']);
      expect(run.code).toBe(0);
      const records = run.stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { type: string; row?: { id?: string; user_id?: string | null } });
      const memories = records.filter((r) => r.type === 'memory').map((r) => r.row?.id);
      expect(memories).toEqual([agentId]);
      expect(run.stdout).not.toContain('sourdough');
      expect(run.stdout).not.toContain('4417');
      const end = records[records.length - 1] as {
        type: string;
        counts?: { memories: number; events: number };
      };
      expect(end).toMatchObject({ type: 'end', counts: { memories: 1, events: 0 } });
      const whole = await cli(['export', '--agent', 'baker']);
      expect(whole.stdout).toContain('sourdough');
    },
  );

  it('maintain --user runs a pass for that user and says so', SPAWNS, async () => {
    const pass = await json<{ user: string; agents: { agent: string; report: unknown }[] }>([
      'maintain',
      '--agent',
      'baker',
      '--user',
      'bob',
    ]);
    expect(pass.user).toBe('bob');
    expect(pass.agents.map((a) => a.agent)).toEqual(['baker']);
    expect(pass.agents[0]?.report).not.toBeNull();
  });

  it('refuses an option a command would ignore: exit 2, a reason and the usage line', SPAWNS, async () => {
    for (const args of [
      ['drain', '--user', 'alice'],
      ['export', '--user', 'alice'],
    ]) {
      const run = await cli(args);
      expect(run.code, args.join(' ')).toBe(2);
      const [message, usage] = run.stderr.split('\n');
      expect(message, args.join(' ')).toMatch(
        new RegExp(`^engram ${args[0]}: (--\\w+ is not taken here: |--user needs --agent)`),
      );
      expect(usage).toMatch(new RegExp(`^Usage: engram ${args[0]} `));
    }
  });
});

describe('engram remember and search with --session', () => {
  it('a fact remembered in a session is found by a search of that session only', SPAWNS, async () => {
    const scope = ['--agent', 'trips', '--user', 'dana'];
    const remembered = await json<{ id: string }>([
      'remember',
      'Dana booked the ferry to Hydra',
      '--session',
      'trip-1',
      ...scope,
    ]);
    await json(['remember', 'Dana booked the ferry to Paros', '--session', 'trip-2', ...scope]);
    const got = await json<{ sessionId: string | null; userId: string | null }>([
      'get',
      remembered.id,
      ...scope,
    ]);
    expect(got).toMatchObject({ sessionId: 'trip-1', userId: 'dana' });
    const hits = await json<{ results: { id: string }[] }>([
      'search',
      'ferry',
      '--session',
      'trip-1',
      ...scope,
    ]);
    expect(hits.results.map((r) => r.id)).toEqual([remembered.id]);
    const exported = await cli(['export', '--session', 'trip-1', ...scope]);
    expect(exported.code).toBe(0);
    const records = exported.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; row?: { content?: string } });
    const texts = records.flatMap((r) => (r.type === 'memory' ? [r.row?.content] : []));
    expect(texts).toEqual(['Dana booked the ferry to Hydra']);
    expect(records.at(-1)).toMatchObject({ type: 'end', counts: { memories: 1, skills: 0 } });
  });
});

describe('engram list, update, forget and history', () => {
  it('pages with --limit and --after; --json gives the next page', SPAWNS, async () => {
    for (const fact of ['Rye loaves need a longer proof', 'Croissants are laminated twice']) {
      await json(['remember', fact, '--agent', 'pager']);
    }
    const first = await json<Listed>(['list', '--agent', 'pager', '--limit', '1']);
    expect(first.memories).toHaveLength(1);
    expect(first.next).toBe(first.memories[0]?.id);
    const second = await json<Listed>([
      'list',
      '--agent',
      'pager',
      '--limit',
      '1',
      '--after',
      first.next ?? '',
    ]);
    expect(second.memories).toHaveLength(1);
    expect(second.memories[0]?.id).not.toBe(first.memories[0]?.id);
    const last = await json<Listed>([
      'list',
      '--agent',
      'pager',
      '--limit',
      '5',
      '--after',
      second.next ?? '',
    ]);
    expect(last).toMatchObject({ memories: [], next: null });
    const text = await cli(['list', '--agent', 'pager', '--limit', '1']);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^1 memory for agent pager\n/);
    expect(text.stdout).toContain(`--after ${first.next}`);
  });

  it(
    'update makes a new version, forget leaves a tombstone, history shows both in order',
    SPAWNS,
    async () => {
      const { id } = await json<{ id: string }>([
        'remember',
        'The oven runs at 220 degrees',
        '--agent',
        'oven',
        '--user',
        'carol',
      ]);
      const scope = ['--agent', 'oven', '--user', 'carol'];
      const updated = await json<{
        ok: boolean;
        id: string;
        previousId: string;
        action: string;
        user: string;
      }>(['update', id, 'The oven runs at 230 degrees', '--reason', 'new thermostat', ...scope]);
      expect(updated).toMatchObject({ ok: true, previousId: id, action: 'updated', user: 'carol' });
      expect(updated.id).not.toBe(id);
      const current = await json<{ content: string; userId: string }>(['get', updated.id, ...scope]);
      expect(current).toMatchObject({ content: 'The oven runs at 230 degrees', userId: 'carol' });

      const stale = await cli(['update', id, 'The oven runs at 240 degrees', ...scope]);
      expect(stale.code).toBe(1);
      expect(stale.stderr).toMatch(/\(ENGRAM_CLI_NOT_FOUND\)\n$/);

      type History = {
        id: string;
        versions: {
          id: string;
          lifecycle: string;
          content?: string;
          change?: { by: string; reason: string };
          forgottenBy?: string;
          reason?: string;
        }[];
      };
      const before = await json<History>(['history', id, ...scope]);
      expect(before.versions.map((v) => [v.id, v.lifecycle, v.content])).toEqual([
        [id, 'superseded', 'The oven runs at 220 degrees'],
        [updated.id, 'active', 'The oven runs at 230 degrees'],
      ]);
      expect(before.versions[0]?.change).toMatchObject({ by: 'cli', reason: 'new thermostat' });
      expect(current).toMatchObject({ embeddingState: 'ready' });

      const forgotten = await json<{ ok: boolean; forgotten: string[]; mode: string }>([
        'forget',
        updated.id,
        '--reason',
        'asked to forget',
        ...scope,
      ]);
      expect(forgotten.ok).toBe(true);
      expect(forgotten.forgotten.sort()).toEqual([id, updated.id].sort());

      const after = await json<History>(['history', updated.id, ...scope]);
      expect(after.versions.map((v) => [v.id, v.lifecycle])).toEqual([
        [id, 'forgotten'],
        [updated.id, 'forgotten'],
      ]);
      expect(after.versions[1]).toMatchObject({ forgottenBy: 'cli', reason: 'asked to forget' });
      expect(JSON.stringify(after)).not.toContain('degrees');

      const gone = await cli(['get', updated.id, ...scope]);
      expect(gone.code).toBe(1);
      const twice = await cli(['forget', updated.id, ...scope]);
      expect(twice.code).toBe(1);
      expect(twice.stderr).toMatch(/^engram forget: .*\(ENGRAM_CLI_NOT_FOUND\)\n$/);
      const text = await cli(['history', updated.id, ...scope]);
      expect(text.code).toBe(0);
      expect(text.stdout).toMatch(/^2 versions of memory /);
      expect(text.stdout).toContain('forgotten');
    },
  );

  it('a memory that never existed is not found for every command over an id', SPAWNS, async () => {
    for (const args of [
      ['get', 'no-such-id'],
      ['update', 'no-such-id', 'x'],
      ['forget', 'no-such-id'],
      ['history', 'no-such-id'],
    ]) {
      const run = await cli([...args, '--agent', 'baker']);
      expect(run.code, args[0]).toBe(1);
      expect(run.stderr, args[0]).toMatch(/\(ENGRAM_CLI_NOT_FOUND\)\n$/);
    }
  });

  it('each new command has --help naming --user and its options', SPAWNS, async () => {
    for (const [name, option] of [
      ['list', '--after <id>'],
      ['update', '--reason <text>'],
      ['forget', '--reason <text>'],
      ['history', '--user <id>'],
    ]) {
      const run = await cli([name as string, '--help']);
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(new RegExp(`^Usage: engram ${name} `));
      expect(run.stdout).toContain(option);
      expect(run.stdout).toContain('--user <id>');
    }
  });
});
