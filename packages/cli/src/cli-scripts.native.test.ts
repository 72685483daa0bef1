/**
 * The built `engram` CLI as a script and a long-running server use it: `--json` on every command whose output
 * a script reads (parsed, not matched), the agents listed when a command without `--agent` finds nothing,
 * `engram serve` saying whose runtime figures it shows (every process's), and `engram mcp --health-port` serving the health
 * page of the MCP server's own process.
 */

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { healthDtoSchema } from '@engram/diagnostics';
import { type ChildRun, runNode } from '@engram/test-support';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url));

function childEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !key.startsWith('ENGRAM_OPENAI_') && key !== 'ENGRAM_KEY') env[key] = value;
  }
  return { ...env, ENGRAM_EMBEDDER: 'deterministic', NO_COLOR: '1' };
}

function runCli(args: readonly string[]): Promise<ChildRun> {
  return runNode(CLI, args, { cwd: dir, env: childEnv() });
}

/** Runs a command with --json, expects success and returns its stdout parsed. */
async function json(args: readonly string[]): Promise<Record<string, unknown>> {
  const run = await runCli([...args, '--json']);
  expect(run.code, run.stderr).toBe(0);
  return JSON.parse(run.stdout) as Record<string, unknown>;
}

let dir: string;
let db: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'engram-cli-scripts-'));
  db = join(dir, 'memory.db');
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('--json on the commands a script reads', () => {
  it('remember, ingest, drain and maintain print one JSON document each', async () => {
    const first = await json([
      'remember',
      'The API server listens on port 8080',
      '--db',
      db,
      '--agent',
      'coder',
    ]);
    expect(first).toMatchObject({ agent: 'coder', ok: true, action: 'remembered' });
    expect(first.text).toBe(`Remembered as fact ${String(first.id)}.`);
    const again = await json([
      'remember',
      'The API server listens on port 8080',
      '--db',
      db,
      '--agent',
      'coder',
    ]);
    expect(again).toMatchObject({ ok: true, action: 'duplicate', id: first.id });

    const events = join(dir, 'events.jsonl');
    await writeFile(
      events,
      [
        { sessionId: 's1', seq: 1, type: 'message', role: 'user', content: 'Deploys go out on Tuesdays.' },
        { sessionId: 's1', seq: 2, type: 'message', role: 'assistant', content: 'Noted: Tuesday deploys.' },
        { sessionId: 's2', seq: 1, type: 'message', role: 'user', content: 'The staging database is small.' },
      ]
        .map((e) => JSON.stringify(e))
        .join('\n'),
    );
    const ingested = await json(['ingest', events, '--db', db, '--agent', 'coder']);
    expect(ingested).toEqual({
      user: null,
      sessions: [
        { agent: 'coder', session: 's1', appended: 2, skipped: 0, memories: 2 },
        { agent: 'coder', session: 's2', appended: 1, skipped: 0, memories: 1 },
      ],
      totals: { sessions: 2, appended: 3, skipped: 0, memories: 3 },
    });
    const reingested = await json(['ingest', events, '--db', db, '--agent', 'coder']);
    expect(reingested.totals).toEqual({ sessions: 2, appended: 0, skipped: 3, memories: 0 });

    const drained = await json(['drain', '--db', db]);
    expect(drained).toMatchObject({
      embedder: 'deterministic-lexicon-v1 (128 d)',
      rows: 3,
      ready: 3,
      error: 0,
      backlog: 0,
      outcome: 'completed',
    });

    const maintained = await json(['maintain', '--db', db]);
    expect(maintained.model).toBeNull();
    const agents = maintained.agents as { agent: string; report: { cheap: { outcome: string } } | null }[];
    expect(agents.map((a) => a.agent)).toEqual(['coder']);
    expect(agents[0]?.report?.cheap.outcome).toBe('completed');
  });
});

describe('a command without --agent that finds nothing', () => {
  it('lists the agents the file has on stderr, and stdout stays the answer', async () => {
    const file = join(dir, 'agents.db');
    for (const agent of ['coder', 'assistant']) {
      expect((await runCli(['remember', `Fact of ${agent}`, '--db', file, '--agent', agent])).code).toBe(0);
    }
    const search = await runCli(['search', 'fact', '--db', file, '--json']);
    expect(search.code).toBe(0);
    expect(JSON.parse(search.stdout)).toMatchObject({ agent: 'default', results: [] });
    expect(search.stderr).toContain('Agents in this database: assistant, coder. Pick one with --agent <id>.');

    const explicit = await runCli(['search', 'fact', '--db', file, '--agent', 'nobody']);
    expect(explicit.code).toBe(0);
    expect(explicit.stderr).not.toContain('Agents in this database');

    const get = await runCli(['get', 'session/s1#1-2', '--db', file]);
    expect(get.code).toBe(1);
    expect(get.stderr).toContain('Agents in this database: assistant, coder.');
  });
});

describe('whose runtime figures a health page shows', () => {
  it('engram serve says its runtime figures cover every process using the file', async () => {
    const { spawn } = await import('node:child_process');
    const child = spawn(process.execPath, [CLI, 'serve', '--port', '0', '--db', db], {
      cwd: dir,
      env: childEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    const exited = new Promise<number | null>((done) => child.once('close', done));
    await new Promise<void>((resolve, reject) => {
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
        stdout += chunk;
        if (stdout.includes('Note:')) resolve();
      });
      void exited.then(() => reject(new Error('serve exited early')));
    });
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(stdout).toContain(
      'runtime figures (searches, drains, latencies) cover every live process using the file',
    );
    expect(stdout).toContain('the page lists each process and shows their totals');
  });

  it('engram mcp --health-port serves the health page of the MCP server, with its own searches counted', async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [CLI, 'mcp', '--db', db, '--agent', 'coder', '--health-port', '0'],
      env: childEnv(),
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    const client = new Client({ name: 'engram-health-port-test', version: '0.0.0' });
    await client.connect(transport);
    try {
      await expect
        .poll(() => /health page of this server's process at (http:\S+\/);/.exec(stderr))
        .not.toBeNull();
      const url = /at (http:\S+\/);/.exec(stderr)?.[1] as string;
      for (let i = 0; i < 3; i += 1) {
        const found = await client.callTool({ name: 'memory_search', arguments: { query: 'port 8080' } });
        expect(found.isError).toBe(false);
      }
      const response = await fetch(new URL('api/health?agent=coder', url));
      expect(response.status).toBe(200);
      const dto = healthDtoSchema.parse(await response.json());
      expect(dto.runtime.agent?.retrieval.search.operations).toBe(3);
      expect(dto.store.totals.facts).toBe(1);
      const page = await fetch(url);
      expect(page.headers.get('content-type')).toContain('text/html');
    } finally {
      await client.close();
    }
  });
});
