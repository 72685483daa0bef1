/**
 * Safe maintenance over a real store, as a user sees it: imported history is not archived on its first pass,
 * a pass that archives many rows says how many and whether it saw them all, archived rows stay findable on
 * request, and a merge leaves nothing half-done (every source superseded with lineage, the merged row embedded
 * in the same pass). The store is PostgreSQL on PGlite; that a dry run changes no byte of a SQLite file is
 * shown in @engram/reliability's maintenance-dry-run.native.test.ts.
 */
import type { MaintenancePassReport } from '@engram/contracts';
import { createRetriever } from '@engram/retrieval';
import type { NewMemory } from '@engram/store';
import { afterEach, describe, expect, it } from 'vitest';
import { createEmbeddingDrain } from './drain.js';
import { createEventIngestor } from './ingest.js';
import { createMaintenanceRunner } from './maintenance.js';
import { createFakeTime } from './test-support/fake-time.js';
import { openTempStore, type TempStore } from './test-support/native.js';
import { createScriptedModel } from './test-support/scripted-model.js';

const DAY = 24 * 60 * 60 * 1000;

let open: TempStore[] = [];
afterEach(async () => {
  for (const t of open) await t.close();
  open = [];
});

async function setup() {
  const time = createFakeTime(1_800_000_000_000);
  const t = await openTempStore({ now: time.clock.now });
  open.push(t);
  const retriever = createRetriever({ store: t.store, embedder: t.embedder, now: time.clock.now });
  return { ...t, time, retriever };
}

describe('safe maintenance', () => {
  it('imported history ages from its import: a pass right after importing 14-month-old events archives none', async () => {
    const { store, time, embedder } = await setup();
    // The ranking check below must not touch the rows: access recorded by the search would make ten of them
    // recently used, which no decay policy archives (whether that deferred write lands before the pass depends
    // on the adapter's timing).
    const retriever = createRetriever({ store, embedder, now: time.clock.now, trackAccess: false });
    const ingestor = createEventIngestor({ store });
    const old = time.clock.now() - 425 * DAY;
    const events = Array.from({ length: 30 }, (_, i) => ({
      seq: i + 1,
      type: 'tool_call' as const,
      role: 'assistant',
      content: `edited the file number ${i}`,
      toolName: 'edit',
      metadata: { path: `src/file-${i}.ts` },
      createdAt: old + i,
    }));
    await ingestor.appendAndIngest('a', 's1', events);
    const rows = await store.listMemories('a', { kinds: ['event'], limit: 100 });
    expect(rows).toHaveLength(30);
    // The original timestamp is kept; the import time is recorded beside it.
    expect(rows[0]?.createdAt).toBeLessThan(time.clock.now() - 400 * DAY);
    expect(rows[0]?.updatedAt).toBe(time.clock.now());

    // Ranking still sees its age: an imported row is not "recent" because it was written today.
    const hit = (await retriever.search('a', 'edited the file number 3')).results[0];
    expect(hit?.explanation.recency).toBeLessThan(0.01);
    const runner = createMaintenanceRunner({ store, clock: time.clock });
    const first = await runner.run('a');
    expect(first.report?.cheap.archived).toBe(0);
    expect(first.details?.archive).toEqual({ archived: 0, scanned: 30, complete: true });

    // The policy that ages imported history from its original timestamps archives them all at once…
    const byOriginal = createMaintenanceRunner({ store, clock: time.clock, decay: { ageFrom: 'created' } });
    const plan = await byOriginal.run('a', { dryRun: true });
    expect(plan.details?.plan).toHaveLength(30);
    // …and with the default policy they age like new rows: still kept after 60 days, archived after 200.
    time.advance(60 * DAY);
    expect((await runner.run('a')).report?.cheap.archived).toBe(0);
    time.advance(140 * DAY);
    expect((await runner.run('a')).report?.cheap.archived).toBe(30);
  });

  it('a pass that archives many rows says how many and that more remain; the next pass finishes', async () => {
    const { store, time } = await setup();
    const now = time.clock.now();
    const rows: NewMemory[] = Array.from({ length: 120 }, (_, i) => ({
      agentId: 'a',
      kind: 'semantic',
      content: `stale note ${i}`,
      importance: 0,
      createdAt: now - 300 * DAY,
    }));
    await store.insertMemories(rows);
    time.advance(300 * DAY);
    const runner = createMaintenanceRunner({ store, clock: time.clock, maxScanPerPass: 100 });
    const first = await runner.run('a');
    expect(first.report?.cheap.archived).toBe(100);
    expect(first.details?.archive).toEqual({ archived: 100, scanned: 100, complete: false });
    const second = await runner.run('a');
    expect(second.details?.archive).toEqual({ archived: 20, scanned: 20, complete: true });
    expect(await store.listMemories('a', { lifecycles: ['active'], limit: 1000 })).toHaveLength(0);
  });

  it('archived rows are found again with includeArchived, and only then', async () => {
    const { store, time, retriever, embedder } = await setup();
    const [row] = await store.insertMemories([
      {
        agentId: 'a',
        kind: 'event',
        content: 'tool edit src/server/routes.ts',
        importance: 0,
        tags: ['file:src/server/routes.ts'],
      },
    ]);
    await createEmbeddingDrain({ store, embedder }).run();
    time.advance(300 * DAY);
    const pass = await createMaintenanceRunner({ store, clock: time.clock }).run('a');
    expect(pass.report?.cheap.archived).toBe(1);
    const plain = await retriever.search('a', 'src/server/routes.ts');
    expect(plain.results).toHaveLength(0);
    const withArchived = await retriever.search('a', 'src/server/routes.ts', { includeArchived: true });
    expect(withArchived.results.map((r) => [r.record.id, r.record.lifecycle])).toEqual([
      [row?.id, 'archived'],
    ]);
  });

  it('a merge of three near-duplicates supersedes all three with lineage and embeds the merged row in the same pass', async () => {
    const { store, time, retriever, embedder } = await setup();
    const texts = [
      'The staging database is backed up every night at two',
      'The staging database gets backed up every night at two',
      'The staging database is backed up each night at two',
    ];
    const sources = await store.insertMemories(
      texts.map((content) => ({ agentId: 'a', kind: 'semantic', content })),
    );
    const drain = createEmbeddingDrain({ store, embedder });
    await drain.run();
    const shown: string[][] = [];
    const model = createScriptedModel({
      memory_merge: [
        ({ messages }) => {
          shown.push(
            Object.values(JSON.parse(messages[1]?.content ?? '{}') as Record<string, string>).sort(),
          );
          return JSON.stringify({
            merge: true,
            content: 'The staging database is backed up every night at 2',
          });
        },
      ],
    });
    const runner = createMaintenanceRunner({
      store,
      retriever,
      model,
      drain,
      clock: time.clock,
      reflection: { importanceThreshold: 100 },
    });
    const { report, details } = await runner.run('a');
    expect(report?.heavy.steps.merge).toBe('completed');
    expect(shown).toEqual([[...texts].sort()]);
    const [merged] = await store.listMemories('a', { tags: ['source:merge'], limit: 10 });
    expect(merged?.embeddingState).toBe('ready');
    for (const s of sources) {
      expect(await store.getMemory('a', s.id)).toMatchObject({
        lifecycle: 'superseded',
        supersededBy: merged?.id,
      });
    }
    expect(details?.written).toEqual({ rows: 1, embedded: 1, pending: 0 });
    expect((await store.countEmbeddingBacklog()).total).toBe(0);
    // Found by the vector arm at once: no drain run is needed after the pass.
    const found = await retriever.search('a', 'staging database backup at night');
    expect(found.results[0]?.record.id).toBe(merged?.id);
    expect(found.results[0]?.explanation.arms).toContain('vector');
  });

  it('an invalid model answer names its schema and the failing field, never the text', async () => {
    const { store, time, retriever } = await setup();
    await store.insertMemory({
      agentId: 'a',
      kind: 'fact',
      content: 'The user works on the billing service',
    });
    const observed: MaintenancePassReport[] = [];
    const model = createScriptedModel({
      memory_persona: ['{"persona":"SECRET-PERSONA-TEXT","mood":"SECRET-KEY-NAME"}'],
    });
    const runner = createMaintenanceRunner({
      store,
      retriever,
      model,
      clock: time.clock,
      observer: { onMaintenancePass: (r) => observed.push(r) },
    });
    const { report, details } = await runner.run('a');
    expect(report?.heavy).toMatchObject({
      steps: { persona: 'failed' },
      invalidOutputs: 1,
      invalidBySchema: { memory_persona: 1 },
    });
    expect(details?.invalidOutputs).toEqual([
      { schema: 'memory_persona', path: '', issue: 'unrecognized_keys' },
    ]);
    expect(JSON.stringify([report, details, observed])).not.toContain('SECRET');
    expect(observed[0]?.heavy.invalidBySchema).toEqual({ memory_persona: 1 });
  });
});
