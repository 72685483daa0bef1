/**
 * A crashed maintenance pass does not block the next: a child process running a pass (holding the agent's
 * maintenance lease, renewing it) is killed with SIGKILL; `engram maintain` then runs once the lease has lapsed,
 * and `engram maintain --force` takes it over at once and says so. The lapse is simulated with the holder's
 * store clock set back by the lease's length (no waiting on the wall clock).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { DETERMINISTIC_PROFILE } from '@engram/embedder-deterministic';
import { DEFAULT_MAINTENANCE_LEASE_MS } from '@engram/maintenance';
import { createSqliteMemoryStore } from '@engram/store-sqlite';
import { runNode } from '@engram/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LEASE_SECONDS } from './commands.js';

const CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
const require = createRequire(import.meta.url);
const STORE = pathToFileURL(require.resolve('@engram/store-sqlite')).href;
const MAINTENANCE = pathToFileURL(require.resolve('@engram/maintenance')).href;

/**
 * A worker whose pass hangs inside the cheap phase while it holds (and renews) the lease; its store clock runs
 * `skew` ms behind. Prints `held` once the pass is inside, holding the lease.
 */
const HOLDER = `
const [path, skew] = [process.argv[1], Number(process.argv[2])];
const { createSqliteMemoryStore } = await import(${JSON.stringify(STORE)});
const { createMaintenanceRunner } = await import(${JSON.stringify(MAINTENANCE)});
const real = createSqliteMemoryStore({ path, now: () => Date.now() - skew });
const store = new Proxy(real, {
  get(target, prop) {
    if (prop === 'listMemories') {
      process.stdout.write('held\\n');
      return () => new Promise(() => {});
    }
    const value = Reflect.get(target, prop, target);
    return typeof value === 'function' ? value.bind(target) : value;
  },
});
setInterval(() => {}, 1000);
await createMaintenanceRunner({ store, timers: { setTimeout, clearTimeout } }).run('old');
`;

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'engram-cli-lease-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function seed(name: string): Promise<string> {
  const path = join(dir, name);
  const store = createSqliteMemoryStore({ path, embedding: DETERMINISTIC_PROFILE });
  await store.insertMemories([
    { agentId: 'old', kind: 'semantic', content: 'a note to keep', importance: 0 },
  ]);
  store.close();
  return path;
}

/** Starts a holder on `path` and resolves once its pass holds the lease. */
async function holder(path: string, skew: number): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--input-type=module', '-e', HOLDER, path, String(skew)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout?.setEncoding('utf8').on('data', (c: string) => {
      if (c.includes('held')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`holder exited (${code})`)));
  });
  return child;
}

async function killed(child: ChildProcess): Promise<void> {
  const gone = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await gone;
}

function maintain(path: string, ...flags: string[]) {
  return runNode(CLI, ['maintain', '--db', path, '--agent', 'old', ...flags], {
    cwd: dir,
    env: { ...process.env, NO_COLOR: '1', ENGRAM_EMBEDDER: 'deterministic' },
  });
}

describe('engram maintain after a pass was killed', () => {
  it('names the lease length the maintenance package uses', () => {
    expect(LEASE_SECONDS * 1000).toBe(DEFAULT_MAINTENANCE_LEASE_MS);
  });

  it('a lease whose holder was killed lapses after its length: the next maintain runs', async () => {
    const path = await seed('lapsed.db');
    // The holder's clock is one lease length (and a second) behind: its last renewal is that long ago.
    await killed(await holder(path, DEFAULT_MAINTENANCE_LEASE_MS + 1000));
    const run = await maintain(path);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('old: cheap completed');
    expect(run.stdout).not.toContain('took over');
  });

  it('a live lease of a killed holder blocks a plain maintain, and --force takes it over at once, saying so', async () => {
    const path = await seed('held.db');
    await killed(await holder(path, 0));
    const blocked = await maintain(path);
    expect(blocked.stdout).toContain("old: skipped (another process holds this agent's maintenance lease");
    expect(blocked.stdout).toContain('--force takes it over');
    const forced = await maintain(path, '--force');
    expect(forced.code).toBe(0);
    expect(forced.stdout).toContain('old: cheap completed');
    expect(forced.stdout).toContain("took over this agent's maintenance lease from another holder (--force)");
    // Released at the end of the forced pass: the next plain pass runs.
    expect((await maintain(path)).stdout).toContain('old: cheap completed');
  });
});
