// Several worker processes drain one embedding backlog through one PostgreSQL (PGlite over the wire protocol
// started here, or the scratch server named by ENGRAM_PG_URL), each running the maintenance drain on
// `@engram/store-postgres` with claims: each row is embedded exactly once, except the one batch a worker had
// embedded when it was killed before committing (its in-flight call: embedded again by the others, nothing
// more); the rows claimed by workers killed mid-batch are taken over when their leases run out, none lost.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { createPostgresMemoryStore } from '@engram/store-postgres';
import { resetTestPostgres, runNode, startTestPostgres, type TestPostgres } from '@engram/test-support';
import { afterAll, beforeAll, expect, it } from 'vitest';

const WORKER = fileURLToPath(new URL('../dist/testing/drain-worker.js', import.meta.url));
const ROWS = 60;
let server: TestPostgres;

beforeAll(async () => {
  server = await startTestPostgres({ database: 'engram_test_maintenance' });
  await resetTestPostgres(server.url);
});

afterAll(async () => {
  await server.stop();
});

/** Starts a worker that stops mid-batch (`--stall` or `--die-after-embed`) and resolves once it got there. */
function startDying(
  url: string,
  log: string,
  flag: '--stall' | '--die-after-embed',
): Promise<{ kill: () => void; rows: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [WORKER, url, log, flag], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
      const m = /(?:claimed|embedded) (\d+)/.exec(out);
      if (m !== null) resolve({ kill: () => child.kill('SIGKILL'), rows: Number(m[1]) });
    });
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`the dying worker exited early (${code})`)));
  });
}

/** Embedder calls per row text, over the given logs (every worker creates its log before it drains). */
function callsPerRow(logs: readonly string[]): Map<string, number> {
  const calls = new Map<string, number>();
  for (const log of logs) {
    const text = readFileSync(log, 'utf8');
    for (const line of text.split('\n').filter((l) => l.length > 0)) {
      calls.set(line, (calls.get(line) ?? 0) + 1);
    }
  }
  return calls;
}

it('three workers drain one backlog exactly once while one dies holding claims and one dies before its commit', async () => {
  const url = server.url;
  const store = await createPostgresMemoryStore({
    connectionString: url,
    poolSize: 4,
    embedding: { id: 'drain-test', dimensions: 4 },
  });
  const dir = mkdtempSync(join(tmpdir(), 'engram-drain-'));
  try {
    const rows = await store.insertMemories(
      Array.from({ length: ROWS }, (_, i) => ({
        agentId: `agent-${i % 3}`,
        kind: 'fact' as const,
        content: `fact number ${i}`,
      })),
    );
    const stalled = await startDying(url, join(dir, 'stalled.log'), '--stall');
    expect(stalled.rows).toBe(5);
    const diedLog = join(dir, 'died.log');
    const died = await startDying(url, diedLog, '--die-after-embed');
    expect(died.rows).toBeGreaterThan(0);
    const inFlight = new Set(
      readFileSync(diedLog, 'utf8')
        .split('\n')
        .filter((l) => l.length > 0),
    );
    expect(inFlight.size).toBe(5);
    const logs = [0, 1, 2].map((i) => join(dir, `worker-${i}.log`));
    // The survivors start draining together, once each is ready (its log exists): a worker slow to start
    // on a loaded machine would otherwise find the backlog already drained by the others.
    const go = join(dir, 'go');
    const runs = logs.map((log) => runNode(WORKER, [url, log, '--start-on', go]));
    let exited = false;
    void Promise.race(runs).then(() => {
      exited = true;
    });
    while (!exited && !logs.every((log) => existsSync(log))) await sleep(10);
    stalled.kill();
    died.kill();
    writeFileSync(go, '');
    const results = await Promise.all(runs);
    expect(results.map((r) => r.code)).toEqual([0, 0, 0]);

    // The survivors embedded every row once, the stalled worker's claims included (it embedded nothing).
    const survivors = callsPerRow(logs);
    expect(survivors.size).toBe(ROWS);
    expect([...survivors.values()].every((n) => n === 1)).toBe(true);
    expect(logs.filter((log) => callsPerRow([log]).size > 0).length).toBeGreaterThan(1);
    // Over all processes: twice for the killed worker's in-flight call only, once for every other row.
    const all = callsPerRow([...logs, diedLog]);
    const twice = [...all].filter(([, n]) => n === 2).map(([text]) => text);
    expect(new Set(twice)).toEqual(inFlight);
    expect([...all.values()].filter((n) => n !== 1 && n !== 2)).toEqual([]);
    expect((await store.countEmbeddingBacklog()).total).toBe(0);
    for (const r of rows) expect((await store.getMemory(r.agentId, r.id))?.embeddingState).toBe('ready');
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
