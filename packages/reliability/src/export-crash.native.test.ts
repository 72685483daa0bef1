/**
 * Export crash campaign: a child process exports a store file (thousands of records) to a file and is killed
 * with SIGKILL at a seeded random point of the stream. After every kill the store file is reopened — its
 * integrity holds and it holds exactly what it held before — and what the export had written is imported into
 * a fresh store: a cut file is refused as truncated and that store stays empty; a finished one imports whole.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ExportRecord } from '@engram/store';
import { parseExportLine } from '@engram/store/port-kit';
import { createSqliteMemoryStore } from '@engram/store-sqlite';
import { afterAll, describe, expect, it } from 'vitest';
import { createPrng, type LineChild, spawnChild, suiteSeed } from './harness.js';

const RUNS = 20;
const SEED = suiteSeed(0x5e_c0_11);
const MEMORIES = 2_000;
const dir = mkdtempSync(join(tmpdir(), 'engram-export-crash-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function counts(path: string): Promise<{ memories: number; events: number; integrity: string }> {
  const store = createSqliteMemoryStore({ path, embedding: null });
  try {
    const health = await store.health('notes');
    if (!health.ok) throw new Error(`health failed: ${health.code}`);
    return {
      memories: health.health.totals.memories,
      events: health.health.totals.events,
      integrity: (await store.checkIntegrity()).state,
    };
  } finally {
    store.close();
  }
}

/** Imports what an export file holds into a fresh store: the store's error code, or null and the count. */
async function importFile(file: string, target: string): Promise<{ code: string | null; memories: number }> {
  const lines = readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.length > 0);
  const store = createSqliteMemoryStore({ path: target, embedding: null });
  let code: string | null = null;
  try {
    // A line cut by the kill is not JSON: the file ends at the last whole line, as a reader would stop there.
    const whole: ExportRecord[] = [];
    for (const [i, line] of lines.entries()) {
      try {
        whole.push(parseExportLine(line, i + 1));
      } catch {
        break;
      }
    }
    await store.importRecords(whole);
  } catch (err) {
    code = (err as { code?: string }).code ?? 'unknown';
  }
  try {
    const health = await store.health('notes');
    return { code, memories: health.ok ? health.health.totals.memories : -1 };
  } finally {
    store.close();
  }
}

describe('export crash campaign (kill -9 at random points)', () => {
  it(`leaves the store as it was, and a cut export imports nothing (${RUNS} runs)`, async () => {
    const source = join(dir, 'source.db');
    const store = createSqliteMemoryStore({ path: source, embedding: null });
    for (let b = 0; b < MEMORIES / 500; b += 1) {
      await store.insertMemories(
        Array.from({ length: 500 }, (_, i) => ({
          agentId: 'notes',
          kind: 'semantic' as const,
          content: `note ${b * 500 + i} about the harbour and its boats`,
        })),
      );
    }
    await store.appendEvents(
      'notes',
      's1',
      Array.from({ length: 200 }, (_, i) => ({
        seq: i + 1,
        type: 'message' as const,
        role: 'user',
        content: `e${i}`,
      })),
    );
    store.close();
    const before = await counts(source);
    const reports = Math.floor((MEMORIES + 200) / 200) + 1;
    const prng = createPrng(SEED);
    const outcomes = { cut: 0, whole: 0 };
    for (let run = 0; run < RUNS; run += 1) {
      const file = join(dir, `export-${run}.jsonl`);
      // Killed at the k-th report: part-way through the stream, or (k = reports) after the end record.
      // The first run is killed at the first report and the last after the end, so both outcomes are always
      // exercised; the others at a seeded random report.
      const k = run === 0 ? 1 : run === RUNS - 1 ? reports : 1 + prng.int(reports);
      const child: LineChild = spawnChild('export-crash-child', [source, file]);
      let seen = 0;
      child.onLine((line) => {
        if (line.t === 'P' || line.t === 'done') seen += 1;
        if (seen >= k) child.process.kill('SIGKILL');
      });
      const exit = await child.exited;
      expect(
        child.lines.filter((l) => l.t === 'E'),
        `run ${run}: ${exit.stderr}`,
      ).toEqual([]);
      expect(await counts(source), `run ${run}: the store is as it was`).toEqual(before);
      const target = join(dir, `target-${run}.db`);
      const imported = await importFile(file, target);
      if (imported.code === null) {
        expect(imported.memories, `run ${run}: a finished export imports whole`).toBe(before.memories);
        outcomes.whole += 1;
      } else {
        expect(imported.code, `run ${run}`).toBe('ENGRAM_STORE_INVALID_INPUT');
        expect(imported.memories, `run ${run}: a cut export imports nothing`).toBe(0);
        outcomes.cut += 1;
      }
      for (const f of [file, target, `${target}-wal`, `${target}-shm`]) rmSync(f, { force: true });
    }
    expect(outcomes.cut).toBeGreaterThan(0);
    expect(outcomes.whole).toBeGreaterThan(0);
  }, 600_000);
});
