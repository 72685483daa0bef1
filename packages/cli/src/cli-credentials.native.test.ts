/**
 * No credential in any output: every `engram` command that takes `--db`, given a PostgreSQL URL with a
 * password, prints neither the password on stdout nor on stderr — when the server is unreachable, and when it
 * answers (PGlite over the wire protocol, which takes any password; or the scratch server of ENGRAM_PG_URL).
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { resetTestPostgres, runNode, startTestPostgres, type TestPostgres } from '@engram/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMMAND_NAMES, SPECS } from './args-spec.js';

const CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
const SECRET = 'secret';
const UNREACHABLE = `postgres://user:${SECRET}@127.0.0.1:1/x`;

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'engram-cli-credentials-'));
  await writeFile(
    join(dir, 'events.jsonl'),
    `${JSON.stringify({ sessionId: 's1', seq: 1, type: 'message', role: 'user', content: 'hello' })}\n`,
  );
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The arguments that run `name` against `db` (once: serve and mcp answer and stop, or fail to connect). */
function argsOf(name: string, db: string): string[] {
  switch (name) {
    case 'remember':
      return ['remember', 'The staging database runs on port 5433.', '--db', db];
    case 'search':
      return ['search', 'staging port', '--db', db];
    case 'get':
    case 'forget':
    case 'history':
      return [name, '00000000-0000-0000-0000-000000000000', '--db', db];
    case 'update':
      return ['update', '00000000-0000-0000-0000-000000000000', 'The port is 5434.', '--db', db];
    case 'ingest':
      return ['ingest', 'events.jsonl', '--db', db];
    case 'serve':
      return ['serve', '--db', db, '--port', '0'];
    default:
      return [name, '--db', db];
  }
}

/** Every command whose options include `--db`. */
const DB_COMMANDS = COMMAND_NAMES.filter((name) => 'db' in SPECS[name].options);

function run(args: readonly string[]) {
  return runNode(CLI, args, {
    cwd: dir,
    env: { ...process.env, NO_COLOR: '1', ENGRAM_EMBEDDER: 'deterministic' },
  });
}

describe('no credential in any output', () => {
  it('names every command that takes --db', () => {
    expect(DB_COMMANDS).toEqual(
      expect.arrayContaining(['remember', 'search', 'ingest', 'maintain', 'export', 'import', 'health']),
    );
  });

  it.each(DB_COMMANDS)(
    'engram %s with an unreachable postgres://user:secret@… prints no password',
    async (name) => {
      const r = await run(argsOf(name, UNREACHABLE));
      expect(r.code).not.toBe(0);
      expect(`${r.stdout}\n${r.stderr}`).not.toContain(SECRET);
      expect(r.stderr).not.toMatch(/\n\s+at /);
    },
  );
});

describe('no credential in any output, on a live server', () => {
  let server: TestPostgres;
  let db: string;
  beforeAll(async () => {
    server = await startTestPostgres({ database: 'engram_test_credentials' });
    await resetTestPostgres(server.url);
    const url = new URL(server.url);
    url.password = SECRET;
    db = url.toString();
  });
  afterAll(async () => {
    await server.stop();
  });

  it('remember, ingest, search, get, drain, maintain, export, import and health print the URL without its password', async () => {
    const outputs: string[] = [];
    for (const name of ['remember', 'ingest', 'search', 'get', 'drain', 'maintain', 'export', 'health']) {
      const r = await run(argsOf(name, db));
      outputs.push(r.stdout, r.stderr);
    }
    const exported = await run(['export', '--db', db]);
    await writeFile(join(dir, 'pg.jsonl'), exported.stdout);
    const imported = await new Promise<{ code: number | null; stdout: string; stderr: string }>(
      (resolve, reject) => {
        const child = spawn(
          '/bin/sh',
          ['-c', `"${process.execPath}" "${CLI}" import --db '${db}' < pg.jsonl`],
          { cwd: dir, env: { ...process.env, NO_COLOR: '1', ENGRAM_EMBEDDER: 'deterministic' } },
        );
        let stdout = '';
        let stderr = '';
        child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
        child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
        child.once('error', reject);
        child.once('close', (code) => resolve({ code, stdout, stderr }));
      },
    );
    expect(imported.code).toBe(0);
    expect(imported.stdout).toContain('Imported into postgres://postgres:***@');
    outputs.push(imported.stdout, imported.stderr);
    expect(outputs.join('\n')).not.toContain(SECRET);
  });
});
