/**
 * The built `engram` CLI as a user runs it: `node dist/cli.js …` as a child process on temporary database
 * files (real SQLite, FTS5, sqlite-vec), the MCP server over a real stdio pipe, the health server on loopback.
 * Longer than 400 lines on purpose: one suite shares the spawn helpers and the temporary directory across every
 * subcommand, so each process-level check stays next to the others it depends on.
 */

import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer as createHttpServer, type IncomingMessage } from 'node:http';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { hasCjk } from '@engram/contracts';
import { healthDtoSchema } from '@engram/diagnostics';
import { type ChildRun, runNode } from '@engram/test-support';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMMAND_NAMES } from './args-spec.js';
import { SAMPLE_FACTS, SAMPLE_NEXT_SEARCH, SAMPLE_SEARCHES, SAMPLE_SESSIONS } from './sample/sample-data.js';

const CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url));

/** The environment of every child: offline (no provider variables), no colours. */
function childEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !key.startsWith('ENGRAM_OPENAI_')) env[key] = value;
  }
  env.NO_COLOR = '1';
  return env;
}

type CliRun = ChildRun;

function runCli(
  args: readonly string[],
  cwd: string,
  extraEnv: Readonly<Record<string, string>> = {},
): Promise<CliRun> {
  return runNode(CLI, args, { cwd, env: { ...childEnv(), ...extraEnv } });
}

/** Runs a command line in a POSIX shell, as a user pastes it. */
function runShell(line: string, cwd: string): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn('/bin/sh', ['-c', line], { cwd, env: childEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Starts a long-running CLI command and resolves with the first stdout line matching `pattern`. */
function startCli(
  args: readonly string[],
  cwd: string,
  pattern: RegExp,
): Promise<{ match: RegExpExecArray; stderr: () => string; stop: () => Promise<number | null> }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      cwd,
      env: childEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    const exited = new Promise<number | null>((done) => child.once('close', (code) => done(code)));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      const match = pattern.exec(stdout);
      if (match !== null) {
        resolve({
          match,
          stderr: () => stderr,
          stop: () => {
            child.kill('SIGTERM');
            return exited;
          },
        });
      }
    });
    child.once('error', reject);
    void exited.then((code) =>
      reject(new Error(`the CLI exited (${code}) before printing ${pattern}: ${stderr}`)),
    );
  });
}

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'engram-cli-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function healthJson(db: string, agent?: string): Promise<ReturnType<typeof healthDtoSchema.parse>> {
  const run = await runCli(
    ['health', '--json', '--db', db, ...(agent === undefined ? [] : ['--agent', agent])],
    dir,
  );
  expect(run.code).toBe(0);
  return healthDtoSchema.parse(JSON.parse(run.stdout));
}

describe('engram demo --no-serve', () => {
  it('ingests, embeds, searches with explanations, maintains, summarises — and a second run adds nothing', async () => {
    const work = await mkdtemp(join(dir, 'demo-'));
    const first = await runCli(['demo', '--no-serve'], work);
    expect(first.stderr).not.toMatch(/engram demo:/);
    expect(first.code).toBe(0);
    const events = SAMPLE_SESSIONS.reduce((n, s) => n + s.events.length, 0);
    expect(first.stdout).toContain(`${events} events appended, ${events} event memories written`);
    expect(first.stdout).toMatch(
      /rows in \d+ batch(es)?: ready \d+, error 0, ftsOnly 0, stale 0 · backlog 0/,
    );
    // Example searches print ranked results with their explanations.
    // A paraphrase with no word in common, found by the default USE-lite embedder alone.
    expect(first.stdout).toContain('  embedder  use-lite-512-v1 (512 d)');
    expect(first.stdout).toContain('▸ coder: "the site went down"');
    const paraphrase = first.stdout.split('▸ coder: "the site went down"')[1]?.split('▸')[0] ?? '';
    expect(paraphrase).toMatch(/^ {3}1\. [\d.]+ {2}event {2}The payment service had an outage last night/m);
    expect(paraphrase).not.toContain('lexical #');
    expect(first.stdout).toMatch(/vector #1 \(similarity [\d.]+\) · rrf/);
    expect(first.stdout).toMatch(/lexical #1 \(score [\d.]+\)/);
    expect(first.stdout).toContain('The payment service had an outage last night');
    expect(first.stdout).toContain('机票预订已完成');
    expect(first.stdout).toContain('heavy skipped (no model configured)');
    expect(first.stdout).toContain('Heavy phase skipped: no model configured');
    expect(first.stdout).toMatch(new RegExp(`search\\s+${SAMPLE_SEARCHES.length}\\s+[\\d.]+ ms`));
    expect(first.stderr).toContain('embedding: ');

    const db = join(work, '.engram', 'demo.db');
    const afterFirst = await healthJson(db);
    expect(afterFirst.store.totals).toEqual({
      memories: events + SAMPLE_FACTS.length,
      events,
      facts: SAMPLE_FACTS.length,
      skills: 0,
    });
    expect(afterFirst.store.byEmbeddingState.pending).toBe(0);

    const second = await runCli(['demo', '--no-serve'], work);
    expect(second.code).toBe(0);
    expect(second.stdout).toContain(`Nothing new: all ${events} events were already stored`);
    expect(second.stdout).toContain('Nothing pending');
    expect(second.stdout.match(/Already remembered as fact/g)).toHaveLength(SAMPLE_FACTS.length);
    const afterSecond = await healthJson(db);
    // Every count is the same; each health run checked the file (at its own time) and found it sound.
    const { integrity: firstCheck, ...firstCounts } = afterFirst.store;
    const { integrity: secondCheck, ...secondCounts } = afterSecond.store;
    expect(secondCounts).toEqual(firstCounts);
    expect([firstCheck?.state, secondCheck?.state]).toEqual(['ok', 'ok']);

    // The follow-up the demo prints works when pasted into a shell, and finds the sample by both arms.
    const next = /Next, search the sample yourself:\n {2}(.+)\n/.exec(second.stdout)?.[1];
    expect(next).toBeDefined();
    expect(next).toContain(`search '${SAMPLE_NEXT_SEARCH.query}' --agent ${SAMPLE_NEXT_SEARCH.agentId}`);
    const pasted = await runShell(next as string, work);
    expect(pasted.stderr).toBe('');
    expect(pasted.code).toBe(0);
    expect(pasted.stdout).toMatch(/^[1-9]\d* results? for agent coder · completed/);
    expect(pasted.stdout).toContain('session/deploy-rollback#');
    expect(pasted.stdout).toMatch(/lexical #1 \(score [\d.]+\) · vector #\d/);
  });

  it('keeps a demo file made with the deterministic embedder on it, and says how to get USE-lite', async () => {
    const work = await mkdtemp(join(dir, 'demo-kept-'));
    const made = await runCli(['demo', '--no-serve'], work, { ENGRAM_EMBEDDER: 'deterministic' });
    expect(made.code).toBe(0);
    expect(made.stdout).toContain('  embedder  deterministic-lexicon-v1 (128 d)\n  model');
    const again = await runCli(['demo', '--no-serve'], work);
    expect(again.stderr).not.toMatch(/engram demo:/);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain(
      '  embedder  deterministic-lexicon-v1 (128 d)\n            (this file keeps the embedder it was made with; a new --db gets USE-lite)\n',
    );
    expect(again.stdout).toContain('Nothing pending');
  });

  it('serves the health page at the printed URL until stopped', async () => {
    const work = await mkdtemp(join(dir, 'demo-serve-'));
    const demo = await startCli(
      ['demo', '--port', '0'],
      work,
      /7\. Health page\n {2}(http:\/\/127\.0\.0\.1:\d+\/)\n {2}\(JSON: (\S+)\)/,
    );
    try {
      const [, url, jsonUrl] = demo.match;
      expect(jsonUrl).toBe(`${url}api/health`);
      const page = await fetch(url as string);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('<script type="module" src="./app/main.js"></script>');
      for (const asset of ['app/main.js', 'health.css']) {
        expect((await fetch(new URL(asset, url))).status, asset).toBe(200);
      }
      const dto = healthDtoSchema.parse(await (await fetch(jsonUrl as string)).json());
      const events = SAMPLE_SESSIONS.reduce((n, s) => n + s.events.length, 0);
      expect(dto.store.totals).toEqual({
        memories: events + SAMPLE_FACTS.length,
        events,
        facts: SAMPLE_FACTS.length,
        skills: 0,
      });
      // The page shows the demo's own workload: its searches and its drain.
      expect(dto.runtime.agent.retrieval.search.operations).toBe(SAMPLE_SEARCHES.length);
      // …plus the Chinese facts: USE-lite is English-only, so memory_remember writes them without a vector
      // (its comparison falls back to token overlap) and the drain embeds them.
      const chineseFacts = SAMPLE_FACTS.filter((f) => hasCjk(f.content)).length;
      expect(chineseFacts).toBe(3);
      expect(dto.runtime.agent.embedding.rows).toBe(events + chineseFacts);
      const agents = (await (await fetch(new URL('api/agents', url))).json()) as { agents: string[] };
      expect([...agents.agents].sort()).toEqual(['assistant', 'coder']);
    } finally {
      expect(await demo.stop()).toBe(0);
    }
    expect(demo.stderr()).not.toMatch(/engram demo:/);
  });
});

/** Valid answers of a scripted model, by the JSON schema name the maintenance package asks for. */
const SCRIPTED_ANSWERS: Readonly<Record<string, unknown>> = {
  memory_candidates: {
    memories: [{ content: 'The user wants short answers.', kind: 'fact', importance: 0.6 }],
  },
  memory_decision: { decision: 'NOOP', targetId: null, content: null },
  memory_challenge: { verdict: 'keepBoth' },
  memory_merge: { merge: false, content: null },
  memory_reflection: {
    reflections: [{ content: 'Most work this week was about reliability.', importance: 0.6 }],
  },
  memory_persona: { persona: 'A careful engineer who prefers small, tested changes.' },
};

async function readBody(req: IncomingMessage): Promise<string> {
  let body = '';
  for await (const chunk of req) body += String(chunk);
  return body;
}

describe('engram demo with an OpenAI-compatible model configured', () => {
  it('runs extraction and the heavy maintenance phase against the model', async () => {
    const asked: string[] = [];
    const server = createHttpServer((req, res) => {
      void readBody(req).then((body) => {
        const request = JSON.parse(body) as { response_format?: { json_schema?: { name?: string } } };
        const name = request.response_format?.json_schema?.name ?? '';
        asked.push(name);
        res.setHeader('content-type', 'application/json');
        res.end(
          JSON.stringify({
            id: 'x',
            object: 'chat.completion',
            choices: [
              {
                index: 0,
                finish_reason: 'stop',
                message: { role: 'assistant', content: JSON.stringify(SCRIPTED_ANSWERS[name] ?? {}) },
              },
            ],
            usage: { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 },
          }),
        );
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    try {
      const work = await mkdtemp(join(dir, 'model-'));
      const run = await runCli(['demo', '--no-serve'], work, {
        ENGRAM_OPENAI_BASE_URL: `http://127.0.0.1:${port}/v1`,
        ENGRAM_OPENAI_CHAT_MODEL: 'scripted-model',
      });
      expect(run.stderr).not.toMatch(/engram demo:/);
      expect(run.code).toBe(0);
      expect(run.stdout).toContain('model     scripted-model');
      expect(run.stdout).toMatch(/extraction coder \/ payments-retry: completed, 1 candidates/);
      expect(run.stdout).not.toContain('Heavy phase skipped');
      expect(run.stdout).toMatch(/coder: cheap completed .* · heavy completed \(.*model calls [1-9]/);
      expect(asked).toContain('memory_candidates');
      expect(
        asked.some((name) =>
          ['memory_reflection', 'memory_persona', 'memory_merge', 'memory_challenge'].includes(name),
        ),
      ).toBe(true);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});

describe('engram over a database file', () => {
  it('remembers a fact and finds it with search --explain (and as JSON)', async () => {
    const db = join(dir, 'remember.db');
    const remembered = await runCli(
      ['remember', 'The staging database runs on port 5433.', '--topic', 'env', '--db', db, '--agent', 'ops'],
      dir,
    );
    expect(remembered.code).toBe(0);
    expect(remembered.stdout).toMatch(/^Remembered as fact [\w-]+\.$/m);
    const again = await runCli(
      ['remember', 'The staging database runs on port 5433.', '--db', db, '--agent', 'ops'],
      dir,
    );
    expect(again.stdout).toContain('Already remembered as fact');

    const found = await runCli(['search', 'staging port', '--explain', '--db', db, '--agent', 'ops'], dir);
    expect(found.code).toBe(0);
    expect(found.stdout).toMatch(/^1 result for agent ops · completed · lexical\+vector/);
    expect(found.stdout).toContain('fact   The staging database runs on port 5433.');
    expect(found.stdout).toContain('topic:env');
    expect(found.stdout).toMatch(
      /lexical #1 \(score [\d.]+\) · vector #1 \(similarity [\d.]+\) · rrf [\d.]+/,
    );

    const other = await runCli(['search', 'staging port', '--db', db, '--agent', 'someone-else'], dir);
    expect(other.stdout).toContain('(no results)');

    const json = await runCli(['search', 'staging', '--json', '--db', db, '--agent', 'ops'], dir);
    const parsed = JSON.parse(json.stdout) as {
      results: { content: string; explanation: { arms: string[] } }[];
    };
    expect(parsed.results[0]?.content).toBe('The staging database runs on port 5433.');
    expect(parsed.results[0]?.explanation.arms).toContain('lexical');
  });

  it('prints stored control characters as ? in human-readable output and keeps them in JSON', async () => {
    const db = join(dir, 'hostile.db');
    const content = 'Beacon \u001b[2J\u001b]0;owned\u0007 lit \u009b31m twice \u001b[0m\u007f.';
    const remembered = await runCli(['remember', content, '--db', db, '--agent', 'ops'], dir);
    expect(remembered.code).toBe(0);
    const json = await runCli(['search', 'beacon', '--json', '--db', db, '--agent', 'ops'], dir);
    const parsed = JSON.parse(json.stdout) as { results: { id: string; content: string }[] };
    expect(parsed.results[0]?.content).toBe(content);
    const id = parsed.results[0]?.id ?? '';
    const shown = [
      await runCli(['search', 'beacon', '--explain', '--db', db, '--agent', 'ops'], dir),
      await runCli(['get', id, '--db', db, '--agent', 'ops'], dir),
    ];
    for (const run of shown) {
      expect(run.code).toBe(0);
      expect(run.stdout).toContain('Beacon ?[2J?]0;owned? lit ?31m');
      expect(run.stdout).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
    }
  });

  it('ingests a JSONL file idempotently, drains it, and reads events back by pointer and memories by id', async () => {
    const db = join(dir, 'ingest.db');
    const file = join(dir, 'session.jsonl');
    await writeFile(
      file,
      [
        {
          sessionId: 'flaky-queue',
          seq: 1,
          type: 'message',
          role: 'user',
          content: 'Fix the flaky test in src/queue/worker.ts',
        },
        {
          sessionId: 'flaky-queue',
          seq: 2,
          type: 'tool_call',
          role: 'assistant',
          content: '',
          toolName: 'read_file',
          metadata: { path: 'src/queue/worker.ts' },
        },
        {
          sessionId: 'flaky-queue',
          seq: 3,
          type: 'tool_result',
          role: 'tool',
          content: 'export function pollQueue() {}',
          toolName: 'read_file',
        },
      ]
        .map((e) => JSON.stringify(e))
        .join('\n'),
    );
    const first = await runCli(['ingest', file, '--db', db, '--agent', 'coder'], dir);
    expect(first.code).toBe(0);
    expect(first.stdout).toContain('coder / flaky-queue: 3 events appended, 0 already stored, 3 memories');
    const second = await runCli(['ingest', file, '--db', db, '--agent', 'coder'], dir);
    expect(second.stdout).toContain('coder / flaky-queue: 0 events appended, 3 already stored, 0 memories');

    const drained = await runCli(['drain', '--db', db], dir);
    expect(drained.code).toBe(0);
    expect(drained.stdout).toMatch(
      /^Drained 3 rows in 1 batch with use-lite-512-v1 \(512 d\): ready 3, error 0/,
    );
    expect(drained.stderr).toContain('embedding: 3/3');

    const events = await runCli(['get', 'session/flaky-queue#2-3', '--db', db, '--agent', 'coder'], dir);
    expect(events.code).toBe(0);
    expect(events.stdout).toContain('#2 assistant tool_call read_file');
    expect(events.stdout).toContain('"path":"src/queue/worker.ts"');
    expect(events.stdout).toContain('export function pollQueue() {}');

    const byFile = await runCli(
      ['search', 'worker', '--tag', 'file:src/queue/worker.ts', '--json', '--db', db, '--agent', 'coder'],
      dir,
    );
    const hit = (JSON.parse(byFile.stdout) as { results: { id: string; pointer: string }[] }).results[0];
    expect(hit?.pointer).toBe('session/flaky-queue#2');
    const memory = await runCli(['get', hit?.id ?? '', '--db', db, '--agent', 'coder'], dir);
    expect(memory.code).toBe(0);
    expect(memory.stdout).toMatch(/^id\s+/);
    expect(memory.stdout).toContain('tool:read_file');
    expect(memory.stdout).toContain('embedding   ready');

    const health = await healthJson(db, 'coder');
    expect(health.store.totals).toEqual({ memories: 3, events: 3, facts: 0, skills: 0 });

    const maintained = await runCli(['maintain', '--db', db], dir);
    expect(maintained.code).toBe(0);
    expect(maintained.stdout).toContain('coder: cheap completed');
    expect(maintained.stdout).toContain('heavy skipped (no model configured)');

    const table = await runCli(['health', '--db', db], dir);
    expect(table.stdout).toContain('memories 3 · events 3 · facts 0 · skills 0');
    expect(table.stdout).toContain('Runtime diagnostics (totals of 1 live process using the file)');
  });

  it('keeps the embedder a file was made with: ENGRAM_EMBEDDER=deterministic once, then without it; another is refused', async () => {
    const db = join(dir, 'kept-embedder.db');
    const made = await runCli(['remember', 'Deploys go out on Tuesdays.', '--db', db], dir, {
      ENGRAM_EMBEDDER: 'deterministic',
    });
    expect(made.code).toBe(0);
    const drained = await runCli(['drain', '--db', db], dir);
    expect(drained.stdout).toMatch(
      /^Drained \d+ rows? in \d+ batch(es)? with deterministic-lexicon-v1 \(128 d\)/,
    );
    const found = await runCli(['search', 'deploys', '--explain', '--db', db], dir);
    expect(found.code).toBe(0);
    expect(found.stdout).toMatch(/^1 result for agent default · completed · lexical\+vector/);
    const refused = await runCli(['search', 'deploys', '--db', db], dir, { ENGRAM_EMBEDDER: 'use' });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe(
      'engram search: the database was made with the embedder deterministic-lexicon-v1 (128 d), not ENGRAM_EMBEDDER=use; it needs ENGRAM_EMBEDDER=deterministic (or use another --db) (ENGRAM_CLI_EMBEDDER_MISMATCH)\n',
    );
  });

  it('fails with exit 1 and a typed message that never echoes content', async () => {
    const db = join(dir, 'failures.db');
    const noDb = await runCli(['search', 'anything', '--db', db], dir);
    expect(noDb.code).toBe(1);
    expect(noDb.stderr).toBe(
      `engram search: no database at ${db} (create one with engram remember, engram ingest or engram demo, or pass --create) (ENGRAM_CLI_NOT_FOUND)\n`,
    );
    await runCli(['remember', 'Something to keep.', '--db', db], dir);
    const missing = await runCli(['get', 'no-such-id', '--db', db], dir);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe(
      'engram get: no memory with that id for agent default (ENGRAM_CLI_NOT_FOUND)\n',
    );

    const noFile = await runCli(['ingest', join(dir, 'absent.jsonl'), '--db', db], dir);
    expect(noFile.code).toBe(1);
    expect(noFile.stderr).toBe(
      'engram ingest: cannot read the events file (ENOENT) (ENGRAM_CLI_FILE_UNREADABLE)\n',
    );

    const bad = join(dir, 'bad.jsonl');
    await writeFile(
      bad,
      '{"sessionId":"s","seq":-4,"type":"message","role":"user","content":"my secret plan"}\n',
    );
    const invalid = await runCli(['ingest', bad, '--db', db], dir);
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toBe(
      'engram ingest: events file line 1: "seq" must be a positive integer (ENGRAM_CLI_INVALID_EVENTS)\n',
    );
    expect(invalid.stderr).not.toContain('secret');
  });
});

describe('arguments', () => {
  it('rejects invalid arguments with exit 2, one message line and a usage hint', async () => {
    for (const args of [
      ['search'],
      ['search', 'x', '--limit', '0'],
      ['frobnicate'],
      ['drain', '--bogus'],
      [],
    ]) {
      const run = await runCli(args, dir);
      expect(run.code).toBe(2);
      expect(run.stdout).toBe('');
      const lines = run.stderr.trimEnd().split('\n');
      expect(lines[0]).toMatch(/^engram( \w+)?: /);
      expect(lines[1]).toMatch(/^Usage: engram /);
      expect(lines[2]).toMatch(/^Run 'engram( \w+)? --help'/);
    }
  });

  it('answers --help for the CLI and every subcommand with exit 0', async () => {
    const top = await runCli(['--help'], dir);
    expect(top.code).toBe(0);
    expect(top.stdout).toMatch(/^Usage: engram <command>/);
    for (const name of COMMAND_NAMES) {
      const run = await runCli([name, '--help'], dir);
      expect(run.code).toBe(0);
      expect(run.stdout.startsWith(`Usage: engram ${name}`)).toBe(true);
    }
  });
});

describe('engram mcp', () => {
  it('serves the memory tools over stdio to the SDK client', async () => {
    const db = join(dir, 'mcp.db');
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [CLI, 'mcp', '--db', db, '--agent', 'coder'],
      cwd: dir,
      env: childEnv(),
      stderr: 'pipe',
    });
    const client = new Client({ name: 'engram-test', version: '0.0.0' });
    await client.connect(transport);
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual(
        [
          'memory_forget',
          'memory_get',
          'memory_remember',
          'memory_search',
          'memory_update',
          'skill_delete',
          'skill_list',
          'skill_write',
        ].sort(),
      );
      const search = tools.find((t) => t.name === 'memory_search');
      expect(search?.inputSchema.type).toBe('object');
      expect(search?.inputSchema.required).toEqual(['query']);

      const remembered = await client.callTool({
        name: 'memory_remember',
        arguments: { content: 'Deploys go out on Tuesdays after the 10:00 standup.', topic: 'release' },
      });
      expect(remembered.isError).toBe(false);
      expect((remembered.content as { type: string; text: string }[])[0]?.text).toMatch(
        /^Remembered as fact /,
      );

      const found = await client.callTool({
        name: 'memory_search',
        arguments: { query: 'when do deploys go out' },
      });
      expect(found.isError).toBe(false);
      const text = (found.content as { type: string; text: string }[])[0]?.text ?? '';
      expect(text).toMatch(/^1 memory/);
      expect(text).toContain('Deploys go out on Tuesdays after the 10:00 standup.');

      const invalid = await client.callTool({ name: 'memory_search', arguments: { query: '' } });
      expect(invalid.isError).toBe(true);
      expect((invalid.content as { text: string }[])[0]?.text).toMatch(
        /^Invalid arguments for memory_search/,
      );
    } finally {
      await client.close();
    }
  });
});

describe('engram serve', () => {
  it('answers /api/health on 127.0.0.1 at the printed URL and stops on SIGTERM', async () => {
    const db = join(dir, 'serve.db');
    await runCli(['remember', 'Serve me.', '--db', db, '--agent', 'web'], dir);
    const server = await startCli(
      ['serve', '--port', '0', '--db', db],
      dir,
      /Health page: (http:\/\/127\.0\.0\.1:\d+\/)\n/,
    );
    try {
      const url = server.match[1] as string;
      const response = await fetch(new URL('api/health', url));
      expect(response.status).toBe(200);
      const dto = healthDtoSchema.parse(await response.json());
      expect(dto.store.totals.facts).toBe(1);
      const agents = await fetch(new URL('api/agents', url));
      expect(JSON.stringify(await agents.json())).toContain('web');
      const page = await fetch(url);
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toContain('text/html');
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });

  it('falls back to a free port when the asked one is taken', async () => {
    await runCli(['remember', 'Serve me too.', '--db', join(dir, 'serve2.db')], dir);
    const blocker: Server = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const taken = (blocker.address() as { port: number }).port;
    try {
      const server = await startCli(
        ['serve', '--port', String(taken), '--db', join(dir, 'serve2.db')],
        dir,
        /Port (\d+) is taken; using (\d+) instead\.\nHealth page: http:\/\/127\.0\.0\.1:(\d+)\//,
      );
      try {
        expect(Number(server.match[1])).toBe(taken);
        expect(server.match[2]).toBe(server.match[3]);
        expect(Number(server.match[3])).not.toBe(taken);
      } finally {
        await server.stop();
      }
    } finally {
      await new Promise<void>((resolve) => blocker.close(() => resolve()));
    }
  });
});
