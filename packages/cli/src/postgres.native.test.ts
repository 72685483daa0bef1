// The built `engram` CLI on a PostgreSQL database (`--db postgres://…`): PGlite over the wire protocol started
// here, or the scratch server named by ENGRAM_PG_URL.
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { resetTestPostgres, runNode, startTestPostgres, type TestPostgres } from '@engram/test-support';
import { afterAll, beforeAll, expect, it } from 'vitest';

const CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
let server: TestPostgres;
let dir: string;

beforeAll(async () => {
  server = await startTestPostgres({ database: 'engram_test_cli' });
  await resetTestPostgres(server.url);
  dir = await mkdtemp(join(tmpdir(), 'engram-cli-pg-'));
});

afterAll(async () => {
  await server.stop();
  await rm(dir, { recursive: true, force: true });
});

function cli(args: readonly string[], env: Readonly<Record<string, string>> = {}) {
  return runNode(CLI, args, { cwd: dir, env: { ...process.env, NO_COLOR: '1', ...env } });
}

it('remembers, embeds and searches through --db postgres://…, and keeps the embedder the database records', async () => {
  const db = server.url;
  const remembered = await cli(
    ['remember', 'The staging database runs on port 5433.', '--db', db, '--agent', 'ops'],
    {
      ENGRAM_EMBEDDER: 'deterministic',
    },
  );
  expect(remembered.stderr).toBe('');
  expect(remembered.stdout).toMatch(/^Remembered as fact [\w-]+\.$/m);
  const again = await cli([
    'remember',
    'The staging database runs on port 5433.',
    '--db',
    db,
    '--agent',
    'ops',
  ]);
  expect(again.stdout).toContain('Already remembered as fact');
  const found = await cli(['search', 'staging port', '--explain', '--db', db, '--agent', 'ops']);
  expect(found.code).toBe(0);
  expect(found.stdout).toContain('fact   The staging database runs on port 5433.');
  expect(found.stdout).toMatch(/lexical #1/);
  const other = await cli(['search', 'staging port', '--db', db, '--agent', 'someone-else']);
  expect(other.stdout).toContain('(no results)');
  const refused = await cli(['search', 'staging', '--db', db, '--agent', 'ops'], { ENGRAM_EMBEDDER: 'use' });
  expect(refused.code).not.toBe(0);
  expect(refused.stderr).toContain('ENGRAM_CLI_EMBEDDER_MISMATCH');
});

it('an unreachable server is a typed error without the URL or a stack trace', async () => {
  const run = await cli(['search', 'x', '--db', 'postgres://secret-user:secret-pass@127.0.0.1:1/db']);
  expect(run.code).not.toBe(0);
  expect(run.stderr).not.toContain('secret');
  expect(run.stderr).not.toMatch(/\n\s+at /);
});

/** `engram <args>` through a shell (for `<` and `>`), in the test directory. */
function shell(args: string, env: Readonly<Record<string, string>> = {}) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn('/bin/sh', ['-c', `"${process.execPath}" "${CLI}" ${args}`], {
      cwd: dir,
      env: { ...process.env, NO_COLOR: '1', ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
    });
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

it('imports an export made with another embedder into an existing database, which keeps its own embedder', async () => {
  const db = server.url; // bound to the deterministic embedder by the first test
  const made = await shell(`remember "The cache TTL is 300 seconds." --db u.db --agent ops`, {
    ENGRAM_EMBEDDER: 'use',
  });
  expect(made.code).toBe(0);
  expect((await shell('export --db u.db > u.jsonl')).code).toBe(0);
  const imported = await shell(`import --db "${db}" --json < u.jsonl`);
  expect(imported.stderr).toBe('');
  expect(imported.code).toBe(0);
  const found = await cli(['search', 'cache TTL', '--db', db, '--agent', 'ops']);
  expect(found.stdout).toContain('The cache TTL is 300 seconds.');
  const still = await cli(['search', 'staging port', '--db', db, '--agent', 'ops']);
  expect(still.stdout).toContain('The staging database runs on port 5433.');
});
