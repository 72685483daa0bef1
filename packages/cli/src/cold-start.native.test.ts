/**
 * Cold start: a one-shot command loads only what it uses, through the composition root of `@engram/memory`. The MCP SDK (with its JSON-schema validator) and the
 * health page are loaded by the commands that serve them, the PostgreSQL store (and its `pg` driver) by a
 * PostgreSQL URL, event ingestion, extraction, the drain and maintenance by the commands that run them — never
 * by `search` or `remember` on a file, whose time to the first result is mostly module loading. Counted in
 * modules, never in time.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runNode } from '@engram/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url));

// A module hook that reports every module URL the child loads on stderr.
const HOOK = `import { register } from 'node:module';
register('data:text/javascript,' + encodeURIComponent(
  "export async function load(url, context, next) { process.stderr.write('LOADED ' + url + '\\\\n'); return next(url, context); }"));`;

function childEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !key.startsWith('ENGRAM_OPENAI_') && key !== 'NODE_OPTIONS') env[key] = value;
  }
  env.NO_COLOR = '1';
  env.ENGRAM_EMBEDDER = 'deterministic';
  return env;
}

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'engram-cold-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function loadedBy(args: readonly string[]): Promise<string[]> {
  const run = await runNode(CLI, args, {
    cwd: dir,
    env: { ...childEnv(), NODE_OPTIONS: `--import=data:text/javascript,${encodeURIComponent(HOOK)}` },
  });
  expect(run.code).toBe(0);
  return run.stderr
    .split('\n')
    .filter((line) => line.startsWith('LOADED '))
    .map((line) => line.slice('LOADED '.length));
}

describe('a one-shot command loads only what it uses', () => {
  it('search and remember never load the MCP SDK, the health page, PostgreSQL or the maintenance layer', async () => {
    const db = join(dir, 'cold.db');
    const remember = await loadedBy(['remember', 'the deploy pipeline runs on fridays', '--db', db]);
    const search = await loadedBy(['search', 'deploy pipeline', '--db', db]);
    for (const loaded of [remember, search]) {
      // The hook saw the CLI itself and the store: it really reports what the child loads.
      expect(loaded.some((url) => url.endsWith('/dist/cli.js'))).toBe(true);
      expect(loaded.some((url) => url.includes('/store/dist/'))).toBe(true);
      expect(loaded.filter((url) => url.includes('@modelcontextprotocol'))).toEqual([]);
      expect(loaded.filter((url) => url.includes('zod-to-json-schema'))).toEqual([]);
      expect(loaded.filter((url) => url.includes('/health-ui/'))).toEqual([]);
      for (const heavy of ['/store-postgres/', '/pg/', '/maintenance/']) {
        expect(loaded.filter((url) => url.includes(heavy))).toEqual([]);
      }
      // The composition root (`@engram/memory/compose`) wires the command, never the facade above it.
      expect(loaded.some((url) => url.endsWith('/memory/dist/compose.js'))).toBe(true);
      expect(
        loaded.filter(
          (url) => url.endsWith('/memory/dist/index.js') || url.endsWith('/memory/dist/memory.js'),
        ),
      ).toEqual([]);
      expect(loaded.filter((url) => url.endsWith('/dist/mcp.js') || url.endsWith('/dist/serve.js'))).toEqual(
        [],
      );
      // The other commands' modules come with their command; a memory id is made without the `uuid` package.
      for (const other of [
        '/cli/dist/commands-serve.js',
        '/cli/dist/transfer-commands.js',
        '/cli/dist/events-file.js',
      ]) {
        expect(loaded.filter((url) => url.endsWith(other))).toEqual([]);
      }
      expect(loaded.filter((url) => url.includes('/uuid/'))).toEqual([]);
    }
  });
});
