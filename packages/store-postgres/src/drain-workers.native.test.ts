// Several worker processes drain one embedding backlog through one server (the test's PostgreSQL), each
// running the maintenance drain: each row is embedded exactly once, except the one batch a worker had
// embedded when it was killed before committing (its in-flight call: embedded again by the others, nothing
// more); the rows claimed by workers killed mid-batch are taken over when their leases run out, none lost.
// Several writers race on one session: no write lost, none duplicated.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runNode } from '@engram/test-support';
import { expect, it } from 'vitest';
import { freshPostgresStore, testPgUrl } from './testing/fresh.js';

const WORKER = fileURLToPath(new URL('../dist/testing/drain-worker.js', import.meta.url));
const INGESTER = fileURLToPath(new URL('../dist/testing/ingest-worker.js', import.meta.url));
const ROWS = 60;

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

/** Embedder calls per row text, over the given logs. */
function callsPerRow(logs: readonly string[]): Map<string, number> {
  const calls = new Map<string, number>();
  for (const log of logs) {
    let text = '';
    try {
      text = readFileSync(log, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').filter((l) => l.length > 0)) {
      calls.set(line, (calls.get(line) ?? 0) + 1);
    }
  }
  return calls;
}

it('three workers drain one backlog exactly once while one dies holding claims and one dies before its commit', async () => {
  const store = await freshPostgresStore({ embedding: { id: 'drain-test', dimensions: 4 } });
  const dir = mkdtempSync(join(tmpdir(), 'engram-drain-'));
  try {
    const rows = await store.insertMemories(
      Array.from({ length: ROWS }, (_, i) => ({
        agentId: `agent-${i % 3}`,
        kind: 'fact' as const,
        content: `fact number ${i}`,
      })),
    );
    const url = testPgUrl();
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
    const runs = logs.map((log) => runNode(WORKER, [url, log]));
    stalled.kill();
    died.kill();
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

it('three writer processes race on one session: every event and every ingested memory exactly once', async () => {
  const store = await freshPostgresStore({ embedding: null });
  try {
    const url = testPgUrl();
    const runs = await Promise.all([0, 1, 2].map(() => runNode(INGESTER, [url, '15'])));
    expect(runs.map((r) => r.code)).toEqual([0, 0, 0]);
    const counts = runs.map(
      (r) => /appended (\d+) ingested (\d+)/.exec(r.stdout)?.slice(1).map(Number) ?? [],
    );
    expect(counts.reduce((s, c) => s + (c[0] ?? 0), 0)).toBe(15);
    expect(counts.reduce((s, c) => s + (c[1] ?? 0), 0)).toBe(15);
    expect(await store.getCursor('shared', 's1')).toBe(15);
    expect((await store.readEvents('shared', 's1', 1, 100)).map((e) => e.seq)).toEqual(
      Array.from({ length: 15 }, (_, i) => i + 1),
    );
    const memories = await store.listMemories('shared', { limit: 100 });
    const summaries = memories.map((m) => m.content).sort();
    expect(summaries).toEqual(Array.from({ length: 15 }, (_, i) => `summary of event ${i + 1}`).sort());
  } finally {
    await store.close();
  }
});
