// Embedding claims (`claimLeaseMs`) on one SQLite file. Through the store port: several stores on the file are
// several claimants; each lists (claims) rows no other live claim holds, a claim whose lease ran out is taken
// over and its old holder's late commit is `stale`. Then real processes (`testing/claim-worker.ts`) drain one
// backlog together: each row is embedded once, except the one batch a worker had embedded when it was killed
// before committing; the rows of a worker killed holding its claims are taken over once its lease runs out.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import type { EmbeddingOutcome, PendingEmbedding } from '@engram/store';
import { runNode } from '@engram/test-support';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { createSqliteMemoryStore, type SqliteMemoryStore } from './sqlite-store.js';

const WORKER = fileURLToPath(new URL('../dist/testing/claim-worker.js', import.meta.url));
const PROFILE = { id: 'claims-test', dimensions: 4 };
let dir: string;
const open: SqliteMemoryStore[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'engram-claims-'));
});

afterEach(() => {
  for (const s of open.splice(0)) s.close();
  rmSync(dir, { recursive: true, force: true });
});

function openStore(path: string, options: { claimLeaseMs?: number; now?: () => number } = {}) {
  const store = createSqliteMemoryStore({ path, embedding: PROFILE, vectorWorker: false, ...options });
  open.push(store);
  return store;
}

function ready(rows: readonly PendingEmbedding[]): EmbeddingOutcome[] {
  return rows.map((r) => ({
    id: r.id,
    revision: r.revision,
    ...(r.chunk === undefined ? {} : { chunk: r.chunk }),
    state: 'ready' as const,
    vector: new Float32Array([0.5, 0.5, 0.5, 0.5]),
  }));
}

const ids = (list: readonly PendingEmbedding[]) => list.map((r) => r.id);

it('stores claim disjoint rows, and a claim whose lease ran out is taken over: its late commit is stale', async () => {
  const path = join(dir, 'claims.db');
  let clock = 1_000_000;
  const now = () => clock;
  const a = openStore(path, { claimLeaseMs: 600_000, now });
  const b = openStore(path, { claimLeaseMs: 600_000, now });
  const short = openStore(path, { claimLeaseMs: 100, now });
  const plain = openStore(path, { now });
  const rows = await a.insertMemories(
    Array.from({ length: 15 }, (_, i) => ({ agentId: 'agent', kind: 'fact' as const, content: `fact ${i}` })),
  );
  const byA = await a.listPendingEmbeddings({ limit: 5 });
  const byB = await b.listPendingEmbeddings({ limit: 5 });
  const byShort = await short.listPendingEmbeddings({ limit: 5 });
  // Three claimants, fifteen rows: each took five, none taken twice, in insertion order.
  expect([...ids(byA), ...ids(byB), ...ids(byShort)]).toEqual(rows.map((r) => r.id));
  expect(await a.listPendingEmbeddings({ limit: 5 })).toEqual(byA);
  // A live claim is skipped: B, asking for every row, gets its own back and none of the others'.
  expect(ids(await b.listPendingEmbeddings({ limit: 15 }))).toEqual(ids(byB));
  // A store without claims lists as before: every pending row, claimed or not.
  expect(ids(await plain.listPendingEmbeddings({ limit: 15 }))).toEqual(rows.map((r) => r.id));
  // Once the short lease has run out, B takes those rows over (A's long claim still holds).
  clock += 101;
  const taken = await b.listPendingEmbeddings({ limit: 15 });
  expect(ids(taken)).toEqual([...ids(byB), ...ids(byShort)]);
  // The old holder's late commit changes nothing; the new holder's and A's commits settle every row.
  expect(await short.commitEmbeddings(ready(byShort))).toEqual({ ready: 0, error: 0, ftsOnly: 0, stale: 5 });
  expect(await b.commitEmbeddings(ready(taken))).toEqual({ ready: 10, error: 0, ftsOnly: 0, stale: 0 });
  expect(await a.commitEmbeddings(ready(byA))).toEqual({ ready: 5, error: 0, ftsOnly: 0, stale: 0 });
  expect((await a.countEmbeddingBacklog()).total).toBe(0);
  for (const r of rows) expect((await a.getMemory(r.agentId, r.id))?.embeddingState).toBe('ready');
});

it('a commit gives the claim up, a failed row is listed again at once, and a closed store frees its claims', async () => {
  const path = join(dir, 'release.db');
  const a = openStore(path, { claimLeaseMs: 600_000 });
  const b = openStore(path, { claimLeaseMs: 600_000 });
  const [first, second] = await a.insertMemories([
    { agentId: 'agent', kind: 'fact', content: 'the first fact' },
    { agentId: 'agent', kind: 'fact', content: 'the second fact' },
  ]);
  const byA = await a.listPendingEmbeddings({ limit: 2, retryErrorsBelowAttempts: 3 });
  expect(ids(byA)).toEqual([first?.id, second?.id]);
  expect(await b.listPendingEmbeddings({ limit: 2, retryErrorsBelowAttempts: 3 })).toEqual([]);
  // A fails the first row: the claim goes with the commit, so B retries it now, not after the lease.
  const failed = byA[0] as PendingEmbedding;
  expect(
    await a.commitEmbeddings([
      { id: failed.id, revision: failed.revision, state: 'error', code: 'ENGRAM_PROVIDER_TIMEOUT' },
    ]),
  ).toEqual({ ready: 0, error: 1, ftsOnly: 0, stale: 0 });
  expect(ids(await b.listPendingEmbeddings({ limit: 2, retryErrorsBelowAttempts: 3 }))).toEqual([first?.id]);
  // A closes with its claim on the second row still held: B gets it at once.
  a.close();
  expect(ids(await b.listPendingEmbeddings({ limit: 2, retryErrorsBelowAttempts: 3 }))).toEqual([
    first?.id,
    second?.id,
  ]);
});

it('claims need a writable store', async () => {
  const path = join(dir, 'read.db');
  openStore(path).close();
  expect(() => createSqliteMemoryStore({ path, access: 'read', claimLeaseMs: 1000 })).toThrow(
    expect.objectContaining({ code: 'ENGRAM_STORE_INVALID_INPUT' }),
  );
  expect(() => createSqliteMemoryStore({ path, claimLeaseMs: 10 })).toThrow(
    expect.objectContaining({ code: 'ENGRAM_STORE_INVALID_INPUT' }),
  );
});

/** Starts a worker that stops mid-batch (`--stall` or `--die-after-embed`) and resolves once it got there. */
function startDying(
  path: string,
  log: string,
  flag: '--stall' | '--die-after-embed',
): Promise<{ kill: () => void; rows: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [WORKER, path, log, flag], {
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
    for (const line of readFileSync(log, 'utf8').split('\n')) {
      if (line.length > 0) calls.set(line, (calls.get(line) ?? 0) + 1);
    }
  }
  return calls;
}

it('three processes drain one file exactly once while one dies holding claims and one dies before its commit', async () => {
  const path = join(dir, 'drain.db');
  const ROWS = 60;
  const store = openStore(path);
  const rows = await store.insertMemories(
    Array.from({ length: ROWS }, (_, i) => ({
      agentId: `agent-${i % 3}`,
      kind: 'fact' as const,
      content: `fact number ${i}`,
    })),
  );
  const stalled = await startDying(path, join(dir, 'stalled.log'), '--stall');
  expect(stalled.rows).toBe(5);
  const diedLog = join(dir, 'died.log');
  const died = await startDying(path, diedLog, '--die-after-embed');
  expect(died.rows).toBe(5);
  const inFlight = new Set(callsPerRow([diedLog]).keys());
  expect(inFlight.size).toBe(5);
  const logs = [0, 1, 2].map((i) => join(dir, `worker-${i}.log`));
  // The survivors start draining together, once each is ready (its log exists).
  const go = join(dir, 'go');
  const runs = logs.map((log) => runNode(WORKER, [path, log, '--start-on', go]));
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
  // Over all processes: twice for the killed worker's in-flight batch only, once for every other row.
  const all = callsPerRow([...logs, diedLog]);
  expect(new Set([...all].filter(([, n]) => n === 2).map(([text]) => text))).toEqual(inFlight);
  expect([...all.values()].filter((n) => n !== 1 && n !== 2)).toEqual([]);
  expect((await store.countEmbeddingBacklog()).total).toBe(0);
  for (const r of rows) expect((await store.getMemory(r.agentId, r.id))?.embeddingState).toBe('ready');
}, 60_000);
