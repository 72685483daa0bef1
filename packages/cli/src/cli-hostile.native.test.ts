/**
 * The built `engram` CLI against hostile or careless use, as a child process on real database files: MCP
 * messages that break the protocol over a real stdio pipe, a reader that closes the pipe early, an events file
 * whose event the store refuses, and encrypted files opened with a key that must never show.
 */

import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type ChildRun, runNode } from '@engram/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_MCP_LINE_BYTES } from './mcp-transport.js';

const CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url));

function childEnv(extra: Readonly<Record<string, string>> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !key.startsWith('ENGRAM_OPENAI_') && key !== 'ENGRAM_KEY') env[key] = value;
  }
  env.NO_COLOR = '1';
  return { ...env, ...extra };
}

function runCli(args: readonly string[], extraEnv: Readonly<Record<string, string>> = {}): Promise<ChildRun> {
  return runNode(CLI, args, { cwd: dir, env: childEnv(extraEnv) });
}

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'engram-cli-hostile-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** An `engram mcp` child spoken to line by line. */
class McpChild {
  readonly child: ChildProcessWithoutNullStreams;
  private buffer = '';
  private readonly lines: string[] = [];
  private waiter: (() => void) | null = null;
  readonly exited: Promise<number | null>;

  constructor(db: string) {
    this.child = spawn(process.execPath, [CLI, 'mcp', '--db', db, '--agent', 'coder'], {
      cwd: dir,
      env: childEnv(),
    });
    this.child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      this.buffer += chunk;
      for (let nl = this.buffer.indexOf('\n'); nl !== -1; nl = this.buffer.indexOf('\n')) {
        this.lines.push(this.buffer.slice(0, nl));
        this.buffer = this.buffer.slice(nl + 1);
      }
      this.waiter?.();
    });
    this.child.stderr.resume();
    this.exited = new Promise((resolve) => this.child.once('close', (code) => resolve(code)));
  }

  send(line: string): void {
    this.child.stdin.write(`${line}\n`);
  }

  /** The next response line, parsed (and checked to be one line of JSON). */
  async next(): Promise<Record<string, unknown>> {
    while (this.lines.length === 0) {
      await new Promise<void>((resolve) => {
        this.waiter = resolve;
      });
      this.waiter = null;
    }
    return JSON.parse(this.lines.shift() as string) as Record<string, unknown>;
  }

  async request(line: string): Promise<Record<string, unknown>> {
    this.send(line);
    return this.next();
  }

  async end(): Promise<number | null> {
    this.child.stdin.end();
    return this.exited;
  }
}

const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 'init',
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '0' } },
});

function errorOf(response: Record<string, unknown>): { code: number; message: string } {
  return response.error as { code: number; message: string };
}

describe('engram mcp: protocol conformance over stdio', () => {
  it('answers every malformed message with the JSON-RPC error, refuses tools before initialize, keeps running', async () => {
    const mcp = new McpChild(join(dir, 'mcp-conformance.db'));
    const expectError = async (line: string, code: number, id: unknown = null): Promise<void> => {
      const response = await mcp.request(line);
      expect(response.jsonrpc).toBe('2.0');
      expect(response.id).toEqual(id);
      expect(errorOf(response).code).toBe(code);
      expect(errorOf(response).message).not.toContain('\n');
    };
    // Before initialize: tools are refused.
    await expectError('{"jsonrpc":"2.0","id":1,"method":"tools/list"}', -32002, 1);
    await expectError(
      '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"memory_search","arguments":{"query":"x"}}}',
      -32002,
      2,
    );
    await expectError('{"jsonrpc":"2.0","id":3,', -32700);
    await expectError('not json at all', -32700);
    await expectError('[{"jsonrpc":"2.0","id":4,"method":"ping"}]', -32600);
    await expectError('[]', -32600);
    await expectError('42', -32600);
    await expectError('{"id":5,"method":"ping"}', -32600, 5);
    await expectError('{"jsonrpc":"1.0","id":6,"method":"ping"}', -32600, 6);
    await expectError('{"jsonrpc":"2.0","id":null,"method":"ping"}', -32600);
    await expectError('{"jsonrpc":"2.0","id":7,"method":"ping","params":"x"}', -32600, 7);
    await expectError('{"jsonrpc":"2.0","id":8,"method":"ping","params":[1]}', -32600, 8);
    expect(await mcp.request('{"jsonrpc":"2.0","id":9,"method":"ping"}')).toEqual({
      jsonrpc: '2.0',
      id: 9,
      result: {},
    });

    const init = await mcp.request(INITIALIZE);
    expect((init.result as { serverInfo: { name: string } }).serverInfo.name).toBe('engram');
    mcp.send('{"jsonrpc":"2.0","method":"notifications/initialized"}');

    const callWith = (id: number, args: string): string =>
      `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"memory_search","arguments":${args}}}`;
    await expectError(callWith(10, '"query=x"'), -32602, 10);
    await expectError(callWith(11, '["x"]'), -32602, 11);
    await expectError(
      '{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"arguments":{}}}',
      -32602,
      12,
    );

    // One line over the bound: an error response, the rest of the line is skipped, the server keeps going.
    mcp.child.stdin.write(
      `{"jsonrpc":"2.0","id":13,"method":"ping","params":{"pad":"${'x'.repeat(MAX_MCP_LINE_BYTES)}"}}\n`,
    );
    const tooLong = await mcp.next();
    expect(tooLong.id).toBeNull();
    expect(errorOf(tooLong)).toEqual({
      code: -32600,
      message: `message longer than ${MAX_MCP_LINE_BYTES} bytes: skipped to the next line`,
    });
    const listed = await mcp.request('{"jsonrpc":"2.0","id":14,"method":"tools/list"}');
    expect(listed.id).toBe(14);
    expect((listed.result as { tools: unknown[] }).tools.length).toBeGreaterThan(0);
    expect(await mcp.end()).toBe(0);
  }, 60_000);
});

describe('engram search | head -1', () => {
  it('exits quietly when the reader closes the pipe (EPIPE): no unhandled error, no stack', async () => {
    const db = join(dir, 'epipe.db');
    for (const fact of ['Deploys go out on Tuesdays.', 'Deploys need a green build.']) {
      expect((await runCli(['remember', fact, '--db', db])).code).toBe(0);
    }
    const child = spawn(process.execPath, [CLI, 'search', 'deploys', '--db', db, '--explain'], {
      cwd: dir,
      env: childEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    // The reader is gone before the CLI writes anything.
    child.stdout.destroy();
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const code = await new Promise<number | null>((resolve) => child.once('close', (c) => resolve(c)));
    expect(stderr).toBe('');
    expect(code).toBe(0);
  }, 30_000);
});

describe('engram ingest: an event the store refuses', () => {
  it('names the file line of the event, not its index in a batch', async () => {
    const file = join(dir, 'oversized.jsonl');
    const ok = (seq: number): string =>
      JSON.stringify({ sessionId: 's1', seq, type: 'message', role: 'user', content: `event ${seq}` });
    const lines = [ok(1), '', ok(2), ok(3), '', ok(4)];
    lines.push(
      JSON.stringify({
        sessionId: 's1',
        seq: 5,
        type: 'message',
        role: 'user',
        content: 'x'.repeat(200_001),
      }),
    );
    await writeFile(file, `${lines.join('\n')}\n`);
    const run = await runCli(['ingest', file, '--db', join(dir, 'oversized.db')]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(
      /^engram ingest: events file line 7: content is longer than \d+ characters \(ENGRAM_CLI_INVALID_EVENTS\)\n$/,
    );
    expect(run.stderr).not.toContain('events[');
  }, 30_000);
});

describe('engram with an encrypted database', () => {
  const KEY = 'tr0ub4dor-&-3-secret-passphrase';
  const CANARY = 'CANARY-encrypted-cli-plaintext';

  it('opens it from every command with --key-file or ENGRAM_KEY, and the key never shows', async () => {
    const db = join(dir, 'encrypted.db');
    const keyFile = join(dir, 'db.key');
    await writeFile(keyFile, `${KEY}\n`);
    const withFile = ['--key-file', keyFile];
    const runs: ChildRun[] = [];
    const run = async (
      args: readonly string[],
      env: Readonly<Record<string, string>> = {},
    ): Promise<ChildRun> => {
      const result = await runCli(args, env);
      runs.push(result);
      return result;
    };

    const remembered = await run([
      'remember',
      `${CANARY}: deploys go out on Tuesdays.`,
      '--db',
      db,
      ...withFile,
    ]);
    expect(remembered.code).toBe(0);
    // The file is encrypted: no SQLite header, no plaintext.
    const bytes = await readFile(db);
    expect(bytes.subarray(0, 15).toString('latin1')).not.toBe('SQLite format 3');
    expect(bytes.includes(Buffer.from(CANARY))).toBe(false);

    const events = join(dir, 'encrypted.jsonl');
    await writeFile(
      events,
      `${JSON.stringify({ sessionId: 's1', seq: 1, type: 'message', role: 'user', content: 'ship it on Tuesday' })}\n`,
    );
    expect((await run(['ingest', events, '--db', db], { ENGRAM_KEY: KEY })).code).toBe(0);
    expect((await run(['drain', '--db', db, ...withFile])).code).toBe(0);
    const found = await run(['search', 'deploys', '--json', '--db', db], { ENGRAM_KEY: KEY });
    expect(found.code).toBe(0);
    const results = (JSON.parse(found.stdout) as { results: { id: string; content: string }[] }).results;
    expect(results[0]?.content).toContain(CANARY);
    const got = await run(['get', results[0]?.id ?? '', '--db', db, ...withFile]);
    expect(got.code).toBe(0);
    expect(got.stdout).toContain(CANARY);
    expect((await run(['get', 'session/s1#1-1', '--db', db], { ENGRAM_KEY: KEY })).code).toBe(0);
    const health = await run(['health', '--json', '--db', db, ...withFile]);
    expect(health.code).toBe(0);
    expect(
      (JSON.parse(health.stdout) as { store: { totals: { memories: number } } }).store.totals.memories,
    ).toBeGreaterThan(0);
    expect((await run(['maintain', '--db', db], { ENGRAM_KEY: KEY })).code).toBe(0);

    // Without the key, with a wrong key, with an empty or missing key file: a typed one-line failure.
    const noKey = await run(['search', 'deploys', '--db', db]);
    expect(noKey.code).toBe(1);
    expect(noKey.stderr.trim().split('\n')).toHaveLength(1);
    const wrong = await run(['search', 'deploys', '--db', db], { ENGRAM_KEY: `${KEY}-wrong` });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/\(ENGRAM_STORE_ENCRYPTION_KEY\)\n$/);
    const empty = join(dir, 'empty.key');
    await writeFile(empty, '\n');
    expect((await run(['health', '--db', db, '--key-file', empty])).stderr).toBe(
      'engram health: the key file is empty (ENGRAM_CLI_INVALID_ARGUMENTS)\n',
    );
    expect((await run(['health', '--db', db, '--key-file', join(dir, 'absent.key')])).stderr).toBe(
      'engram health: cannot read the key file (ENOENT) (ENGRAM_CLI_FILE_UNREADABLE)\n',
    );

    for (const r of runs) {
      expect(r.stdout).not.toContain(KEY);
      expect(r.stderr).not.toContain(KEY);
      expect(r.stderr).not.toContain('tr0ub4dor');
    }
  }, 120_000);
});
