/**
 * A maintenance dry run over a real SQLite file, as a user sees it: it lists what would be archived and the
 * file stays byte for byte unchanged. (Moved from @engram/maintenance's safe-maintenance suite, whose store is
 * now PostgreSQL on PGlite: this one is about the SQLite file itself.)
 */
import { readFileSync } from 'node:fs';
import type { MaintenancePassReport } from '@engram/contracts';
import { createMaintenanceRunner } from '@engram/maintenance';
import { createSqliteMemoryStore } from '@engram/store-sqlite';
import { afterEach, describe, expect, it } from 'vitest';
import { createFakeTime, createScriptedModel, openTempStore, type TempStore } from './maintenance-support.js';

const DAY = 24 * 60 * 60 * 1000;

let open: TempStore[] = [];
afterEach(() => {
  for (const t of open) t.close();
  open = [];
});

describe('safe maintenance', () => {
  it('a dry run lists what would be archived and leaves the file byte for byte unchanged', async () => {
    const time = createFakeTime(1_800_000_000_000);
    const t = openTempStore({ now: time.clock.now });
    open.push(t);
    const now = time.clock.now();
    const [stale, fresh] = await t.store.insertMemories([
      { agentId: 'a', kind: 'semantic', content: 'an old note nobody reads', importance: 0, createdAt: now },
      { agentId: 'a', kind: 'semantic', content: 'a note read last week', importance: 0, createdAt: now },
    ]);
    time.advance(200 * DAY);
    await t.store.recordAccess('a', [fresh?.id ?? ''], time.clock.now() - 7 * DAY);
    t.store.close();
    const before = readFileSync(t.path);
    const store = createSqliteMemoryStore({ path: t.path, now: time.clock.now });
    const observed: MaintenancePassReport[] = [];
    const runner = createMaintenanceRunner({
      store,
      clock: time.clock,
      model: createScriptedModel(),
      observer: { onMaintenancePass: (r) => observed.push(r) },
    });
    const result = await runner.run('a', { dryRun: true });
    expect(result.details?.dryRun).toBe(true);
    expect(result.details?.plan.map((p) => [p.id, p.kind, p.ageDays])).toEqual([
      [stale?.id, 'semantic', 200],
    ]);
    expect(result.report?.cheap.archived).toBe(1);
    // The heavy phase needs the model's answers: a dry run never asks.
    expect(result.report?.heavy.outcome).toBe('skipped');
    expect(observed).toEqual([]);
    expect((await store.getMemory('a', stale?.id ?? ''))?.lifecycle).toBe('active');
    store.close();
    expect(readFileSync(t.path).equals(before)).toBe(true);
  });
});
