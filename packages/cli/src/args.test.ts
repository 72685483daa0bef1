import { describe, expect, it } from 'vitest';
import { parseCommandLine } from './args.js';
import { commandHelp, mainHelp, usageLine } from './args-help.js';
import { COMMAND_NAMES, type Command, DEFAULT_PORT, type ParsedCommandLine } from './args-spec.js';

const CWD = '/work/project';

function run(argv: readonly string[]): Command {
  const parsed = parseCommandLine(argv, CWD);
  if (!parsed.ok || parsed.kind !== 'run')
    throw new Error(`expected a command, got ${JSON.stringify(parsed)}`);
  return parsed.command;
}

function failure(argv: readonly string[]): Extract<ParsedCommandLine, { ok: false }> {
  const parsed = parseCommandLine(argv, CWD);
  if (parsed.ok) throw new Error(`expected a failure, got ${JSON.stringify(parsed)}`);
  return parsed;
}

describe('parseCommandLine: help and version', () => {
  it('prints the main help for --help, -h and help, listing every command', () => {
    for (const argv of [['--help'], ['-h'], ['help']]) {
      const parsed = parseCommandLine(argv, CWD);
      expect(parsed).toEqual({ ok: true, kind: 'help', text: mainHelp() });
    }
    for (const name of COMMAND_NAMES) expect(mainHelp()).toContain(`  ${name} `);
  });

  it('gives every command its own help, by --help, -h or help <command>, even next to invalid options', () => {
    for (const name of COMMAND_NAMES) {
      const text = commandHelp(name);
      expect(text.startsWith(`Usage: engram ${name}`)).toBe(true);
      expect(text).toContain('--db <file>');
      expect(text).toContain('Examples:');
      expect(parseCommandLine([name, '--help'], CWD)).toEqual({ ok: true, kind: 'help', text });
      expect(parseCommandLine([name, '--bogus', '-h'], CWD)).toEqual({ ok: true, kind: 'help', text });
      expect(parseCommandLine(['help', name], CWD)).toEqual({ ok: true, kind: 'help', text });
    }
  });

  it('treats --help after -- as a positional argument', () => {
    expect(run(['search', '--', '--help'])).toMatchObject({ name: 'search', query: '--help' });
  });

  it('answers --version and -v', () => {
    expect(parseCommandLine(['--version'], CWD)).toEqual({ ok: true, kind: 'version' });
    expect(parseCommandLine(['-v'], CWD)).toEqual({ ok: true, kind: 'version' });
  });
});

describe('parseCommandLine: defaults', () => {
  it('demo opens .engram/demo.db in the working directory, serves on 4319 unless --no-serve', () => {
    expect(run(['demo'])).toEqual({
      name: 'demo',
      db: '/work/project/.engram/demo.db',
      port: DEFAULT_PORT,
      serve: true,
    });
    expect(run(['demo', '--no-serve', '--port', '0'])).toEqual({
      name: 'demo',
      db: '/work/project/.engram/demo.db',
      port: 0,
      serve: false,
    });
  });

  it('other commands default to .engram/engram.db and the default agent', () => {
    expect(run(['search', 'deploy'])).toEqual({
      name: 'search',
      db: '/work/project/.engram/engram.db',
      agent: 'default',
      user: null,
      session: null,
      query: 'deploy',
      limit: 5,
      tags: [],
      explain: false,
      json: false,
      agentDefaulted: true,
    });
    expect(run(['drain'])).toEqual({
      name: 'drain',
      db: '/work/project/.engram/engram.db',
      agent: null,
      json: false,
    });
    expect(run(['health', '--json'])).toEqual({
      name: 'health',
      db: '/work/project/.engram/engram.db',
      agent: null,
      json: true,
    });
    expect(run(['mcp'])).toEqual({
      name: 'mcp',
      db: '/work/project/.engram/engram.db',
      agent: 'default',
      user: null,
      healthPort: null,
    });
    expect(run(['maintain', '--force'])).toMatchObject({ agent: null, force: true });
  });

  it('reads --json on every command a script reads, --health-port of mcp, and whether --agent was given', () => {
    expect(run(['remember', 'x', '--json'])).toMatchObject({ name: 'remember', json: true });
    expect(run(['remember', 'x'])).toMatchObject({ json: false });
    expect(run(['ingest', 'e.jsonl', '--json'])).toMatchObject({ name: 'ingest', json: true });
    expect(run(['drain', '--json'])).toMatchObject({ name: 'drain', json: true });
    expect(run(['maintain', '--json'])).toMatchObject({ name: 'maintain', json: true, force: false });
    expect(run(['mcp', '--health-port', '4320'])).toMatchObject({ name: 'mcp', healthPort: 4320 });
    expect(run(['mcp', '--health-port', '0'])).toMatchObject({ healthPort: 0 });
    expect(failure(['mcp', '--health-port', '70000']).message).toBe(
      'engram mcp: --health-port must be an integer from 0 to 65535',
    );
    expect(run(['search', 'x', '--agent', 'coder'])).not.toHaveProperty('agentDefaulted');
    expect(run(['get', 'session/s1#1-2'])).toMatchObject({ agentDefaulted: true });
  });

  it('resolves --db against the working directory and keeps absolute paths', () => {
    expect(run(['drain', '--db', 'data/m.db'])).toMatchObject({ db: '/work/project/data/m.db' });
    expect(run(['drain', '--db', '/var/lib/engram.db'])).toMatchObject({ db: '/var/lib/engram.db' });
    expect(run(['ingest', 'logs/s.jsonl'])).toMatchObject({
      file: '/work/project/logs/s.jsonl',
      session: null,
    });
  });

  it('reads every option of search, including repeated tags', () => {
    expect(
      run([
        'search',
        'retry',
        '--agent',
        'coder',
        '--limit',
        '12',
        '--tag',
        'file:src/a.ts',
        '--tag',
        'tool:bash',
        '--explain',
      ]),
    ).toEqual({
      name: 'search',
      db: '/work/project/.engram/engram.db',
      agent: 'coder',
      user: null,
      session: null,
      query: 'retry',
      limit: 12,
      tags: ['file:src/a.ts', 'tool:bash'],
      explain: true,
      json: false,
    });
  });

  it('takes remember content and topic', () => {
    expect(run(['remember', '用户喜欢简洁的回答', '--topic', '偏好', '--agent', 'assistant'])).toMatchObject({
      content: '用户喜欢简洁的回答',
      topic: '偏好',
      agent: 'assistant',
    });
  });

  it('tells memory ids from archive pointers', () => {
    expect(run(['get', 'session/s1#3-5'])).toMatchObject({
      target: { kind: 'pointer', sessionId: 's1', from: 3, to: 5 },
    });
    expect(run(['get', 'session/s1#7'])).toMatchObject({
      target: { kind: 'pointer', sessionId: 's1', from: 7, to: 7 },
    });
    expect(run(['get', '0b6c2f0e-6f4a-4c55-9d51-0a4ea3c4f5b1'])).toMatchObject({
      target: { kind: 'id', id: '0b6c2f0e-6f4a-4c55-9d51-0a4ea3c4f5b1' },
    });
  });

  it('accepts every memory id the store accepts, not only ASCII word characters', () => {
    for (const id of ['note 1', '记忆-1', '#7', 'x'.repeat(128), ' padded ']) {
      expect(run(['get', id])).toMatchObject({ target: { kind: 'id', id } });
    }
  });

  it('accepts every agent and session id the store accepts', () => {
    const long = 'a'.repeat(256);
    expect(run(['search', 'x', '--agent', 'team lead/助手'])).toMatchObject({ agent: 'team lead/助手' });
    expect(run(['ingest', 'e.jsonl', '--session', long])).toMatchObject({ session: long });
    expect(failure(['search', 'x', '--agent', `${long}a`]).message).toBe(
      'engram search: --agent must be at most 256 characters',
    );
  });
});

describe('parseCommandLine: invalid arguments', () => {
  const cases: readonly [readonly string[], string][] = [
    [[], 'engram: missing command'],
    [['nope'], "engram: unknown command 'nope'"],
    [['--db', 'x'], 'engram: expected a command before --db'],
    [['help', 'nope'], "engram: unknown command 'nope'"],
    [['search'], 'engram search: missing <query>'],
    [['search', 'a', 'b'], 'engram search: expected one <query>, got 2 arguments (quote it)'],
    [['search', 'x', '--bogus'], 'engram search: unknown option --bogus'],
    [['search', 'x', '--agent'], 'engram search: option --agent needs a value'],
    [['search', 'x', '--explain=yes'], 'engram search: option --explain does not take a value'],
    [['search', 'x', '--limit', '0'], 'engram search: --limit must be an integer from 1 to 100'],
    [['search', 'x', '--limit', '101'], 'engram search: --limit must be an integer from 1 to 100'],
    [['search', 'x', '--limit', 'ten'], 'engram search: --limit must be an integer from 1 to 100'],
    [
      ['search', 'x', '--tag', 'nocolon'],
      'engram search: --tag must look like prefix:value (e.g. file:src/a.ts)',
    ],
    [['search', '   '], 'engram search: <query> must not be empty'],
    [['search', 'x', '--agent', ''], 'engram search: --agent must not be empty'],
    [['search', 'x', '--agent', 'a\u0007b'], 'engram search: --agent must not contain control characters'],
    [['remember', 'x'.repeat(4001)], 'engram remember: <content> must be at most 4000 characters'],
    [['demo', '--port', '70000'], 'engram demo: --port must be an integer from 0 to 65535'],
    [['serve', '--port'], 'engram serve: option --port needs a value'],
    [
      ['serve', '--port', '-1'],
      'engram serve: option --port needs a value (write --port=<value> for a value starting with -)',
    ],
    [['serve', '--port=-1'], 'engram serve: --port must be an integer from 0 to 65535'],
    [['drain', 'extra'], 'engram drain: this command takes no positional arguments'],
    [
      ['get', 'session/s1#5-3'],
      'engram get: <id|pointer> is not a valid pointer (expected session/<sessionId>#<from>-<to>)',
    ],
    [
      ['get', 'x'.repeat(129)],
      'engram get: <id|pointer> must be a memory id or session/<sessionId>#<from>-<to>',
    ],
    [['get', 'id\u0000'], 'engram get: <id|pointer> must be a memory id or session/<sessionId>#<from>-<to>'],
    [['get', 'id\ud800'], 'engram get: <id|pointer> must be a memory id or session/<sessionId>#<from>-<to>'],
    [['search', 'x', '--agent', 'a\udc00b'], 'engram search: --agent must not contain a lone surrogate'],
    [['search', 'x', '--agent', 'alice '], 'engram search: --agent must not start or end with whitespace'],
    [['search', 'x', '--agent', 'e\u0301'], 'engram search: --agent must be in Unicode normal form NFC'],
    [
      ['ingest', 'f.jsonl', '--session', ' s1'],
      'engram ingest: --session must not start or end with whitespace',
    ],
    [['search', 'x', "--bo'gus"], "engram search: unknown option --bo'gus"],
    [['search', 'x', '--x=1'], 'engram search: unknown option --x'],
    [['search', 'x', '-q'], 'engram search: unknown option -q'],
    [['serve', '--port='], 'engram serve: --port must be an integer from 0 to 65535'],
    [['ingest'], 'engram ingest: missing <events.jsonl>'],
  ];

  for (const [argv, message] of cases) {
    it(`rejects with: ${message}`, () => {
      const parsed = failure(argv);
      expect(parsed.message).toBe(message);
      expect(parsed.message).not.toContain('\n');
    });
  }

  it("hints the command's usage line and its --help", () => {
    const parsed = failure(['search', 'x', '--limit', '0']);
    expect(parsed.hint).toBe(`Usage: ${usageLine('search')}\nRun 'engram search --help' for details.`);
    expect(failure(['nope']).hint).toContain("Run 'engram --help'");
  });

  it('clips and neutralises hostile command names in messages', () => {
    const parsed = failure([`x\u001b[31m${'y'.repeat(80)}`]);
    expect(parsed.message).not.toContain('\u001b');
    expect(parsed.message.length).toBeLessThan(80);
  });

  it('neutralises every control character of an echoed argument, not just the first', () => {
    const hostile = 'x\u001b[31m\u001b]0;owned\u0007\u009b2J\u007f';
    for (const argv of [[hostile], ['help', hostile], ['search', 'x', `--${hostile}`]]) {
      const parsed = failure(argv);
      expect(parsed.message).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
    }
  });
});

describe('engram get <pointer>', () => {
  it('accepts session/<id>#<from>[-<to>] with from ≤ to and rejects the rest', () => {
    expect(run(['get', 'session/abc#1-2'])).toMatchObject({
      target: { kind: 'pointer', sessionId: 'abc', from: 1, to: 2 },
    });
    for (const text of ['session/abc#0', 'session/abc#4-2', 'session/#1']) {
      expect(failure(['get', text]).message).toBe(
        'engram get: <id|pointer> is not a valid pointer (expected session/<sessionId>#<from>-<to>)',
      );
    }
    // Not a pointer at all: a memory id, which the store may hold.
    expect(run(['get', 'abc#1'])).toMatchObject({ target: { kind: 'id', id: 'abc#1' } });
  });
});

describe('parseCommandLine: users and the commands over one scope', () => {
  it('reads --user on every command that reads or writes a scope', () => {
    for (const argv of [
      ['remember', 'x'],
      ['search', 'x'],
      ['get', 'm1'],
      ['list'],
      ['update', 'm1', 'y'],
      ['forget', 'm1'],
      ['history', 'm1'],
      ['ingest', 'e.jsonl'],
      ['maintain'],
      ['export', '--agent', 'coder'],
      ['mcp'],
    ]) {
      expect(run([...argv, '--user', 'alice']), argv.join(' ')).toMatchObject({ user: 'alice' });
      expect(run(argv), argv.join(' ')).toMatchObject({ user: null });
    }
    for (const argv of [
      ['ingest', 'e.jsonl'],
      ['remember', 'x'],
      ['search', 'x'],
    ]) {
      expect(run([...argv, '--user', 'alice', '--session', 's1']), argv.join(' ')).toMatchObject({
        user: 'alice',
        session: 's1',
      });
    }
    expect(failure(['search', 'x', '--user', ' alice']).message).toBe(
      'engram search: --user must not start or end with whitespace',
    );
  });

  it('refuses an option a command would ignore, saying why, with the usage line', () => {
    for (const [argv, option] of [
      [['get', 'm1', '--session=s1'], '--session'],
      [['list', '--session', 's1'], '--session'],
      [['mcp', '--session', 's1'], '--session'],
      [['drain', '--user', 'alice'], '--user'],
      [['health', '--user', 'alice'], '--user'],
      [['import', '--user', 'alice'], '--user'],
      [['serve', '--user', 'alice'], '--user'],
    ] as const) {
      const refused = failure(argv);
      expect(refused.message).toMatch(new RegExp(`^engram ${argv[0]}: ${option} is not taken here: .+`));
      expect(refused.hint).toMatch(new RegExp(`^Usage: engram ${argv[0]}`));
    }
    expect(failure(['export', '--user', 'alice']).message).toBe(
      "engram export: --user needs --agent: a user's export is of one agent",
    );
    expect(failure(['export', '--session', 's1']).message).toBe(
      "engram export: --session needs --agent: a session's export is of one agent",
    );
    expect(run(['export', '--agent', 'a', '--user', 'u', '--session', 's1'])).toMatchObject({
      user: 'u',
      session: 's1',
    });
  });

  it('reads list with its paging options', () => {
    expect(run(['list'])).toEqual({
      name: 'list',
      db: '/work/project/.engram/engram.db',
      agent: 'default',
      user: null,
      kinds: [],
      tags: [],
      inactive: false,
      limit: 100,
      after: null,
      json: false,
    });
    expect(
      run([
        'list',
        '--kind',
        'fact',
        '--kind',
        'event',
        '--tag',
        'topic:x',
        '--inactive',
        '--limit',
        '2',
        '--after',
        'm9',
        '--json',
      ]),
    ).toMatchObject({
      kinds: ['fact', 'event'],
      tags: ['topic:x'],
      inactive: true,
      limit: 2,
      after: 'm9',
      json: true,
    });
    expect(failure(['list', '--kind', 'note']).message).toMatch(
      /^engram list: --kind must be one of event, fact/,
    );
    expect(failure(['list', '--limit', '0']).message).toBe(
      'engram list: --limit must be an integer from 1 to 10000',
    );
  });

  it('reads update <id> <text>, forget <id> and history <id> with --reason', () => {
    expect(run(['update', 'm1', 'The port is 9090', '--reason', 'moved'])).toMatchObject({
      name: 'update',
      id: 'm1',
      content: 'The port is 9090',
      reason: 'moved',
    });
    expect(run(['forget', 'm1'])).toMatchObject({ name: 'forget', id: 'm1', reason: null });
    expect(run(['history', 'm1', '--json'])).toMatchObject({ name: 'history', id: 'm1', json: true });
    expect(failure(['update', 'm1']).message).toBe('engram update: missing <text>');
    expect(failure(['update', 'm1', 'a', 'b']).message).toBe(
      'engram update: expected <id> <text>, got 3 arguments (quote <text>)',
    );
    expect(failure(['forget']).message).toBe('engram forget: missing <id>');
    expect(failure(['forget', 'm1', '--reason', 'a\nb']).message).toBe(
      'engram forget: --reason must be one line without control characters',
    );
    expect(failure(['history', 'm1', '--reason', 'x']).message).toBe(
      'engram history: unknown option --reason',
    );
  });
});
