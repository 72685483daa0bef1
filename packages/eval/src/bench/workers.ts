/**
 * The many-workers scenario of the benchmark (`--only workers`): for each worker count N (default 1, 2 and 4),
 * a fresh database — one SQLite file, or the PostgreSQL database of `--postgres` (a scratch one: its `public`
 * schema is dropped before each phase) — seeded with embedded rows, then N child processes (`workers-worker.ts`)
 * that open it through the composition root and each run the same fixed mix for a fixed number of operations:
 * per ten, four writes left pending, four hybrid searches, one embedding drain and one maintenance pass attempt,
 * then a last drain. Measured per phase: operations per second over all workers (the phase's wall time, from
 * `go` to the last worker done), write and search p50/p95, store conflicts retried and stale drain commits, the
 * workers' CPU time per operation and the cores they kept busy (beside the machine's load average); and,
 * counted, not timed: rows given to the embedder more than once (double embeddings), acknowledged writes not in
 * the store afterwards (lost rows), rows still pending after every drain, and maintenance leases of one agent
 * held at the same time (overlapping passes) beside the attempts skipped because another worker held the lease.
 */
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openEngine } from '@engram/memory/compose';
import pg from 'pg';
import type { HeldLease, WorkerFailure, WorkerResult, WorkerStart } from './workers-protocol.js';
import { workerAgent } from './workers-protocol.js';
import { percentile, rowText } from './workload.js';

/** Where the workers meet: one SQLite file (in a temporary directory) or a scratch PostgreSQL database. */
export type WorkersTarget = { readonly kind: 'sqlite' } | { readonly kind: 'postgres'; readonly url: string };

/** How the many-workers scenario is run. */
export interface WorkersScenarioConfig {
  readonly target: WorkersTarget;
  /** Worker counts, one phase each (the first is the ratios' base; 1 unless told). */
  readonly workerCounts: readonly number[];
  /** Operations of each worker (its last drain not counted). */
  readonly opsPerWorker: number;
  readonly agents: number;
  /** Embedded rows each agent starts with. */
  readonly seedRows: number;
  /** Rows per write operation. */
  readonly rowsPerWrite: number;
  /** The built worker module (default: `workers-worker.js` beside this module). */
  readonly workerModule?: string;
  readonly log: (line: string) => void;
}

/** One phase's figures: N workers on one database. */
export interface BenchWorkersPhase {
  readonly workers: number;
  readonly operations: number;
  readonly wallMs: number;
  readonly opsPerSec: number;
  /** This phase's operations per second ÷ the first phase's (1 worker), measured in the same run. */
  readonly ratioToFirst: number;
  readonly writeP50Ms: number;
  readonly writeP95Ms: number;
  readonly searchP50Ms: number;
  readonly searchP95Ms: number;
  /** Store errors the workers retried (busy, conflict), all codes together, and by code. */
  readonly conflicts: number;
  readonly conflictsByCode: Readonly<Record<string, number>>;
  /** Drain commits that found the row already settled by another worker (`stale`). */
  readonly staleCommits: number;
  /** Counted: rows written (acknowledged), rows given to the embedder, rows given to it more than once. */
  readonly rowsWritten: number;
  readonly rowsEmbedded: number;
  readonly doubleEmbeddings: number;
  /** Of those, rows given to the embedders of two or more workers. */
  readonly embeddedByTwoWorkers: number;
  /**
   * Embedder calls past the first, over all rows: each is a vector the store must refuse (a `stale` commit), so
   * with no other writer `staleCommits` equals it when every row's vector was committed once.
   */
  readonly extraEmbedCalls: number;
  /**
   * The workers' CPU time (user + system, from `go` to their last drain's end) per operation, in ms: the work
   * an operation costs, whatever the workers waited for (a lock, a core).
   */
  readonly cpuMsPerOp: number;
  /**
   * The workers' CPU time over the phase's wall time: the cores they kept busy on average. Below the worker
   * count, they waited; next to `loadAvg` it tells a lock (cores free) from a busy machine (none free).
   */
  readonly coresBusy: number;
  /**
   * Wall time of the writing operations (writes, drains, maintenance attempts) per operation, in ms, over all
   * workers: at one worker, an upper bound of the time an operation holds SQLite's single write lock, so
   * `1000 / writingMsPerOp` of the first phase bounds what any number of processes could reach on one file.
   */
  readonly writingMsPerOp: number;
  /** The machine's one-minute load average at the phase's end (other processes' demand for its cores). */
  readonly loadAvg: number;
  /** Acknowledged writes not found in the store afterwards. */
  readonly lostRows: number;
  /** Rows still pending once every worker's last drain finished. */
  readonly pendingAfter: number;
  readonly maintenance: {
    readonly attempts: number;
    readonly ran: number;
    /** Attempts that did nothing because another worker held the agent's lease. */
    readonly skipped: number;
    /** Leases the workers held (a pass that ran without one shows as `ran` above `leases`). */
    readonly leases: number;
    /** Pairs of leases of one agent held at the same time (must be 0). */
    readonly overlapping: number;
  };
}

/** The many-workers scenario's report. */
export interface BenchWorkersReport {
  readonly store: 'sqlite' | 'postgres';
  readonly agents: number;
  readonly opsPerWorker: number;
  readonly rowsPerWrite: number;
  readonly seedRows: number;
  readonly phases: readonly BenchWorkersPhase[];
}

/** The scenario's name for `--only`. */
export const WORKERS_SCENARIO: 'workers' = 'workers';

const PHASE_TIMEOUT_MS = 30 * 60_000;

/** Pairs of leases of the same agent whose [start, end] intervals intersect. */
export function overlappingLeases(leases: readonly HeldLease[]): number {
  const byAgent = new Map<string, { start: bigint; end: bigint }[]>();
  for (const l of leases) {
    const list = byAgent.get(l.agentId) ?? [];
    list.push({ start: BigInt(l.start), end: BigInt(l.end) });
    byAgent.set(l.agentId, list);
  }
  let pairs = 0;
  for (const list of byAgent.values()) {
    for (let i = 0; i < list.length; i += 1) {
      for (let j = i + 1; j < list.length; j += 1) {
        const a = list[i] as { start: bigint; end: bigint };
        const b = list[j] as { start: bigint; end: bigint };
        if (a.start < b.end && b.start < a.end) pairs += 1;
      }
    }
  }
  return pairs;
}

/** Rows given to the embedder more than once, and of those the rows given to two or more workers' embedders. */
export function doubleEmbeddings(perWorker: readonly (readonly string[])[]): {
  readonly rows: number;
  readonly doubles: number;
  readonly acrossWorkers: number;
  readonly extraCalls: number;
} {
  const calls = new Map<string, number>();
  const workers = new Map<string, Set<number>>();
  perWorker.forEach((tags, w) => {
    for (const tag of tags) {
      calls.set(tag, (calls.get(tag) ?? 0) + 1);
      const set = workers.get(tag) ?? new Set<number>();
      set.add(w);
      workers.set(tag, set);
    }
  });
  let doubles = 0;
  let acrossWorkers = 0;
  let extraCalls = 0;
  for (const [tag, n] of calls) {
    if (n > 1) doubles += 1;
    extraCalls += n - 1;
    if ((workers.get(tag)?.size ?? 0) > 1) acrossWorkers += 1;
  }
  return { rows: calls.size, doubles, acrossWorkers, extraCalls };
}

async function resetPostgres(url: string): Promise<void> {
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    await admin.query(
      'DROP SCHEMA IF EXISTS public CASCADE; CREATE SCHEMA public; CREATE EXTENSION IF NOT EXISTS vector;',
    );
  } finally {
    await admin.end();
  }
}

/** Creates the phase's database with `seedRows` embedded rows per agent. */
async function seed(path: string, config: WorkersScenarioConfig): Promise<void> {
  const engine = await openEngine({ path, embedder: 'deterministic' });
  try {
    for (let a = 0; a < config.agents; a += 1) {
      const rows = Array.from({ length: config.seedRows }, (_, k) => ({
        agentId: workerAgent(a),
        kind: 'fact' as const,
        content: `${rowText(a * config.seedRows + k)} s${a}n${k}`,
        importance: 0.5,
      }));
      for (let i = 0; i < rows.length; i += 500) await engine.store.insertMemories(rows.slice(i, i + 500));
    }
    await engine.drain();
  } finally {
    await engine.close();
  }
}

/** Forks N workers, starts them together, and resolves with each one's result (rejects when one fails). */
async function runWorkers(
  path: string,
  n: number,
  config: WorkersScenarioConfig,
  module: string,
): Promise<{ readonly results: readonly WorkerResult[]; readonly wallMs: number }> {
  const children = Array.from({ length: n }, () =>
    fork(module, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }),
  );
  let timer: NodeJS.Timeout | undefined;
  try {
    let t0 = 0n;
    const ready: Promise<void>[] = [];
    const done = children.map(
      (child, worker) =>
        new Promise<WorkerResult>((resolve, reject) => {
          let readied: () => void = () => undefined;
          ready.push(
            new Promise<void>((r) => {
              readied = r;
            }),
          );
          child.on('message', (m: WorkerResult | WorkerFailure | { readonly type: 'ready' }) => {
            if (m.type === 'ready') readied();
            else if (m.type === 'done') resolve(m);
            else reject(new Error(`worker ${worker} failed (${m.code})`));
          });
          child.once('exit', (code) => reject(new Error(`worker ${worker} exited (${code ?? 'signal'})`)));
          child.once('error', reject);
          const start: WorkerStart = {
            type: 'start',
            path,
            worker,
            ops: config.opsPerWorker,
            agents: config.agents,
            seedRows: config.seedRows,
            rowsPerWrite: config.rowsPerWrite,
          };
          child.send(start);
        }),
    );
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('the phase timed out')), PHASE_TIMEOUT_MS);
    });
    // A worker that fails before it is ready fails the phase at once.
    await Promise.race([Promise.all(ready), Promise.all(done), timeout]);
    t0 = process.hrtime.bigint();
    for (const child of children) child.send({ type: 'go' });
    const results = await Promise.race([Promise.all(done), timeout]);
    const wallMs = Number(process.hrtime.bigint() - t0) / 1e6;
    return { results, wallMs };
  } finally {
    if (timer !== undefined) clearTimeout(timer);
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill();
  }
}

/** What the store holds afterwards: acknowledged rows missing, and rows still pending. */
async function verify(
  path: string,
  results: readonly WorkerResult[],
): Promise<{ readonly lost: number; readonly pending: number }> {
  const engine = await openEngine({ path, embedder: 'deterministic' });
  try {
    let lost = 0;
    for (const r of results) {
      for (const [, agentId, id] of r.written) {
        if ((await engine.store.getMemory(agentId, id)) === null) lost += 1;
      }
    }
    return { lost, pending: (await engine.store.countEmbeddingBacklog()).total };
  } finally {
    await engine.close();
  }
}

/** Runs the many-workers scenario (see the module comment). */
export async function runWorkersScenario(config: WorkersScenarioConfig): Promise<BenchWorkersReport> {
  const module = config.workerModule ?? fileURLToPath(new URL('./workers-worker.js', import.meta.url));
  const dir = config.target.kind === 'sqlite' ? mkdtempSync(join(tmpdir(), 'engram-workers-')) : null;
  const phases: BenchWorkersPhase[] = [];
  try {
    for (const n of config.workerCounts) {
      let path: string;
      if (config.target.kind === 'postgres') {
        path = config.target.url;
        await resetPostgres(path);
      } else {
        path = join(dir as string, `workers-${n}.sqlite`);
      }
      await seed(path, config);
      config.log(`[workers] ${n} worker(s) × ${config.opsPerWorker} operations on ${config.target.kind}`);
      const { results, wallMs } = await runWorkers(path, n, config, module);
      const { lost, pending } = await verify(path, results);
      const embedded = doubleEmbeddings(results.map((r) => r.embedded));
      const conflictsByCode: Record<string, number> = {};
      for (const r of results) {
        for (const [code, count] of Object.entries(r.conflicts)) {
          conflictsByCode[code] = (conflictsByCode[code] ?? 0) + count;
        }
      }
      const operations = results.reduce((sum, r) => sum + r.ops, 0);
      const opsPerSec = operations / (wallMs / 1000);
      const writeMs = results.flatMap((r) => r.writeMs);
      const searchMs = results.flatMap((r) => r.searchMs);
      const cpuMs = results.reduce((s, r) => s + r.cpuMs, 0);
      const ran = results.reduce((s, r) => s + r.maintenance.ran, 0);
      const skipped = results.reduce((s, r) => s + r.maintenance.skipped, 0);
      phases.push({
        workers: n,
        operations,
        wallMs,
        opsPerSec,
        ratioToFirst: opsPerSec / (phases[0]?.opsPerSec ?? opsPerSec),
        writeP50Ms: percentile(writeMs, 0.5),
        writeP95Ms: percentile(writeMs, 0.95),
        searchP50Ms: percentile(searchMs, 0.5),
        searchP95Ms: percentile(searchMs, 0.95),
        conflicts: Object.values(conflictsByCode).reduce((s, c) => s + c, 0),
        conflictsByCode,
        staleCommits: results.reduce((s, r) => s + r.staleCommits, 0),
        rowsWritten: results.reduce((s, r) => s + r.written.length, 0),
        rowsEmbedded: embedded.rows,
        doubleEmbeddings: embedded.doubles,
        embeddedByTwoWorkers: embedded.acrossWorkers,
        extraEmbedCalls: embedded.extraCalls,
        cpuMsPerOp: cpuMs / operations,
        coresBusy: cpuMs / wallMs,
        writingMsPerOp: results.reduce((s, r) => s + r.writingMs, 0) / operations,
        loadAvg: loadavg()[0] ?? Number.NaN,
        lostRows: lost,
        pendingAfter: pending,
        maintenance: {
          attempts: ran + skipped,
          ran,
          skipped,
          leases: results.reduce((s, r) => s + r.maintenance.leases.length, 0),
          overlapping: overlappingLeases(results.flatMap((r) => r.maintenance.leases)),
        },
      });
    }
  } finally {
    if (dir !== null) rmSync(dir, { recursive: true, force: true });
  }
  return {
    store: config.target.kind,
    agents: config.agents,
    opsPerWorker: config.opsPerWorker,
    rowsPerWrite: config.rowsPerWrite,
    seedRows: config.seedRows,
    phases,
  };
}

function fixed(value: number, digits: number): string {
  return Number.isFinite(value) ? value.toFixed(digits) : '—';
}

/** The scenario's table: one row per worker count. */
export function formatWorkersLines(report: BenchWorkersReport | undefined): string[] {
  if (report === undefined) return [];
  const header = [
    'workers',
    'ops',
    'ops/s',
    '×1 worker',
    'write p50',
    'p95',
    'search p50',
    'p95',
    'conflicts',
    'stale',
    'written',
    'double emb.',
    'lost',
    'pending',
    'maint. ran',
    'skipped',
    'overlap',
    'cpu ms/op',
    'cores busy',
    'writing ms/op',
    'load',
  ];
  const rows = report.phases.map((p) => [
    String(p.workers),
    String(p.operations),
    fixed(p.opsPerSec, 1),
    fixed(p.ratioToFirst, 2),
    fixed(p.writeP50Ms, 2),
    fixed(p.writeP95Ms, 2),
    fixed(p.searchP50Ms, 2),
    fixed(p.searchP95Ms, 2),
    String(p.conflicts),
    String(p.staleCommits),
    String(p.rowsWritten),
    String(p.doubleEmbeddings),
    String(p.lostRows),
    String(p.pendingAfter),
    String(p.maintenance.ran),
    String(p.maintenance.skipped),
    String(p.maintenance.overlapping),
    fixed(p.cpuMsPerOp, 2),
    fixed(p.coresBusy, 2),
    fixed(p.writingMsPerOp, 2),
    fixed(p.loadAvg, 1),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]): string =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join('  ');
  return [
    '',
    `workers on one ${report.store} database (${report.agents} agents × ${report.seedRows} seeded rows; each worker ${report.opsPerWorker} operations: per 10, 4 writes of ${report.rowsPerWrite} rows left pending, 4 hybrid searches, 1 drain, 1 maintenance attempt; ms; counted: double embeddings, lost rows, pending after the drains, overlapping maintenance leases; cpu: the workers' CPU time per operation, the cores they kept busy, the wall time of the writing operations per operation, the machine's load average)`,
    line(header),
    line(widths.map((w) => '-'.repeat(w))),
    ...rows.map(line),
  ];
}
