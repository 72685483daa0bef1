import { fileURLToPath } from 'node:url';
import { resetTestPostgres, startTestPostgres, type TestPostgres } from '@engram/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type BenchWorkersReport,
  doubleEmbeddings,
  formatWorkersLines,
  overlappingLeases,
  runWorkersScenario,
  type WorkersTarget,
} from './workers.js';

// The many-workers scenario of `pnpm bench` (`--only workers`) at a small size: two worker processes (the built
// worker module, forked) on one SQLite file and on one PostgreSQL (PGlite over the wire protocol, or the server
// of ENGRAM_PG_URL). Only what it counts is asserted — never a wall-clock figure (the bench measures those).

const WORKER = fileURLToPath(new URL('../../dist/bench/workers-worker.js', import.meta.url));

function run(target: WorkersTarget): Promise<BenchWorkersReport> {
  return runWorkersScenario({
    target,
    workerCounts: [1, 2],
    opsPerWorker: 40,
    agents: 2,
    seedRows: 20,
    rowsPerWrite: 3,
    workerModule: WORKER,
    log: () => undefined,
  });
}

function expectInvariants(report: BenchWorkersReport): void {
  expect(report.phases.map((p) => p.workers)).toEqual([1, 2]);
  for (const p of report.phases) {
    expect(p.operations).toBe(40 * p.workers);
    // 16 writes of 3 rows per worker, every one acknowledged and found again.
    expect(p.rowsWritten).toBe(48 * p.workers);
    expect(p.lostRows).toBe(0);
    // Every written row was embedded and none is left pending once the drains are done.
    expect(p.rowsEmbedded).toBe(p.rowsWritten);
    expect(p.pendingAfter).toBe(0);
    // Each row's vector was committed once: any second embedding of a row was refused as stale.
    expect(p.staleCommits).toBe(p.extraEmbedCalls);
    // Each worker attempted 4 passes; a pass ran holding the agent's lease or found it held, never two at once.
    expect(p.maintenance.attempts).toBe(4 * p.workers);
    expect(p.maintenance.ran).toBeGreaterThan(0);
    expect(p.maintenance.leases).toBe(p.maintenance.ran);
    expect(p.maintenance.overlapping).toBe(0);
  }
  expect(formatWorkersLines(report).join('\n')).toMatch(/^2 +80 /m);
}

describe('the many-workers bench scenario', () => {
  it('counts rows embedded twice and leases held at once', () => {
    expect(doubleEmbeddings([['w0n0', 'w0n1'], ['w1n0']])).toEqual({
      rows: 3,
      doubles: 0,
      acrossWorkers: 0,
      extraCalls: 0,
    });
    expect(doubleEmbeddings([['w0n0', 'w0n0'], ['w0n1'], ['w0n1']])).toEqual({
      rows: 2,
      doubles: 2,
      acrossWorkers: 1,
      extraCalls: 2,
    });
    const lease = (agentId: string, start: number, end: number) => ({
      agentId,
      start: String(start),
      end: String(end),
    });
    expect(overlappingLeases([lease('a', 0, 10), lease('a', 10, 20), lease('b', 5, 15)])).toBe(0);
    expect(overlappingLeases([lease('a', 0, 10), lease('a', 9, 20), lease('a', 1, 2)])).toBe(2);
  });

  it('two workers on one SQLite file: no double embedding, no lost row, none pending, one pass at a time', async () => {
    const report = await run({ kind: 'sqlite' });
    expectInvariants(report);
    // The composition root's SQLite store claims the rows its drain lists, as on PostgreSQL.
    for (const p of report.phases) {
      expect(p.doubleEmbeddings).toBe(0);
      expect(p.extraEmbedCalls).toBe(0);
    }
  }, 180_000);

  describe('on PostgreSQL', () => {
    let server: TestPostgres;
    beforeAll(async () => {
      server = await startTestPostgres({ database: 'engram_test_eval_workers' });
      await resetTestPostgres(server.url);
    }, 60_000);
    afterAll(async () => {
      await server?.stop();
    });

    it('two workers on one database: no double embedding, no lost row, none pending, one pass at a time', async () => {
      const report = await run({ kind: 'postgres', url: server.url });
      expectInvariants(report);
      // The composition root's store claims the rows its drain lists: no row is embedded by two workers.
      for (const p of report.phases) {
        expect(p.doubleEmbeddings).toBe(0);
        expect(p.extraEmbedCalls).toBe(0);
      }
    }, 240_000);
  });
});
