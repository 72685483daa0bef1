import { describe, expect, it } from 'vitest';
import {
  COMMAND_NAMES,
  type Command,
  commandHelp,
  DEFAULT_PORT,
  mainHelp,
  type ParsedCommandLine,
  parseCommandLine,
  parsePointer,
  usageLine,
} from './args.js';

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
      query: 'deploy',
      limit: 5,
      tags: [],
      explain: false,
      json: false,
    });
    expect(run(['drain'])).toEqual({ name: 'drain', db: '/work/project/.engram/engram.db', agent: null });
    expect(run(['health', '--json'])).toEqual({
      name: 'health',
      db: '/work/project/.engram/engram.db',
      agent: null,
      json: true,
    });
    expect(run(['mcp'])).toEqual({ name: 'mcp', db: '/work/project/.engram/engram.db', agent: 'default' });
    expect(run(['maintain', '--force'])).toMatchObject({ agent: null, force: true });
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
      ['get', 'no spaces allowed'],
      'engram get: <id|pointer> must be a memory id or session/<sessionId>#<from>-<to>',
    ],
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
});

describe('parsePointer', () => {
  it('accepts session/<id>#<from>[-<to>] with from ≤ to and rejects the rest', () => {
    expect(parsePointer('session/abc#1-2')).toEqual({ sessionId: 'abc', from: 1, to: 2 });
    expect(parsePointer('session/abc#0')).toBeNull();
    expect(parsePointer('session/abc#4-2')).toBeNull();
    expect(parsePointer('session/#1')).toBeNull();
    expect(parsePointer('abc#1')).toBeNull();
  });
});
