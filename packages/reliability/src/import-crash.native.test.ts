/**
 * Import crash campaign: a child process imports an export file (thousands of records: memories, events, a
 * cursor, history) into a store file that already holds another agent's memories, and is killed with SIGKILL at a
 * seeded random progress report, or once the import resolved (after its COMMIT). After every kill the file is
 * reopened and checked: its integrity holds, the other agent's memories are untouched, and the import is either
 * wholly absent or wholly present — never in between.
 */
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ExportRecord } from '@engram/store';
import { formatExportLine } from '@engram/store/port-kit';
import { createSqliteMemoryStore } from '@engram/store-sqlite';
import { afterAll, describe, expect, it } from 'vitest';
import { createPrng, type LineChild, spawnChild, suiteSeed } from './harness.js';

const RUNS = 24;
const SEED = suiteSeed(0x1a90_47c1);
const MEMORIES = 2_000;
const EVENTS = 300;
const dir = mkdtempSync(join(tmpdir(), 'engram-import-crash-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The source export: one agent's memories (some facts superseded, so history rows), events and a cursor. */
async function writeExport(file: string): Promise<number> {
  const source = createSqliteMemoryStore({ path: join(dir, 'source.db'), embedding: null });
  try {
    for (let b = 0; b < MEMORIES / 500; b += 1) {
      await source.insertMemories(
        Array.from({ length: 500 }, (_, i) => ({
          agentId: 'restored',
          kind: 'semantic' as const,
          content: `restored note ${b * 500 + i} about the harbour and its boats`,
        })),
      );
    }
    for (let i = 0; i < 20; i += 1) {
      const f = await source.insertMemory({ agentId: 'restored', kind: 'fact', content: `fact ${i} v0` });
      await source.supersedeMemory('restored', f.id, f.revision, {
        agentId: 'restored',
        kind: 'fact',
        content: `fact ${i} v1`,
      });
    }
    await source.appendEvents(
      'restored',
      's1',
      Array.from({ length: EVENTS }, (_, i) => ({
        seq: i + 1,
        type: 'message' as const,
        role: 'user',
        content: `event ${i}`,
      })),
    );
    const lines: string[] = [];
    for await (const r of source.exportRecords()) lines.push(formatExportLine(r as ExportRecord));
    writeFileSync(file, `${lines.join('\n')}\n`);
    return lines.length;
  } finally {
    source.close();
  }
}

interface TargetState {
  readonly restored: number;
  readonly events: number;
  readonly base: readonly string[];
  readonly integrity: string;
}

async function inspect(path: string): Promise<TargetState> {
  const store = createSqliteMemoryStore({ path, embedding: null });
  try {
    const all = async (agent: string): Promise<string[]> => {
      const ids: string[] = [];
      for (;;) {
        const page = await store.listMemories(agent, {
          limit: 500,
          lifecycles: ['active', 'archived', 'superseded'],
          ...(ids.length === 0 ? {} : { afterId: ids[ids.length - 1] }),
        });
        ids.push(...page.map((r) => r.id));
        if (page.length < 500) return ids;
      }
    };
    const health = await store.health('restored');
    if (!health.ok) throw new Error(`health failed: ${health.code}`);
    return {
      restored: (await all('restored')).length,
      events: health.health.totals.events,
      base: await all('base'),
      integrity: (await store.checkIntegrity()).state,
    };
  } finally {
    store.close();
  }
}

describe('import crash campaign (kill -9 at random points)', () => {
  it(`leaves the target unchanged or complete, never in between (${RUNS} runs)`, async () => {
    const exportFile = join(dir, 'export.jsonl');
    const lines = await writeExport(exportFile);
    const basePath = join(dir, 'base.db');
    const base = createSqliteMemoryStore({ path: basePath, embedding: null });
    await base.insertMemories(
      Array.from({ length: 50 }, (_, i) => ({
        agentId: 'base',
        kind: 'semantic' as const,
        content: `base note ${i}`,
      })),
    );
    base.close();
    const before = await inspect(basePath);
    expect(before.restored).toBe(0);
    const reports = Math.floor(lines / 256) + 1;
    const prng = createPrng(SEED);
    const outcomes = { unchanged: 0, complete: 0 };
    for (let run = 0; run < RUNS; run += 1) {
      const target = join(dir, `target-${run}.db`);
      copyFileSync(basePath, target);
      // Killed on the k-th line of progress: a report, inside the transaction (the last report comes before the
      // COMMIT), or (k = reports + 1) the import's resolution, after its COMMIT. The first run is killed at the
      // first report and the last after the end, so both outcomes are always exercised; the others at a seeded
      // random line.
      const k = run === 0 ? 1 : run === RUNS - 1 ? reports + 1 : 1 + prng.int(reports + 1);
      const child: LineChild = spawnChild('import-crash-child', [target, exportFile]);
      let seen = 0;
      child.onLine((line) => {
        if (line.t === 'P' || line.t === 'done') seen += 1;
        if (seen >= k) child.process.kill('SIGKILL');
      });
      const exit = await child.exited;
      const errors = child.lines.filter((l) => l.t === 'E');
      expect(errors, `run ${run}: ${exit.stderr}`).toEqual([]);
      const after = await inspect(target);
      expect(after.integrity, `run ${run}`).toBe('ok');
      expect(after.base, `run ${run}: the other agent is untouched`).toEqual(before.base);
      if (after.restored === 0) {
        expect(after.events, `run ${run}: no event without its memories`).toBe(0);
        outcomes.unchanged += 1;
      } else {
        expect(after.restored, `run ${run}: all or nothing`).toBe(MEMORIES + 40);
        expect(after.events, `run ${run}`).toBe(EVENTS);
        outcomes.complete += 1;
      }
      rmSync(target, { force: true });
      rmSync(`${target}-wal`, { force: true });
      rmSync(`${target}-shm`, { force: true });
    }
    // Both ends were reached: kills inside the transaction and after it.
    expect(outcomes.unchanged).toBeGreaterThan(0);
    expect(outcomes.complete).toBeGreaterThan(0);
  }, 600_000);
});
