/**
 * The health page of `engram serve` shows every process using the file: an `engram mcp` child (the built CLI,
 * driven with the official MCP SDK's `Client` over stdio) publishes its figures into the file, and the serve
 * child (another process, read-only) shows that server's searches and latencies within a few beats. After a
 * clean exit the server's row is deleted at once; after a kill it stops showing when its last beat is older than
 * its time-to-live, and a later writer deletes the row. Short beats (`ENGRAM_PROCESS_BEAT_MS=100`: keepalive
 * 500 ms, time-to-live 1.6 s) keep the test quick; every wait polls for content with a deadline.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type HealthDto, healthDtoSchema } from '@engram/diagnostics';
import { openDatabase } from '@engram/store-sqlite/raw';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
const BEAT_MS = 100;
/** How long a poll waits for the page to change (many beats and time-to-lives). */
const POLL = { timeout: 20_000, interval: 100 } as const;
const SECRET_QUERY = 'which port does the billing gateway use';
const SECRET_FACT = 'The billing gateway listens on port 9443 behind vault.internal';

let dir: string;
let db: string;
let serve: ChildProcess;
let pageUrl: string;

function childEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !key.startsWith('ENGRAM_OPENAI_') && key !== 'ENGRAM_KEY') env[key] = value;
  }
  return {
    ...env,
    ENGRAM_EMBEDDER: 'deterministic',
    ENGRAM_PROCESS_BEAT_MS: String(BEAT_MS),
    NO_COLOR: '1',
  };
}

/** An `engram mcp` child on the file, connected through the SDK's client. */
async function startMcp(): Promise<{ client: Client; transport: StdioClientTransport }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, 'mcp', '--db', db, '--agent', 'coder'],
    env: childEnv(),
    stderr: 'ignore',
  });
  const client = new Client({ name: 'engram-processes-test', version: '0.0.0' });
  await client.connect(transport);
  return { client, transport };
}

async function search(client: Client, times: number): Promise<void> {
  for (let i = 0; i < times; i += 1) {
    const found = await client.callTool({ name: 'memory_search', arguments: { query: SECRET_QUERY } });
    expect(found.isError).toBe(false);
  }
}

async function health(): Promise<HealthDto> {
  const response = await fetch(new URL('api/health', pageUrl));
  expect(response.status).toBe(200);
  return healthDtoSchema.parse(await response.json());
}

/** The other processes the page lists (not the serve process itself). */
function others(dto: HealthDto): NonNullable<HealthDto['processes']>['list'] {
  return (dto.processes?.list ?? []).filter((p) => !p.self);
}

/** The process ids with a row in the file's beat table (live or not). */
function rowsInFile(): string[] {
  const raw = openDatabase(db, { loadVectorExtension: false, readonly: true });
  try {
    return (
      raw.prepare('SELECT process_id FROM process_beats ORDER BY process_id').all() as {
        process_id: string;
      }[]
    ).map((r) => r.process_id);
  } finally {
    raw.close();
  }
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((done) => child.once('exit', () => done()));
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'engram-processes-'));
  db = join(dir, 'memory.db');
  // The file exists (created and migrated by a writer) before the read-only serve opens it.
  const first = await startMcp();
  const remembered = await first.client.callTool({
    name: 'memory_remember',
    arguments: { content: SECRET_FACT },
  });
  expect(remembered.isError).toBe(false);
  await first.client.close();

  serve = spawn(process.execPath, [CLI, 'serve', '--port', '0', '--db', db], {
    cwd: dir,
    env: childEnv(),
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  let stdout = '';
  pageUrl = await new Promise<string>((resolve, reject) => {
    serve.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      const match = /Health page: (http:\S+\/)/.exec(stdout);
      if (match?.[1] !== undefined) resolve(match[1]);
    });
    serve.once('exit', () => reject(new Error('serve exited early')));
  });
}, 60_000);

afterAll(async () => {
  serve?.kill('SIGTERM');
  if (serve !== undefined) await exited(serve);
  await rm(dir, { recursive: true, force: true });
}, 30_000);

describe('engram serve shows every process using the file', () => {
  it('shows an MCP server’s searches and latencies, then drops it after a clean exit (row deleted)', async () => {
    const { client, transport } = await startMcp();
    const pid = transport.pid;
    try {
      await search(client, 3);
      await expect
        .poll(
          async () => others(await health()).map((p) => p.runtime.agent.retrieval.search.operations),
          POLL,
        )
        .toEqual([3]);
      const dto = await health();
      const [server] = others(dto);
      const latency = server?.runtime.agent.retrieval.search.latency.total;
      expect(latency?.total).toBe(3);
      expect(latency?.p50).not.toBeNull();
      expect(latency?.max).not.toBeNull();
      expect(server?.id).toMatch(/^[0-9a-f]{32}$/);
      // The totals the page's sections show include the server's searches; the serve process ran none.
      expect(dto.runtime.agent.retrieval.search.operations).toBe(3);
      expect(dto.processes?.list.filter((p) => p.self)).toHaveLength(1);
      // As stored and as served: numbers and enum keys only, never the query, the fact, the path or the SQL.
      const served = JSON.stringify(dto);
      expect(rowsInFile()).toEqual([server?.id]);
      for (const text of [SECRET_QUERY, 'billing', 'vault.internal', '9443', dir, 'SELECT']) {
        expect(served).not.toContain(text);
      }
    } finally {
      await client.close();
    }
    if (pid !== null && pid !== undefined) {
      await expect.poll(() => isAlive(pid), POLL).toBe(false);
    }
    // A clean exit deletes the row: nothing is left in the file, and the page lists the serve process only.
    expect(rowsInFile()).toEqual([]);
    expect(others(await health())).toEqual([]);
  }, 60_000);

  it('drops a killed MCP server once its beat expires; a later writer deletes its row', async () => {
    const { client, transport } = await startMcp();
    const pid = transport.pid;
    expect(pid).not.toBeNull();
    await search(client, 2);
    await expect
      .poll(async () => others(await health()).map((p) => p.runtime.agent.retrieval.search.operations), POLL)
      .toEqual([2]);
    const killedId = others(await health())[0]?.id as string;
    process.kill(pid as number, 'SIGKILL');
    await expect.poll(() => isAlive(pid as number), POLL).toBe(false);
    await client.close().catch(() => undefined);
    // Not deleted (the process never closed), but no longer shown once its time-to-live has passed.
    await expect.poll(async () => others(await health()).map((p) => p.id), POLL).toEqual([]);
    expect(rowsInFile()).toEqual([killedId]);

    // The next process that beats deletes the expired row, and is itself the one listed.
    const later = await startMcp();
    try {
      await search(later.client, 1);
      await expect.poll(() => rowsInFile().includes(killedId), POLL).toBe(false);
      await expect
        .poll(
          async () => others(await health()).map((p) => p.runtime.agent.retrieval.search.operations),
          POLL,
        )
        .toEqual([1]);
    } finally {
      await later.client.close();
    }
  }, 60_000);
});

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
