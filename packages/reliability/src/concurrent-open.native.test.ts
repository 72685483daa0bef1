/**
 * Readers never wait for a writer when they start. While another process holds a write transaction — from
 * before the commands start until both have answered (at least as long as the 10 s of a slow writer) — the
 * built `engram` CLI answers a search, and an MCP server starts, completes `initialize` and answers a
 * `tools/call` search. Both run with the default busy timeout (5 s, well under the lock's hold): a command that
 * queued on the write lock would fail with `ENGRAM_STORE_BUSY`. The assertions are on success, never on time.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openDatabase } from '@engram/store-sqlite/raw';
import { runNode } from '@engram/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/** The built CLI of this repository (the CLI sits above this package's layer): `pnpm build` first. */
const CLI = fileURLToPath(new URL('../../cli/dist/cli.js', import.meta.url));

let dir: string;

beforeAll(() => {
  if (!existsSync(CLI)) throw new Error('the engram CLI is not built: run pnpm build first');
  dir = mkdtempSync(join(tmpdir(), 'engram-concurrent-open-'));
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

function childEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !key.startsWith('ENGRAM_')) env[key] = value;
  }
  return { ...env, NO_COLOR: '1', ENGRAM_EMBEDDER: 'deterministic' };
}

/** Starts `engram mcp`, runs initialize and one `memory_search`, and returns the search result. */
async function mcpSearch(db: string, query: string): Promise<Record<string, unknown>> {
  const child = spawn(process.execPath, [CLI, 'mcp', '--db', db], { cwd: dir, env: childEnv() });
  child.stderr.resume();
  const responses: Record<string, unknown>[] = [];
  let buffer = '';
  let wake: (() => void) | null = null;
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    buffer += chunk;
    for (let nl = buffer.indexOf('\n'); nl !== -1; nl = buffer.indexOf('\n')) {
      responses.push(JSON.parse(buffer.slice(0, nl)) as Record<string, unknown>);
      buffer = buffer.slice(nl + 1);
    }
    wake?.();
  });
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  const next = async (): Promise<Record<string, unknown>> => {
    while (responses.length === 0) {
      const closed = await Promise.race([
        exited.then(() => true),
        new Promise<false>((resolve) => {
          wake = () => resolve(false);
        }),
      ]);
      wake = null;
      if (closed && responses.length === 0) throw new Error('the MCP server exited without answering');
    }
    return responses.shift() as Record<string, unknown>;
  };
  const send = (message: unknown): void => {
    child.stdin.write(`${JSON.stringify(message)}\n`);
  };
  try {
    send({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'test', version: '0' } },
    });
    const init = await next();
    expect(init).toMatchObject({ id: 1, result: { serverInfo: { name: 'engram' } } });
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    send({
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'memory_search', arguments: { query } },
    });
    return await next();
  } finally {
    child.stdin.end();
    expect(await exited).toBe(0);
  }
}

describe('commands that start while another process holds a write transaction', () => {
  it('a CLI search and an MCP start with a search both answer (readers never wait for the writer)', async () => {
    const db = join(dir, 'held.db');
    const made = await runNode(CLI, ['remember', 'The blue deploy rolls back with a flag.', '--db', db], {
      cwd: dir,
      env: childEnv(),
    });
    expect(made.code).toBe(0);

    const writer = openDatabase(db);
    writer.prepare('BEGIN IMMEDIATE').run();
    writer.prepare("INSERT INTO meta(key, value) VALUES ('held-by-test', '1')").run();
    try {
      const [search, mcp] = await Promise.all([
        runNode(CLI, ['search', 'deploy rolls back', '--db', db, '--json'], { cwd: dir, env: childEnv() }),
        mcpSearch(db, 'deploy rolls back'),
      ]);
      expect(search.stderr).toBe('');
      expect(search.code).toBe(0);
      const answer = JSON.parse(search.stdout) as { results: { content: string }[] };
      expect(answer.results.map((r) => r.content)).toEqual(['The blue deploy rolls back with a flag.']);
      const result = mcp.result as { isError: boolean; content: { text: string }[] };
      expect(result.isError).toBe(false);
      expect(result.content.map((c) => c.text).join('\n')).toContain('The blue deploy rolls back');
    } finally {
      writer.prepare('ROLLBACK').run();
      writer.close();
    }
    console.log(
      '[reliability:concurrent-open] a CLI search and an MCP initialize + tools/call search answered while another process held a write transaction',
    );
  }, 60_000);
});
