// Several worker processes drain one embedding backlog through one server (the test's PostgreSQL): each row
// is embedded exactly once, and the rows claimed by a worker killed mid-batch are taken over by the others
// when its lease runs out, none lost. Several writers race on one session: no write lost, none duplicated.
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

/** Starts the stalling worker and resolves once it holds its claims; the caller kills it. */
function startStalled(url: string, log: string): Promise<{ kill: () => void; claimed: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [WORKER, url, log, '--stall'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
      const m = /claimed (\d+)/.exec(out);
      if (m !== null) resolve({ kill: () => child.kill('SIGKILL'), claimed: Number(m[1]) });
    });
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`the stalled worker exited early (${code})`)));
  });
}

it('three workers drain one backlog exactly once while a fourth dies holding claims', async () => {
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
    const stalledLog = join(dir, 'stalled.log');
    const stalled = await startStalled(url, stalledLog);
    expect(stalled.claimed).toBe(5);
    const logs = [0, 1, 2].map((i) => join(dir, `worker-${i}.log`));
    const runs = logs.map((log) => runNode(WORKER, [url, log]));
    stalled.kill();
    const results = await Promise.all(runs);
    expect(results.map((r) => r.code)).toEqual([0, 0, 0]);

    const calls = new Map<string, number>();
    for (const log of logs) {
      for (const id of readFileSync(log, 'utf8')
        .split('\n')
        .filter((l) => l.length > 0)) {
        calls.set(id, (calls.get(id) ?? 0) + 1);
      }
    }
    // Every row embedded, each exactly once, and by more than one worker.
    expect(calls.size).toBe(ROWS);
    expect([...calls.values()].every((n) => n === 1)).toBe(true);
    expect(logs.filter((log) => readFileSync(log, 'utf8').length > 0).length).toBeGreaterThan(1);
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
